# Sourced by demo.sh and view.sh: of the daemon flags in "$@", those the scene needs too
# (--mode and --rpm decide the scan pattern both must agree on), into the array scene_args.
scene_args=()
args_for_scene=("$@")
for ((i = 0; i < ${#args_for_scene[@]}; ++i)); do
  case ${args_for_scene[i]} in
    --mode | --rpm) scene_args+=("${args_for_scene[i]}" "${args_for_scene[i + 1]:-}") ;;
  esac
done
