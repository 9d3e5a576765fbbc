# Sourced by demo.sh and view.sh: of the daemon flags in "$@", those the scene needs too
# (--mode, --rpm and --scan-pattern decide the scan both must agree on), into the array
# scene_args. A Livox model without --scan-pattern gets the built-in test pattern (NOT the unit's:
# docs/models.md), for the daemon (appended to the caller's `extra`) and the scene alike.
scene_args=()
args_for_scene=("$@")
for ((i = 0; i < ${#args_for_scene[@]}; ++i)); do
  case ${args_for_scene[i]} in
    --mode | --rpm | --scan-pattern) scene_args+=("${args_for_scene[i]}" "${args_for_scene[i + 1]:-}") ;;
  esac
done
if [[ ${model:-} == livox-* && " ${args_for_scene[*]} " != *" --scan-pattern "* ]]; then
  echo "(no --scan-pattern: the built-in test pattern, not the unit's own scan)"
  extra+=(--scan-pattern test-pattern)
  scene_args+=(--scan-pattern test-pattern)
fi
