# Puts cyber-timer's programs on PATH (as Cyber RT's setup.bash does):
#
#   source cyber/setup.bash
#
# builds every program (mainboard and cyber/tools/*: cyber_channel,
# cyber_node, cyber_service, cyber_launch, cyber_monitor, cyber_bridge,
# cyber_recorder, cyber_lockstep, shm_clean; not the measurement tools,
# which are testonly) with Bazel, links each into .cyber/bin/ in this workspace and
# puts that directory first on PATH. The links point into bazel-bin, so a
# later `bazel build` of a program updates it without sourcing again.
# Source it from any directory; it prints what it linked.
#
# Variables it reads: CYBER_SETUP_BAZEL_FLAGS (extra flags for bazel
# build, e.g. "-c opt"). It does not change CYBER_DOMAIN_ID: the programs
# join Cyber RT's default domain 80 unless it is set.

_cyber_setup() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || return 1
  local -a flags=()
  # shellcheck disable=SC2206  # word splitting of the flags is wanted
  [ -n "${CYBER_SETUP_BAZEL_FLAGS:-}" ] && flags=(${CYBER_SETUP_BAZEL_FLAGS})
  local -a targets
  mapfile -t targets < <(cd "$root" && bazel query --noshow_progress \
    'kind("cc_binary", //cyber/tools/...) except attr(testonly, 1, //cyber/tools/...) + //cyber/mainboard:mainboard' 2>/dev/null)
  if [ "${#targets[@]}" -eq 0 ]; then
    echo "cyber/setup.bash: bazel query found no program under //cyber/tools in $root" >&2
    return 1
  fi
  (cd "$root" && bazel build "${flags[@]}" "${targets[@]}") || {
    echo "cyber/setup.bash: the build failed; PATH is unchanged" >&2
    return 1
  }
  local bin_dir="$root/.cyber/bin" bazel_bin
  bazel_bin="$(cd "$root" && bazel info "${flags[@]}" bazel-bin 2>/dev/null)" || return 1
  mkdir -p "$bin_dir"
  local target package name linked=()
  for target in "${targets[@]}"; do
    package="${target#//}"
    package="${package%%:*}"
    name="${target##*:}"
    ln -sfn "$bazel_bin/$package/$name" "$bin_dir/$name"
    linked+=("$name")
  done
  case ":$PATH:" in
    *":$bin_dir:"*) ;;
    *) export PATH="$bin_dir:$PATH" ;;
  esac
  echo "cyber/setup.bash: on PATH from $bin_dir: ${linked[*]}"
}
_cyber_setup
