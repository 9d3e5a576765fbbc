#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer, then ThreadSanitizer.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
BUILD_DIR=build-asan bash scripts/build.sh -DLIDAREMU_SANITIZE=address,undefined || exit 1
ctest --test-dir build-asan --output-on-failure
asan=$?
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp"
BUILD_DIR=build-tsan bash scripts/build.sh -DLIDAREMU_SANITIZE=thread || exit 1
ctest --test-dir build-tsan --output-on-failure
tsan=$?
echo "sanitize: ASan+UBSan exit $asan, TSan exit $tsan"
exit $((asan || tsan))
