#!/usr/bin/env bash
# The bounded timer soak (issue 7; tests/soak/timer_soak.cc): builds the tool
# with --config=opt and runs it on the real clock for DURATION (default 30s,
# what CI runs): 100,000 timers under arm/stop/reconfigure/destroy churn from
# 4 threads, every call checked (never early, nothing after Stop() returned,
# each due call exactly once), memory growth after warm-up bounded.
#
#   tools/run_soak.sh                      # 30 s
#   tools/run_soak.sh 10m                  # a long run
#   tools/run_soak.sh 20s --timers=20000   # extra arguments go to the tool
#   SOAK_CONFIG=tsan tools/run_soak.sh 20s --timers=20000   # under a sanitizer
#
# Prints the tool's output and ends with one parseable line:
#   soak: PASS (...)   or   soak: FAIL (<what>)
# Exit status 0 on PASS, non-zero otherwise (also if the build fails, the
# tool crashes or hangs, or no verdict was printed). SOAK_JSON=path keeps
# the tool's JSON results.
set -uo pipefail
cd "$(dirname "$0")/.."

duration=30s
if [ $# -gt 0 ] && [[ "$1" != -* ]]; then
  duration="$1"
  shift
fi
config="${SOAK_CONFIG:-opt}"

bash tools/setup.sh >/dev/null || { echo "soak: FAIL (tools/setup.sh failed)"; exit 1; }

if ! bazel build --config="$config" //tests/soak:timer_soak; then
  echo "soak: FAIL (build failed, --config=$config)"
  exit 1
fi
# The binary of this config (bazel-bin follows whichever build ran last, and
# other builds may share the workspace).
bin_dir="$(bazel info --config="$config" bazel-bin 2>/dev/null)"
tool="$bin_dir/tests/soak/timer_soak"
if [ ! -x "$tool" ]; then
  echo "soak: FAIL (no binary at $tool)"
  exit 1
fi

# Sanitizer settings as the tests get them in .bazelrc (bazel run/test would
# set them; here the binary runs directly).
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
json_args=()
[ -n "${SOAK_JSON:-}" ] && json_args=(--json_out="$SOAK_JSON")

# The tool has its own hang watchdogs (--hang_timeout); this outer limit is a
# last resort should even they fail: the duration + 5 minutes, SIGABRT.
limit=()
seconds="$(awk -v d="$duration" 'BEGIN {
  if (match(d, /^[0-9.]+/)) {
    n = substr(d, 1, RLENGTH); u = substr(d, RLENGTH + 1)
    f = (u == "" || u == "s") ? 1 : (u == "ms") ? 0.001 : (u == "m") ? 60 : (u == "h") ? 3600 : -1
    if (f > 0) { printf "%d", n * f + 300; exit }
  }
}')"
[ -n "$seconds" ] && limit=(timeout --signal=ABRT --kill-after=30 "$seconds")

echo "=== timer soak: $duration, --config=$config ==="
"${limit[@]}" "$tool" --duration="$duration" "${json_args[@]}" "$@" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}

verdict="$(grep -E '^soak: (PASS|FAIL)' "$out" | tail -1)"
if [ "$status" -eq 0 ] && [[ "$verdict" == "soak: PASS"* ]]; then
  exit 0
fi
# The tool printed its own FAIL line; repeat it last (a sanitizer report may
# have come after it), or say why there is none.
if [[ "$verdict" == "soak: FAIL"* ]]; then
  echo "$verdict"
else
  echo "soak: FAIL (the tool exited with status $status without a verdict)"
fi
[ "$status" -eq 0 ] && status=1
exit "$status"
