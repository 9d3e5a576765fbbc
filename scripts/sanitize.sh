#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer, then ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
BUILD_DIR=build-asan bash scripts/build.sh -DLIDAREMU_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug
ctest --test-dir build-asan --output-on-failure
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
BUILD_DIR=build-tsan bash scripts/build.sh -DLIDAREMU_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo
ctest --test-dir build-tsan --output-on-failure
