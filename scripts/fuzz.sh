#!/usr/bin/env bash
# Long fuzzing runs with libFuzzer under ASan+UBSan (clang): each target for SECONDS (default
# 600), starting from the corpus in tests/fuzz/corpus/ and adding what it finds there.
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
CC=clang CXX=clang++ BUILD_DIR=build-fuzz bash scripts/build.sh \
  -DLIDAREMU_SANITIZE=address,undefined -DLIDAREMU_LIBFUZZER=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
for target in datagram config; do
  echo "== fuzz_$target for ${seconds}s"
  build-fuzz/tests/fuzz_$target -max_total_time="$seconds" -max_len=70000 \
    "tests/fuzz/corpus/$target"
done
