// Checks Kubernetes manifests against the API's own schemas, with no cluster: kubernetes-models
// validates each object against the JSON schema generated from Kubernetes' OpenAPI document
// (field types, required fields, enumerations). kubectl's client-side validation would need an
// API server to download that document from. Usage: node validate.mjs FILE.yaml ...
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

// The kinds deploy/kubernetes uses, by apiVersion/kind.
const models = {
  "v1/ConfigMap": () => import("kubernetes-models/v1/ConfigMap").then((m) => m.ConfigMap),
  "v1/Service": () => import("kubernetes-models/v1/Service").then((m) => m.Service),
  "v1/PersistentVolumeClaim": () =>
    import("kubernetes-models/v1/PersistentVolumeClaim").then((m) => m.PersistentVolumeClaim),
  "apps/v1/Deployment": () => import("kubernetes-models/apps/v1/Deployment").then((m) => m.Deployment),
  "batch/v1/Job": () => import("kubernetes-models/batch/v1/Job").then((m) => m.Job),
};

let invalid = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    if (doc.errors.length) {
      console.log(`${file}: not YAML: ${doc.errors[0].message}`);
      invalid++;
      continue;
    }
    const object = doc.toJSON();
    const kind = `${object.apiVersion}/${object.kind}`;
    const name = `${file}: ${kind} ${object.metadata?.name}`;
    if (!models[kind]) {
      console.log(`${name}: no schema for this kind here (add it to validate.mjs)`);
      invalid++;
      continue;
    }
    try {
      const Model = await models[kind]();
      new Model(object).validate();
      console.log(`${name}: valid`);
    } catch (e) {
      console.log(`${name}: ${e.message}`);
      invalid++;
    }
  }
}
process.exit(invalid ? 1 : 0);
