#!/usr/bin/env bash
# Configures and builds lidaremu into build/ (Ninja, ccache when present).
# Extra arguments go to CMake, e.g. -DLIDAREMU_SANITIZE=address,undefined with BUILD_DIR=build-asan.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
# Installs under /usr (configs in /etc), as the .deb does: `DESTDIR=DIR cmake --install build`
# stages it, `cpack --config build/CPackConfig.cmake` packages it.
cmake -S . -B "$build_dir" -G Ninja -DLIDAREMU_WERROR=ON -DCMAKE_INSTALL_PREFIX=/usr "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
