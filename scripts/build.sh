#!/usr/bin/env bash
# Configures and builds lidaremu into build/ (Ninja, ccache when present).
# Extra arguments go to CMake, e.g. -DLIDAREMU_SANITIZE=address,undefined with BUILD_DIR=build-asan.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DLIDAREMU_WERROR=ON "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
