#!/usr/bin/env bash
# Soak: four sensors (VLP-16, VLP-32C, HDL-32E, OS1-64) fed by the demo scene at their nominal
# rates for SOAK_SECONDS (default 600, ten minutes), with a hostile neighbour beside them
# (scripts/hostile_neighbour.py: 40 slowloris connections on the control port, a loop of
# reinitialize requests on the OS1-64's API, clients that pipeline on its TCP 7501 and HTTP
# ports and never read, a /healthz probe; SOAK_HOSTILE=0 leaves it out), and a SIGHUP reload
# every SOAK_RELOAD_EVERY seconds (default 2; 0: none) of a file that changes the HDL-32E's seed
# each time (it restarts; the other three run on untouched).
# Reports resident memory over time (a line a minute) and after warm-up and at the end (the
# smallest sample of a window each), dropped frames and the worst pacing error from /metrics, and
# the probe's latency. Fails if memory grew after warm-up by 1 MiB or more (10 % with reloads:
# each holds two sets of sensors for a moment), if a sensor not being reinitialised dropped a
# frame (the HDL-32E restarts at each reload, the OS1-64 at each reinitialize), or if /healthz
# p99 >= 100 ms.
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
# The config with the HDL-32E's seed $1: each reload changes it, so that the HDL-32E restarts while
# the other three run on untouched.
write_config() {
  {
    printf '[daemon]\nhttp = "%s"\n' "$http"
    i=0
    for model in vlp16 vlp32c hdl32e os1-64; do
      api=0
      [[ $model == os1-64 ]] && api=18081  # the reinitialize loop's target
      printf '[[sensor]]\nname = "%s"\nmodel = "%s"\nsensor_id = %d\napi_port = %d\n' "$model" "$model" "$i" "$api"
      printf 'hits = "udp://127.0.0.1:%d"\nout = "udp://127.0.0.1:%d"\ntelemetry = "udp://127.0.0.1:%d"\n' \
        $((9870 + i)) $((20000 + 10 * i)) $((20001 + 10 * i))
      [[ $model == hdl32e ]] && printf 'seed = %d\n' "$1"
      i=$((i + 1))
    done
  } >"$work/soak.toml.next"
  mv "$work/soak.toml.next" "$work/soak.toml"
}
write_config 0
build/daemon/lidaremud --config "$work/soak.toml" --duration $((seconds + 5)) >"$work/daemon.out" 2>"$work/daemon.err" &
daemon=$!
for _ in $(seq 50); do grep -q "control http" "$work/daemon.out" 2>/dev/null && break; sleep 0.1; done
i=0
for model in vlp16 vlp32c hdl32e os1-64; do
  build/clients/lidaremu-scene --model "$model" --hits "udp://127.0.0.1:$((9870 + i))" \
    --sensor-id "$i" --duration "$seconds" >/dev/null 2>&1 &
  i=$((i + 1))
done
if [[ ${SOAK_HOSTILE:-1} != 0 ]]; then
  # The OS1-64 is sensor 3: its address is 127.0.0.5.
  python3 scripts/hostile_neighbour.py "$seconds" "$http" 127.0.0.5:18081 >"$work/hostile.out" 2>&1 &
fi
# Resident memory every 2 s. A reinitialisation holds two pipelines for a moment and glibc
# returns freed memory in its own time, so single samples jump by megabytes: the growth is the
# smallest sample of the last minute against the smallest of the minute after warm-up.
(while kill -0 "$daemon" 2>/dev/null; do
   echo "$(date +%s) $(awk '/VmRSS/ {print $2}' "/proc/$daemon/status" 2>/dev/null)"
   sleep 2
 done) >"$work/rss.log" &
reload_every=${SOAK_RELOAD_EVERY:-2}
if [[ $reload_every != 0 ]]; then
  (seed=0
   while kill -0 "$daemon" 2>/dev/null; do
     sleep "$reload_every"
     seed=$((seed + 1))
     write_config "$seed"
     kill -HUP "$daemon" 2>/dev/null
   done) &
fi
t0=$(date +%s)
sleep "$seconds"
window=$((seconds / 10 < 60 ? seconds / 10 + 1 : 60))
rss_warm=$(awk -v a=$((t0 + warmup)) -v b=$((t0 + warmup + window)) \
  '$1 >= a && $1 < b && $2 != "" { if (m == "" || $2 < m) m = $2 } END { print m }' "$work/rss.log")
rss_end=$(awk -v a=$((t0 + seconds - window)) \
  '$1 >= a && $2 != "" { if (m == "" || $2 < m) m = $2 } END { print m }' "$work/rss.log")
rss_max=$(awk '$2 != "" { if ($2 > m) m = $2 } END { print m }' "$work/rss.log")
metrics=$(python3 -c "import urllib.request as u; print(u.urlopen('http://$http/metrics').read().decode())")
echo "soak: ${seconds}s, 4 sensors, a reload every ${reload_every}s (0: none): $(grep -c 'SIGHUP: reloaded' "$work/daemon.err" || true) reloads"
echo "resident memory, a sample a minute (s since start, KiB):"
awk -v t0="$t0" '$2 != "" && ($1 - t0) % 60 < 2 { printf "  %4d s  %s KiB\n", $1 - t0, $2 }' "$work/rss.log"
echo "resident memory (smallest of ${window}s windows) after ${warmup}s warm-up: ${rss_warm} KiB, at the end: ${rss_end} KiB (growth $((rss_end - rss_warm)) KiB; largest sample ${rss_max} KiB)"
echo "$metrics" | grep -E '^lidaremu_(frames_dropped_total|frames_processed_total|packets_out_total|pacing_error_max_seconds|pacing_resyncs_total)'
wait "$daemon" || true
failed=0
allowed=1024
[[ $reload_every != 0 ]] && allowed=$((rss_warm / 10))
if ((rss_end - rss_warm >= allowed)); then
  echo "soak: FAILED, memory grew by $((rss_end - rss_warm)) KiB after warm-up (at most $allowed)" >&2
  failed=1
fi
for model in vlp16 vlp32c; do
  dropped=$(echo "$metrics" | awk -v s="lidaremu_frames_dropped_total{sensor=\"$model\"}" '$1 == s {print $2}')
  if [[ $dropped != 0 ]]; then
    echo "soak: FAILED, $model dropped $dropped frames" >&2
    failed=1
  fi
done
if [[ ${SOAK_HOSTILE:-1} != 0 ]]; then
  wait
  cat "$work/hostile.out"
  p99=$(sed -n 's/.*hostile_p99_ms=\([0-9.]*\).*/\1/p' "$work/hostile.out")
  if [[ -z $p99 ]] || awk -v p="$p99" 'BEGIN { exit !(p >= 100) }'; then
    echo "soak: FAILED, /healthz p99 ${p99:-unknown} ms beside the hostile neighbour" >&2
    failed=1
  fi
fi
((failed == 0)) || exit 1
echo "soak: memory growth under 1 MiB after warm-up, no frame dropped, /healthz p99 under 100 ms"
