#!/usr/bin/env bash
# The container, tested: docker/Dockerfile built with podman (format docker, so the health check
# stays), run on the host network, fed the demo scene from outside, its packets decoded and its
# /healthz read. No image registry is reachable here, but Debian's packages are: the base images
# (debian:12, debian:12-slim) come from debootstrap --variant=minbase bookworm, imported.
# Needs root (podman, debootstrap) and the host's build (build/clients tools); CI runs it after
# the test suite. Usage: scripts/container_test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=/tmp/lidaremu-container
image=localhost/lidaremu:ci
name=lidaremu-ci-$$
mkdir -p "$work"
fail() { echo "container: FAIL: $*" >&2; exit 1; }
cleanup() { podman --runtime runc rm -f "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT

# Tools, from Debian.
source scripts/podman_env.sh podman debootstrap runc curl

# Base images from debootstrap, once per machine.
if ! pod image exists docker.io/library/debian:12; then
  rootfs="$work/rootfs"
  rm -rf "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
    || fail "debootstrap: $(tail -5 "$work/debootstrap.log")"
  tar -C "$rootfs" -c . | pod import - docker.io/library/debian:12 >/dev/null
  rm -rf "$rootfs"
fi
pod image exists docker.io/library/debian:12-slim \
  || pod tag docker.io/library/debian:12 docker.io/library/debian:12-slim

# The image, exactly as the README builds it (docker format keeps HEALTHCHECK).
# (LIDAREMU_CONTAINER_REUSE=1 keeps an image already built, while working on this script.)
if [[ ${LIDAREMU_CONTAINER_REUSE:-0} == 1 ]] && pod image exists "$image"; then
  echo "container: reusing $image"
else
  start=$(date +%s)
  pod build --pull=never --format docker -f docker/Dockerfile -t "$image" . >"$work/build.log" 2>&1 \
    || fail "podman build: $(tail -20 "$work/build.log")"
  echo "container: image built in $(($(date +%s) - start)) s"
  # The build stage's image is left untagged: 3 GB per build that would fill a CI disk in a dozen
  # runs. Only images of that stage go (the Dockerfile labels it).
  pod image prune -f --filter label=org.lidaremu.stage=build >/dev/null \
    || echo "container: could not remove the build stage's image (podman image prune)"
fi
health=$(pod image inspect "$image" | python3 -c 'import json, sys; print(json.load(sys.stdin)[0].get("Healthcheck"))')
[[ $health == *healthz* ]] || fail "the image has no health check: $health"

# Run it as the README does (its entry point: control on 9880, Foxglove on 8765) on the host
# network, with its own hit and output ports; feed it from outside, decode what it sends.
hits=19870 out=12368 http=9880
for port in 9880 8765; do
  ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || fail "port $port is taken on this host"
done
# (Without systemd podman cannot time the health check itself; it is run by hand below.)
pod run -d --name "$name" --network host "$image" \
  --model vlp16 --hits "udp://127.0.0.1:$hits" --out "udp://127.0.0.1:$out" --physics ideal \
  >/dev/null 2>"$work/run.log" || fail "podman run: $(cat "$work/run.log")"
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$http/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
answer=$(curl -fsS "http://127.0.0.1:$http/healthz") || fail "no /healthz: $(pod logs "$name" 2>&1 | tail -5)"
echo "container: /healthz -> $answer"
pod healthcheck run "$name" >/dev/null 2>&1 || fail "the image's own health check failed"
echo "container: the image's HEALTHCHECK passes"
"$repo/build/clients/lidaremu-inspect" --model vlp16 --port "$out" --duration 6 --frames 10 \
  >"$work/inspect.log" 2>&1 &
inspector=$!
sleep 0.5
"$repo/build/clients/lidaremu-scene" --model vlp16 --hits "udp://127.0.0.1:$hits" --frames 20 \
  >"$work/scene.log" 2>&1 || fail "the scene could not send: $(cat "$work/scene.log")"
wait "$inspector" || true
cat "$work/inspect.log"
# Frames with the scene in them (the demo scene gives some 20,000 points a VLP-16 frame).
frames=$(awk '/^frame/ { for (i = 1; i < NF; i++) if ($i == "points" && $(i + 1) + 0 > 1000) n++ }
              END { print n + 0 }' "$work/inspect.log")
((frames >= 5)) || fail "decoded $frames frames with points from the container (expected 5 or more)"
pod stop -t 20 "$name" >/dev/null 2>&1
status=$(pod inspect --format '{{.State.ExitCode}}' "$name")
[[ $status == 0 ]] || fail "the containerised daemon exited $status on SIGTERM"
pod logs "$name" >"$work/daemon.log" 2>&1 || true
grep -q "lidaremu_packets_out_total" "$work/daemon.log" \
  || fail "the daemon's exit counters are missing from its log: $(tail -5 "$work/daemon.log")"
echo "container: all checks passed ($frames frames decoded, clean stop)"
