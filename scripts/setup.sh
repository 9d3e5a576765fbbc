#!/usr/bin/env bash
# Installs every Debian package lidaremu needs to build, test and run its demo.
# Idempotent and non-interactive: safe to run on every CI run.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config clang-format
  file  # cpack's .deb: dpkg-shlibdeps finds the dependencies of the binaries it identifies
  libboost-dev libboost-program-options-dev
  flatbuffers-compiler libflatbuffers-dev python3-flatbuffers
  libeigen3-dev libtbb-dev catch2 libbenchmark-dev libhwy-dev libsleef-dev
  libisal-dev  # Intel ISA-L: the packets' CRCs (Ouster, Hesai, Livox) folded with carry-less multiplies
  libtomlplusplus-dev libspdlog-dev libfmt-dev libcli11-dev
  python3 nlohmann-json3-dev libpcap-dev gnuplot-nox tcpdump libpng-dev
  prometheus  # promtool checks /metrics; a real server scrapes the daemon in a test
)
# Tools only tests run: the live-view page's test drives a headless browser, the engine tests a
# headless Godot 3 (tests/test_godot.cpp) and the Unity script compiled and run with mono
# (test_engine_examples). Images that only build and run the daemon skip them
# (LIDAREMU_SETUP_TEST_TOOLS=0).
if [[ ${LIDAREMU_SETUP_TEST_TOOLS:-1} != 0 ]]; then
  packages+=(chromium chromium-driver fonts-liberation godot3-server mono-mcs mono-runtime)
fi
# The live-view page takes three.js from the npm registry: Node.js and npm come from Debian
# unless the machine already has them (NodeSource's nodejs ships npm itself).
if ! command -v npm >/dev/null; then packages+=(npm); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# three.js, exactly as daemon/web/package-lock.json pins it (integrity-checked by npm).
cd "$(dirname "$0")/../daemon/web"
if ! cmp -s package-lock.json node_modules/.installed-from-lock 2>/dev/null; then
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.installed-from-lock
fi
echo "setup: all ${#packages[@]} packages present, three.js installed"
