#!/usr/bin/env bash
# The main job: install, build, start lidaremud for a sensor, feed it the built-in demo scene
# for a few seconds, decode what it emitted and print a per-frame summary; then the same scene
# in rain (DEMO_RAIN mm/h, default 100), and a bird's-eye PNG of one decoded frame, dry next to
# rainy (in $DEMO_OUT, default build/demo; DEMO_EXTENT metres to the picture's edge, default 65).
#   scripts/demo.sh                 VLP-16
#   scripts/demo.sh vls128          any model of `lidaremud --help`
#   scripts/demo.sh os1-64          Ouster OS1-64 (1024x10, LEGACY)
#   scripts/demo.sh livox-mid360    Livox Mid-360 (--scan-pattern FILE, or the test pattern)
#   scripts/demo.sh os0-128 --mode 2048x10 --profile rng19
#                                   further arguments go to lidaremud (--mode and --rpm to the
#                                   scene too)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-vlp16}
shift || true
extra=("$@")
source scripts/scene_args.sh "${extra[@]}"
seconds=${DEMO_SECONDS:-4}
bash scripts/setup.sh
bash scripts/build.sh
bin=build
out=${DEMO_OUT:-build/demo}
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# Frame 1 of each run is exported (PCD with ground-truth object ids): the same engine input, dry
# and in rain.
common_args=(--model "$model" --hits udp://127.0.0.1:9870 --pace realtime --export-frames 1
  "${extra[@]}")
daemon_args=("${common_args[@]}" --duration $((seconds + 2)) --export "$work/dry")
inspect_args=(--model "$model" --duration $((seconds + 1)))
if [[ $model == os* ]]; then
  daemon_args+=(--metadata-out "$work/metadata.json")
  inspect_args+=(--metadata "$work/metadata.json")
fi

echo "== lidaremud ${daemon_args[*]}"
"$bin/daemon/lidaremud" "${daemon_args[@]}" >"$work/daemon.out" 2>"$work/daemon.err" &
daemon=$!
for _ in $(seq 50); do grep -q " hits " "$work/daemon.out" 2>/dev/null && break; sleep 0.1; done
head -1 "$work/daemon.out"
echo "== lidaremu-inspect ${inspect_args[*]}"
"$bin/clients/lidaremu-inspect" "${inspect_args[@]}" &
inspect=$!
sleep 0.3
echo "== lidaremu-scene --model $model ${scene_args[*]} --duration $seconds"
"$bin/clients/lidaremu-scene" --model "$model" "${scene_args[@]}" --duration "$seconds"
wait "$inspect"
wait "$daemon"
echo "== lidaremud counters (non-zero)"
grep '^lidaremu_' "$work/daemon.out" | grep -v ' 0$'
if [[ -s $work/daemon.err ]]; then echo "== lidaremud log"; cat "$work/daemon.err"; fi

rain_rate=${DEMO_RAIN:-100}
echo "== the same scene in rain ($rain_rate mm/h): lidaremud --rain $rain_rate"
rain_args=("${common_args[@]}" --duration 3 --export "$work/rain" --rain "$rain_rate" --http off
  --foxglove off)
if [[ $model == os* ]]; then rain_args+=(--metadata-out "$work/metadata.json"); fi
"$bin/daemon/lidaremud" "${rain_args[@]}" >"$work/rain.out" 2>"$work/rain.err" &
rain=$!
for _ in $(seq 50); do grep -q " hits " "$work/rain.out" 2>/dev/null && break; sleep 0.1; done
"$bin/clients/lidaremu-scene" --model "$model" "${scene_args[@]}" --frames 5 >/dev/null
wait "$rain"
dry_pcd=$(ls "$work"/dry/*.pcd | head -1)
rain_pcd=$(ls "$work"/rain/*.pcd | head -1)
cp "$dry_pcd" "$out/$model-dry.pcd"
cp "$rain_pcd" "$out/$model-rain.pcd"
echo "== bird's-eye pictures (reflectivity: blue low, green, yellow, red retroreflective)"
"$bin/clients/lidaremu-render" "$out/$model-dry.pcd" -o "$out/$model-dry.png"
"$bin/clients/lidaremu-render" "$out/$model-rain.pcd" -o "$out/$model-rain.png"
"$bin/clients/lidaremu-render" "$out/$model-dry.pcd" "$out/$model-rain.pcd" \
  -o "$out/$model-dry-vs-rain.png" --extent "${DEMO_EXTENT:-65}"
echo "demo: pictures in $out: $model-dry.png, $model-rain.png, side by side $model-dry-vs-rain.png"
echo "demo: for the live view, run: bash scripts/view.sh $model  (then open http://127.0.0.1:9880/)"
