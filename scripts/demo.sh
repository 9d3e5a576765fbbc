#!/usr/bin/env bash
# The main job: install, build, start lidaremud for a sensor, feed it the built-in demo scene
# for a few seconds, decode what it emitted and print a per-frame summary.
#   scripts/demo.sh                 VLP-16
#   scripts/demo.sh vls128          any model of `lidaremud --help`
#   scripts/demo.sh os1-64          Ouster OS1-64 (1024x10, LEGACY)
#   scripts/demo.sh os0-128 --mode 2048x10 --profile rng19
#                                   further arguments go to lidaremud (--mode and --rpm to the
#                                   scene too)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-vlp16}
shift || true
extra=("$@")
scene_args=()
for ((i = 0; i < ${#extra[@]}; ++i)); do
  case ${extra[i]} in --mode | --rpm) scene_args+=("${extra[i]}" "${extra[i + 1]}") ;; esac
done
seconds=${DEMO_SECONDS:-4}
bash scripts/setup.sh
bash scripts/build.sh
bin=build
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

daemon_args=(--model "$model" --hits udp://127.0.0.1:9870 --pace realtime --duration $((seconds + 2))
  "${extra[@]}")
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
