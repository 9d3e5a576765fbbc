#!/usr/bin/env bash
# Soak: four sensors (VLP-16, VLP-32C, HDL-32E, OS1-64) fed by the demo scene at their nominal
# rates for SOAK_SECONDS (default 600, ten minutes); reports resident memory after warm-up and
# at the end, dropped frames and the worst pacing error from /metrics. Fails if memory grew by
# 1 MiB or more after warm-up.
#   SOAK_SECONDS=600 bash scripts/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${SOAK_SECONDS:-600}
warmup=$((seconds / 10 > 20 ? 20 : seconds / 10 + 1))
bash scripts/setup.sh >/dev/null
bash scripts/build.sh >/dev/null
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
http=127.0.0.1:9899
{
  printf '[daemon]\nhttp = "%s"\n' "$http"
  i=0
  for model in vlp16 vlp32c hdl32e os1-64; do
    printf '[[sensor]]\nname = "%s"\nmodel = "%s"\nsensor_id = %d\napi_port = 0\n' "$model" "$model" "$i"
    printf 'hits = "udp://127.0.0.1:%d"\nout = "udp://127.0.0.1:%d"\ntelemetry = "udp://127.0.0.1:%d"\n' \
      $((9870 + i)) $((20000 + 10 * i)) $((20001 + 10 * i))
    i=$((i + 1))
  done
} >"$work/soak.toml"
build/daemon/lidaremud --config "$work/soak.toml" --duration $((seconds + 5)) >"$work/daemon.out" 2>"$work/daemon.err" &
daemon=$!
for _ in $(seq 50); do grep -q "control http" "$work/daemon.out" 2>/dev/null && break; sleep 0.1; done
i=0
for model in vlp16 vlp32c hdl32e os1-64; do
  build/clients/lidaremu-scene --model "$model" --hits "udp://127.0.0.1:$((9870 + i))" \
    --sensor-id "$i" --duration "$seconds" >/dev/null 2>&1 &
  i=$((i + 1))
done
rss() { awk '/VmRSS/ {print $2}' "/proc/$daemon/status"; }
sleep "$warmup"
rss_warm=$(rss)
sleep $((seconds - warmup))
rss_end=$(rss)
metrics=$(python3 -c "import urllib.request as u; print(u.urlopen('http://$http/metrics').read().decode())")
echo "soak: ${seconds}s, 4 sensors"
echo "resident memory after ${warmup}s warm-up: ${rss_warm} KiB, at the end: ${rss_end} KiB (growth $((rss_end - rss_warm)) KiB)"
echo "$metrics" | grep -E '^lidaremu_(frames_dropped_total|frames_processed_total|packets_out_total|pacing_error_max_seconds|pacing_resyncs_total)'
wait "$daemon" || true
if ((rss_end - rss_warm >= 1024)); then
  echo "soak: FAILED, memory grew by $((rss_end - rss_warm)) KiB after warm-up" >&2
  exit 1
fi
echo "soak: memory growth under 1 MiB after warm-up"
