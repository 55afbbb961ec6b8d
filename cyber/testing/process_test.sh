# shellcheck shell=bash
# Sourced by the shell tests that start DDS processes (mainboards,
# cyber_launch, the tools): the clean-up every one of them needs, so that
# a test that fails, times out or is interrupted leaves nothing running
# and nothing in /dev/shm.
#
# Before sourcing, set `out` (the directory of the test's outputs) and
# `notes` (the file fastdds_shm_note writes). Then:
#   pids+=("$pid")       stopped at exit (stop: SIGINT, then harder) if
#                        still running
#   domains+=("$domain") the /dev/shm files of the domain's runs removed at
#                        exit (fastdds_shm_remove)
#   fail MESSAGE         prints "FAIL: MESSAGE" and the last 30 lines of
#                        every $out/*.out and $out/*.err, exits 1 (a test
#                        may define its own fail after sourcing)
# It traps EXIT (the clean-up), INT and TERM (bazel's timeout).
#
# shellcheck source=cyber/testing/fastdds_shm.sh
source "$(dirname "${BASH_SOURCE[0]}")/fastdds_shm.sh"

pids=()
domains=()

process_test_cleanup() {
  local status=$? pid d
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then stop "$pid" || true; fi
  done
  for d in "${domains[@]}"; do fastdds_shm_remove "$notes" "$d" || true; done
  exit "$status"
}
trap process_test_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
  echo "FAIL: $*"
  local f
  for f in "$out"/*.out "$out"/*.err; do
    [ -f "$f" ] || continue
    echo "--- $f (last 30 lines)"
    tail -30 "$f"
  done
  exit 1
}
