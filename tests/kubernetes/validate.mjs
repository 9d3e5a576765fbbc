// Checks Kubernetes manifests against the API's own schemas, with no cluster, in two ways:
// 1. kubernetes-models validates each object against the JSON schema generated from Kubernetes'
//    OpenAPI document (field types, required fields, enumerations). Those schemas accept fields
//    they do not know, as the API server's non-strict decoding does: a misspelt field would pass
//    and be dropped by a cluster without a word.
// 2. So each object is also type-checked as a TypeScript object literal of the kind's interface
//    (kubernetes-models' declarations, generated from the same document): TypeScript refuses a
//    property an object literal's type does not declare, at every depth, as `kubectl apply
//    --validate=strict` would.
// kubectl's client-side validation would need an API server to download the document from.
// Usage: node validate.mjs FILE.yaml ...
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { parseAllDocuments } from "yaml";

// The kinds deploy/kubernetes uses, by apiVersion/kind: the module, its model class and its
// interface.
const kinds = {
  "v1/ConfigMap": ["kubernetes-models/v1/ConfigMap", "ConfigMap", "IConfigMap"],
  "v1/Service": ["kubernetes-models/v1/Service", "Service", "IService"],
  "v1/PersistentVolumeClaim": [
    "kubernetes-models/v1/PersistentVolumeClaim",
    "PersistentVolumeClaim",
    "IPersistentVolumeClaim",
  ],
  "apps/v1/Deployment": ["kubernetes-models/apps/v1/Deployment", "Deployment", "IDeployment"],
  "batch/v1/Job": ["kubernetes-models/batch/v1/Job", "Job", "IJob"],
};

// Type-checks every object as a literal of its kind's interface; returns one message per finding,
// naming the object.
function unknownFields(objects) {
  const lines = objects.map(({ kind }, i) => `import type { ${kinds[kind][2]} as T${i} } from "${kinds[kind][0]}";`);
  const firstLine = [];
  objects.forEach(({ object }, i) => {
    firstLine.push(lines.length);
    lines.push(...`export const object${i}: T${i} = ${JSON.stringify(object, null, 2)};`.split("\n"));
  });
  // A file that is not on disk, where the module resolution finds this folder's node_modules.
  const path = join(dirname(fileURLToPath(import.meta.url)), "manifests-as-literals.mts");
  const text = lines.join("\n");
  const options = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) =>
    file === path ? ts.createSourceFile(file, text, language) : getSourceFile(file, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => file === path || fileExists(file);
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => (file === path ? text : readFile(file));
  const program = ts.createProgram([path], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, " ");
    if (d.file?.fileName !== path) return `the check itself: ${message}`;
    const line = d.file.getLineAndCharacterOfPosition(d.start).line;
    let i = firstLine.length - 1;
    while (i > 0 && firstLine[i] > line) i--;
    return `${objects[i].name}: ${message}`;
  });
}

const objects = [];
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
    if (!kinds[kind]) {
      console.log(`${name}: no schema for this kind here (add it to validate.mjs)`);
      invalid++;
      continue;
    }
    try {
      const [module, model] = kinds[kind];
      const Model = (await import(module))[model];
      new Model(object).validate();
      objects.push({ kind, name, object });
    } catch (e) {
      console.log(`${name}: ${e.message}`);
      invalid++;
    }
  }
}
const findings = objects.length ? unknownFields(objects) : [];
for (const finding of findings) console.log(finding);
for (const { name } of objects) {
  if (!findings.some((f) => f.startsWith(`${name}:`))) console.log(`${name}: valid`);
}
process.exit(invalid || findings.length ? 1 : 0);
