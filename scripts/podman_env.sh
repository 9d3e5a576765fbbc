# Sourced by scripts/container_test.sh and scripts/kube_test.sh: installs the Debian packages
# named in "$@" that are missing, points podman at a containers.conf under $work where the host's
# open-file limit is below podman's default ulimits (some CI hosts), and defines `pod`.
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Podman's default ulimits ask for more open files than some CI hosts allow: inherit the host's.
if (($(ulimit -n) < 1048576)); then
  printf '[containers]\ndefault_ulimits = []\n' > "$work/containers.conf"
  export CONTAINERS_CONF="$work/containers.conf"
fi
pod() { podman --runtime runc "$@"; }  # runc: crun refuses hybrid cgroup hosts
