#!/usr/bin/env bash
# Long fuzzing runs with libFuzzer under ASan+UBSan (clang): each target for SECONDS (default
# 600), seeded by the corpus in tests/fuzz/corpus/; what it finds goes to build-fuzz/corpus/.
#   scripts/fuzz.sh [SECONDS]
# The test suite runs the same targets for a fixed number of mutations without libFuzzer.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
bash scripts/setup.sh
if ! command -v clang++ >/dev/null; then
  sudo_cmd=(); [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends clang
fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DLIDAREMU_SANITIZE=address,undefined \
  -DLIDAREMU_LIBFUZZER=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target fuzz_datagram fuzz_config fuzz_packet
for target in datagram config packet; do
  echo "== fuzz_$target for ${seconds}s"
  # New inputs go to build-fuzz/corpus/; the curated corpus in the repository seeds the run.
  mkdir -p "build-fuzz/corpus/$target"
  build-fuzz/tests/fuzz_$target -max_total_time="$seconds" -max_len=70000 \
    "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target"
done
