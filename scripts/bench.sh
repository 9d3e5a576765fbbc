#!/usr/bin/env bash
# Every row of the README's performance table, in order: sets up, builds, then runs
# lidaremu-bench and lidaremu-microbench as the table says. BENCH_SECONDS changes the measured
# time of each bench row (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
seconds="${BENCH_SECONDS:-10}"
bench=build/clients/lidaremu-bench
micro=build/tests/lidaremu-microbench
run() {
  echo "== $*"
  "$@"
  echo
}
run "$bench" --sensor os1-128:2048x10 --seconds "$seconds"
run "$bench" --sensor os1-128:2048x10 --seconds "$seconds" --raw --ceiling-seconds 0
run "$bench" --sensor os1-128:2048x10 --rays-per-beam 5 --seconds "$seconds" --ceiling-seconds 0
run "$bench" --sensor os1-128:2048x10 --physics ideal --seconds "$seconds" --ceiling-seconds 0
run "$micro" --benchmark_filter=stage/blooming/os1-32
run "$bench" --sensor os1-128:1024x10 --in-flight 1 --seconds "$seconds" --ceiling-seconds 0
# Streamed frames: each frame's datagrams spread over its period (as an engine sends them), the
# output as fast as possible: last datagram to last packet.
run "$bench" --sensor os1-128:1024x10 --rate 2 --seconds "$seconds" --ceiling-seconds 0
eight=()
for _ in 1 2 3 4; do eight+=(--sensor os1-128:2048x10); done
for _ in 1 2 3 4; do eight+=(--sensor vls128::dual); done
run "$bench" "${eight[@]}" --rate 1 --seconds "$seconds" --ceiling-seconds 0
run "$bench" --sensor os1-128:2048x10 --rate 1 --seconds "$seconds" --ceiling-seconds 0
# Overload (docs/performance.md, "Overload"): a sensor offered twice what it can send in real
# time, on any machine; each frame's age comes from its packets' timestamps.
run "$bench" --sensor os1-32:512x10 --rate 2 --pace realtime --seconds "$seconds" --ceiling-seconds 0
run "$bench" --sensor vlp16 --sensor vlp16 --sensor vlp32c --sensor os1-64:1024x10 --rate 1 \
  --seconds "$seconds" --ceiling-seconds 0
run "$micro" --threads 1 --benchmark_filter='stage/.*/os1-128-2048x10/rays1|chain/os1-128-2048x10/rays1'
# Zero-loss throughput on the all-returning scene (docs/performance.md, "Zero-loss throughput").
zero_loss=("$bench" --sensor os1-128:2048x10 --scene all-returning --zero-loss --seconds 3 --warmup 1)
run "${zero_loss[@]}" --physics ideal
run "${zero_loss[@]}"
run "${zero_loss[@]}" --rays-per-beam 5 --start-rate 0.5
run "${zero_loss[@]}" --raw
run "${zero_loss[@]}" --physics ideal --raw
run "$micro" --benchmark_filter='input/'
# Scaling (docs/performance.md, "Scaling with cores"): the zero-loss search with the daemon on 1,
# 2, ... cores (the load on the rest), and its plot.
cores=$(seq -s, 1 "$(nproc)")
run "${zero_loss[@]}" --cores "$cores" --plot build/scaling.svg
# The vector kernel on each instruction set this CPU runs (docs/performance.md, "The vector
# kernel"): the samplers, and every stage with one thread and with two.
for target in $("$micro" --list-simd-targets); do
  run "$micro" --simd-target "$target" --benchmark_filter='draws/(uniform|normal|poisson)$'
  for threads in 1 2; do
    run "$micro" --simd-target "$target" --threads "$threads" \
      --benchmark_filter='stage/.*/os1-128-2048x10/rays1|chain/os1-128-2048x10/rays1'
  done
done
run "$micro" --benchmark_filter='draws/.*scalar-double'
run "$micro" --digest
