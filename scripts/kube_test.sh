#!/usr/bin/env bash
# The Kubernetes manifests in deploy/kubernetes, checked against the API's schemas offline, then
# played with podman (Debian's 4.3: Pods, Deployments, ConfigMaps, PersistentVolumeClaims; no
# cluster here):
#   1. vehicle.yaml: the Deployment comes up, /healthz answers, the host's engine feeds the bumper
#      VLP-16 through its hit port and its packets decode; the memory request covers the daemon's
#      own estimate; `podman kube down` removes it.
#   2. dataset-job.yaml: the Job's pod (podman 4.3 plays no Job: its template becomes a Pod)
#      replays a recording made here into the daemon and exits 0; the pcap it wrote into its
#      volume decodes to the recorded frames, and the export holds its frames.
# A failed step prints the pod's logs. Needs root, the image scripts/container_test.sh built
# (localhost/lidaremu:ci) and the host's build (build/daemon, build/clients). CI runs it after
# the container test. Usage: scripts/kube_test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
manifests=$repo/deploy/kubernetes
work=/tmp/lidaremu-kube
rm -rf "$work" && mkdir -p "$work"
start_all=$(date +%s)
fail() {
  echo "kube: FAIL: $*" >&2
  for c in $(podman ps -a --filter label=app.kubernetes.io/name=lidaremu --format '{{.Names}}' 2>/dev/null); do
    echo "--- podman logs $c" >&2
    podman --runtime runc logs "$c" 2>&1 | grep -v -e '_bucket' -e '^# ' | tail -30 >&2 || true
  done
  exit 1
}
cleanup() {
  pod kube down "$manifests/vehicle.yaml" >/dev/null 2>&1 || true
  if [[ -f $work/dataset-pod.yaml ]]; then pod kube down "$work/dataset-pod.yaml" >/dev/null 2>&1 || true; fi
  # kube down leaves volumes: the claims' and the ones podman made for the ConfigMaps.
  pod volume rm -f lidaremu-recordings lidaremu-datasets lidaremu-vehicle lidaremu-dataset \
    >/dev/null 2>&1 || true
  if [[ -n ${host_daemon:-} ]]; then kill "$host_daemon" 2>/dev/null || true; fi
}
trap cleanup EXIT

# Tools, from Debian (catatonit: the pods' infra container; python3-yaml: the Job's template).
source scripts/podman_env.sh podman runc catatonit curl python3-yaml
cleanup  # what an interrupted run left
pod image exists localhost/lidaremu:ci || fail "no image localhost/lidaremu:ci: run scripts/container_test.sh first"
# The manifests name the image as a registry would hold it; here it is the one CI built.
image=$(awk '$1 == "image:" { print $2; exit }' "$manifests/vehicle.yaml")
pod tag localhost/lidaremu:ci "$image"

# 0. The manifests against the Kubernetes API's schemas, offline, unknown fields refused
# (tests/kubernetes/validate.mjs; kubectl's client-side check needs an API server to fetch the
# schema from).
(cd tests/kubernetes && npm ci --no-audit --no-fund --loglevel=error >"$work/npm.log" 2>&1) \
  || fail "npm ci in tests/kubernetes: $(tail -5 "$work/npm.log")"
