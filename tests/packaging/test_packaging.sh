#!/usr/bin/env bash
# The package, as an operator and an engine developer meet it: cpack makes the .deb; dpkg
# installs it into a scratch root (its own dpkg database); the installed daemon runs from there
# with the installed config and material table and answers /healthz; an engine's CMake build
# finds the C ABI with find_package(lidaremu), and a plain compiler with pkg-config.
# Usage: test_packaging.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/lidaremu-packaging.XXXXXX)
daemon_pid=
cleanup() {
  [[ -n $daemon_pid ]] && kill "$daemon_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. The .deb.
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -B "$work/out" > "$work/cpack.log") \
  || fail "cpack: $(cat "$work/cpack.log")"
deb=$(ls "$work"/out/lidaremu_*.deb)
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
depends=$(dpkg-deb -f "$deb" Depends)
echo "depends: $depends"
for lib in libtbb12 libspdlog libpcap; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib"
done
contents=$(dpkg-deb -c "$deb")
for path in ./usr/bin/lidaremud ./usr/bin/lidaremu-send ./etc/lidaremu/lidaremud.toml \
            ./usr/share/lidaremu/materials.toml ./usr/lib/systemd/system/lidaremud.service \
            ./usr/include/lidaremu_client.h lidaremuConfig.cmake lidaremu-client.pc \
            liblidaremu_client.so.0; do
  grep -q -- "$path" <<<"$contents" || fail "the package lacks $path"
done

# 2. Installed into a scratch root with its own dpkg database (dependencies are the host's).
root="$work/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
# Maintainer scripts (ldconfig) run without chroot: the scratch root has no shell of its own.
dpkg --root="$root" --force-depends --force-not-root --force-script-chrootless --log=/dev/null \
  -i "$deb" \
  > "$work/dpkg.log" 2>&1 || fail "dpkg -i into the scratch root: $(cat "$work/dpkg.log")"
dpkg --root="$root" -s lidaremu | grep -q "Status: install ok installed" \
  || fail "dpkg does not report lidaremu installed in the scratch root"
dpkg --root="$root" -s lidaremu | grep -q "/etc/lidaremu/lidaremud.toml" \
  || fail "the service config is not a conffile"

# 3. The installed daemon, from another directory: its config, its material table, /healthz.
cd "$work"
"$root/usr/bin/lidaremud" --config "$root/etc/lidaremu/lidaremud.toml" --http 127.0.0.1:0 \
  --foxglove off > "$work/daemon.out" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
  grep -q "control http://" "$work/daemon.out" && break
  sleep 0.1
done
grep -q "material table $root/usr/share/lidaremu/materials.toml" "$work/daemon.out" \
  || fail "the installed daemon did not use the installed material table: $(cat "$work/daemon.out")"
control=$(grep -o "control http://[0-9.:]*" "$work/daemon.out" | cut -d' ' -f2)
health=$(curl -fsS "$control/healthz") || fail "no /healthz answer from $control"
[[ $health == *'"status":"ok"'* ]] || fail "/healthz said $health"
echo "installed daemon: $control/healthz -> $health"
kill "$daemon_pid"
wait "$daemon_pid" || fail "the installed daemon did not stop cleanly"
daemon_pid=

# 4. An engine's build: find_package(lidaremu) and pkg-config, against the scratch root.
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$root/usr" >/dev/null
cmake --build "$work/consumer" >/dev/null
LD_LIBRARY_PATH="$root/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)" \
  "$work/consumer/consumer" | tee "$work/consumer.out"
grep -q "1808 columns x 16 channels" "$work/consumer.out" || fail "the consumer's rig is wrong"
pc_dir=$(dirname "$(find "$root" -name lidaremu-client.pc)")
flags=$(PKG_CONFIG_PATH="$pc_dir" PKG_CONFIG_SYSROOT_DIR="$root" pkg-config --cflags --libs lidaremu-client)
# shellcheck disable=SC2086
cc "$here/consumer/consumer.c" $flags -o "$work/consumer-pc"
echo "pkg-config: $flags"
echo "packaging: all checks passed"
