#!/usr/bin/env bash
# The live picture: lidaremud fed by the built-in demo scene without end, its decoded cloud on
# the Foxglove WebSocket (ws://127.0.0.1:8765) and drawn by the built-in page
# (http://127.0.0.1:9880/). Ctrl-C stops both.
#   scripts/view.sh                 VLP-16
#   scripts/view.sh os1-128 --mode 1024x10 --rain 10
#                                   further arguments go to lidaremud (--mode and --rpm to the
#                                   scene too)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-vlp16}
shift || true
extra=("$@")
source scripts/scene_args.sh "${extra[@]}"
bash scripts/setup.sh
bash scripts/build.sh
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT INT TERM
build/daemon/lidaremud --model "$model" --hits udp://127.0.0.1:9870 "${extra[@]}" &
sleep 1
echo "view: open http://127.0.0.1:9880/ in a browser, or connect Foxglove Studio to"
echo "view: ws://127.0.0.1:8765 (Open connection > Foxglove WebSocket; topic /lidaremu/*/points)"
build/clients/lidaremu-scene --model "$model" "${scene_args[@]}" --duration 0