node tests/kubernetes/validate.mjs "$manifests"/*.yaml >"$work/schema.log" 2>&1 \
  || fail "the manifests do not match the Kubernetes schemas: $(grep -v ': valid$' "$work/schema.log")"
echo "kube: $(grep -c ': valid$' "$work/schema.log") objects match the Kubernetes API's schemas, no field unknown"
# The check refuses what a cluster would silently drop: a misspelt field deep in the Deployment.
sed 's/imagePullPolicy:/imagePulPolicy:/' "$manifests/vehicle.yaml" >"$work/misspelt.yaml"
grep -q imagePulPolicy "$work/misspelt.yaml" || fail "vehicle.yaml has no imagePullPolicy to misspell"
if node tests/kubernetes/validate.mjs "$work/misspelt.yaml" >"$work/misspelt.log" 2>&1; then
  fail "the schema check passed a misspelt field (imagePulPolicy)"
fi
grep -q "Deployment lidaremu-vehicle: .*imagePulPolicy" "$work/misspelt.log" \
  || fail "the schema check did not name the misspelt field: $(cat "$work/misspelt.log")"
echo "kube: a misspelt field (imagePulPolicy) is refused, named"

# 1. One daemon per vehicle.
for port in 9880 9870 9871; do
  ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || fail "port $port is taken on this host"
done
pod kube play --replace "$manifests/vehicle.yaml" >"$work/play.log" 2>&1 \
  || fail "podman kube play vehicle.yaml: $(tail -5 "$work/play.log")"
for _ in $(seq 100); do
  curl -fsS http://127.0.0.1:9880/healthz >/dev/null 2>&1 && break
  sleep 0.2
done
answer=$(curl -fsS http://127.0.0.1:9880/healthz) || fail "the vehicle pod's /healthz does not answer"
echo "kube: vehicle pod up, /healthz -> $answer"
# Podman runs the Deployment's liveness probe as the container's health check.
pod healthcheck run lidaremu-vehicle-pod-0-lidaremud >/dev/null 2>&1 \
  || fail "the Deployment's liveness probe fails in its pod"
echo "kube: the liveness probe (GET /healthz) passes"
# The memory request covers what the daemon says its sensors need.
estimate=$(curl -fsS http://127.0.0.1:9880/api/v1/sensors |
  python3 -c 'import json, sys; print(sum(s["memory_estimate_mib"] for s in json.load(sys.stdin)))')
request=$(python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Deployment":
        print(d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"].rstrip("Mi"))' \
  "$manifests/vehicle.yaml")
((request >= estimate)) || fail "the Deployment requests ${request}Mi, the daemon estimates ${estimate} MiB"
echo "kube: memory request ${request}Mi covers the daemon's estimate of ${estimate} MiB"
"$repo/build/clients/lidaremu-inspect" --model vlp16 --port 2368 --duration 8 --frames 8 \
  >"$work/inspect.log" 2>&1 &
inspector=$!
sleep 0.5
"$repo/build/clients/lidaremu-scene" --model vlp16 --sensor-id 1 --hits udp://127.0.0.1:9871 \
  --frames 12 >"$work/scene.log" 2>&1 || fail "the scene could not send: $(cat "$work/scene.log")"
wait "$inspector" || true
frames=$(awk '/^frame/ { for (i = 1; i < NF; i++) if ($i == "points" && $(i + 1) + 0 > 1000) n++ }
              END { print n + 0 }' "$work/inspect.log")
((frames >= 5)) || fail "decoded $frames frames from the vehicle pod (expected 5 or more): $(tail -3 "$work/inspect.log")"
echo "kube: $frames frames decoded from the vehicle pod's bumper VLP-16"
pod kube down "$manifests/vehicle.yaml" >/dev/null 2>&1 || fail "podman kube down vehicle.yaml"
[[ -z $(pod ps -a -q --filter label=app.kubernetes.io/instance=vehicle) ]] \
  || fail "containers left after kube down"
echo "kube: vehicle pod removed"

# 2. The dataset Job. A recording of 10 frames of the demo scene, made by a daemon on the host.
"$repo/build/daemon/lidaremud" --model vlp16 --hits udp://127.0.0.1:29870 --out udp://127.0.0.1:29368 \
  --http off --api-port 0 --foxglove off --record "$work/recording.pcap" >"$work/host.log" 2>&1 &
host_daemon=$!
sleep 1
"$repo/build/clients/lidaremu-scene" --model vlp16 --hits udp://127.0.0.1:29870 --frames 10 \
  >"$work/scene2.log" 2>&1 || fail "the scene could not send: $(cat "$work/scene2.log")"
sleep 0.5
kill "$host_daemon" && wait "$host_daemon" || true
host_daemon=
# The claims first (podman makes each a named volume) and the recording into its volume, as a
# user would before starting the Job; then the ConfigMap and the Job's template as a Pod.
python3 - "$manifests/dataset-job.yaml" "$work/dataset-claims.yaml" "$work/dataset-pod.yaml" <<'EOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
claims = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
rest = []
for d in docs:
    if d["kind"] == "Job":
        template = d["spec"]["template"]
        rest.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": d["metadata"]["name"], "labels": template["metadata"]["labels"]},
                     "spec": template["spec"]})
    elif d["kind"] != "PersistentVolumeClaim":
        rest.append(d)
yaml.safe_dump_all(claims, open(sys.argv[2], "w"), sort_keys=False)
yaml.safe_dump_all(rest, open(sys.argv[3], "w"), sort_keys=False)
EOF
pod kube play "$work/dataset-claims.yaml" >"$work/play-claims.log" 2>&1 \
  || fail "podman kube play of the Job's claims: $(tail -5 "$work/play-claims.log")"
cp "$work/recording.pcap" "$(pod volume inspect --format '{{.Mountpoint}}' lidaremu-recordings)/recording.pcap"
started=$(date +%s)
pod kube play "$work/dataset-pod.yaml" >"$work/play2.log" 2>&1 \
  || fail "podman kube play of the Job's pod: $(tail -5 "$work/play2.log")"
status=$(timeout 120 podman --runtime runc wait lidaremu-dataset-lidaremud) || fail "the Job's pod did not finish in 120 s"
[[ $status == 0 ]] || fail "the Job's container exited $status"
echo "kube: the Job's pod replayed the recording and exited 0 in $(($(date +%s) - started)) s"
pod logs lidaremu-dataset-lidaremud >"$work/job.log" 2>&1 || true
grep -q '^lidaremu_frames_dropped_total{sensor="vlp16"} 0$' "$work/job.log" \
  || fail "the Job's daemon dropped frames: $(grep -E 'frames_(dropped|processed)_total' "$work/job.log")"
out=$(pod volume inspect --format '{{.Mountpoint}}' lidaremu-datasets)
[[ -s $out/vlp16.pcap ]] || fail "no vlp16.pcap in the datasets volume: $(ls "$out")"
"$repo/build/clients/lidaremu-inspect" --model vlp16 --port 2368 --pcap "$out/vlp16.pcap" \
  >"$work/job-inspect.log" 2>&1 || fail "the Job's pcap does not decode: $(tail -3 "$work/job-inspect.log")"
job_frames=$(awk '/^frame/ { for (i = 1; i < NF; i++) if ($i == "points" && $(i + 1) + 0 > 1000) n++ }
                  END { print n + 0 }' "$work/job-inspect.log")
# The recording's 10 frames; the decoder counts those whose start and end it saw.
((job_frames >= 8)) || fail "the Job's pcap holds $job_frames whole frames (expected 8 or more of 10)"
exported=$(find "$out/frames" -name '*.pcd' | wc -l)
((exported == 5)) || fail "the Job exported $exported PCD frames (expected 5)"
echo "kube: the Job's pcap decodes to $job_frames whole frames; $exported frames exported"
pod kube down "$work/dataset-pod.yaml" >/dev/null 2>&1 || fail "podman kube down of the Job's pod"
echo "kube: all checks passed in $(($(date +%s) - start_all)) s"
