#!/bin/bash
# The script of cyber_lockstep_test (lockstep_test.bzl): runs a launch
# file's processes in lockstep RUNS times, each on a DDS domain of its own,
# and compares.
#
#   lockstep_graph_test.sh --cyber_launch=P --launch=F --mainboard=M --run_for=D
#       --runs=N [--digest=PROCESS=HEX]... [--expect=PROCESS=LINE]...
#       [--launch_arg=ARG]...
#
# (paths relative to the runfiles root). Fails, printing the runs' output and
# the last lines of every log, unless every run exits 0 having reached the
# end, every process prints one trace digest and one delivery digest, both
# agree across runs (the trace digests also with each --digest), and each
# --expect line is in its process's summary, spaces squeezed.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
out="$TEST_TMPDIR"
notes="$out/shm_files"
# cyber_launch's pid files (one per launch file) in this test's own
# directory: other tests run the same launch file at the same time.
export XDG_RUNTIME_DIR="$out/run"
mkdir -p "$XDG_RUNTIME_DIR"

launcher="" launch="" mainboard="" run_for="" runs=2
digests=()
expects=()
launch_args=()
for arg in "$@"; do
  case "$arg" in
    --cyber_launch=*) launcher="$root/${arg#*=}" ;;
    --launch=*) launch="$root/${arg#*=}" ;;
    --mainboard=*) mainboard="$root/${arg#*=}" ;;
    --run_for=*) run_for="${arg#*=}" ;;
    --runs=*) runs="${arg#*=}" ;;
    --digest=*) digests+=("${arg#*=}") ;;
    --expect=*) expects+=("${arg#*=}") ;;
    --launch_arg=*) launch_args+=("${arg#*=}") ;;
    *) echo "lockstep_graph_test.sh: unknown argument \"$arg\""; exit 2 ;;
  esac
done
for v in launcher launch mainboard run_for; do
  [ -n "${!v}" ] || { echo "lockstep_graph_test.sh: --$v is missing"; exit 2; }
done

# shellcheck source=cyber/testing/process_test.sh
source "$root/cyber/testing/process_test.sh"  # pids, domains, the clean-up, fail

fail() {
  echo "FAIL: $*"
  local f
  for f in "$out"/run.*.out "$out"/run.*.err "$out"/logs.*/*.log; do
    [ -f "$f" ] || continue
    echo "--- $f (last 40 lines)"
    tail -40 "$f"
  done
  exit 1
}

# run N: one run; $out/digests.N gets a line "<process> <digest>" per
# process, $out/summary.N.<process> its summary with spaces squeezed.
run() {
  local n=$1 domain status pid
  domain=$(fastdds_shm_free_domain)
  domains+=("$domain")
  env CYBER_DOMAIN_ID="$domain" "$launcher" start "$launch" --mainboard="$mainboard" \
    --log_dir="$out/logs.$n" --clock=simulated --run_for="$run_for" "${launch_args[@]}" \
    </dev/null >"$out/run.$n.out" 2>"$out/run.$n.err" &
  pid=$!
  pids+=("$pid")
  while kill -0 "$pid" 2>/dev/null; do
    # shellcheck disable=SC2046
    fastdds_shm_note "$notes" "$pid" $(ps -o pid= --ppid "$pid" 2>/dev/null || true) || true
    sleep 0.1  # bounded by the test's timeout
  done
  status=0
  wait "$pid" || status=$?
  echo "--- run $n (domain $domain), exit $status"
  cat "$out/run.$n.out"
  [ "$status" -eq 0 ] || fail "run $n: cyber_launch exited $status"
  grep -q "lockstep simulated time: reached the end" "$out/run.$n.out" ||
    fail "run $n: the end was not reached"
  # Each process's section starts with "== <process> (<log>) ==".
  awk -v dir="$out" -v n="$n" '
    /^== [^ ]+ \(.*\) ==$/ { p = $2; next }
    p != "" { line = $0; gsub(/[ \t]+/, " ", line); print line > (dir "/summary." n "." p) }
    /^trace digest: / && p != "" { print p, $3 > (dir "/digests." n) }
    /^delivery digest: / && p != "" { print p, $3, $4 > (dir "/deliveries." n) }' "$out/run.$n.out"
  [ -s "$out/digests.$n" ] || fail "run $n: no process printed a trace digest"
  local processes
  processes=$(grep -c '^== [^ ]* (.*) ==$' "$out/run.$n.out" || true)
  [ "$(wc -l <"$out/digests.$n")" -eq "$processes" ] ||
    fail "run $n: $processes processes but $(wc -l <"$out/digests.$n") trace digests"
  [ -f "$out/deliveries.$n" ] && [ "$(wc -l <"$out/deliveries.$n")" -eq "$processes" ] ||
    fail "run $n: $processes processes but not as many delivery digests"
}

for ((n = 1; n <= runs; n++)); do run "$n"; done

echo "=== digests"
cat "$out/digests.1"
for ((n = 2; n <= runs; n++)); do
  diff "$out/digests.1" "$out/digests.$n" || fail "the trace digests of runs 1 and $n differ"
done
echo "=== delivery digests (process, digest, messages from other processes)"
cat "$out/deliveries.1"
for ((n = 2; n <= runs; n++)); do
  diff "$out/deliveries.1" "$out/deliveries.$n" ||
    fail "the delivery digests of runs 1 and $n differ: a process was handed other processes' messages in another order"
done
for d in "${digests[@]}"; do
  process=${d%%=*} want=${d#*=}
  got=$(awk -v p="$process" '$1 == p { print $2 }' "$out/digests.1")
  [ -n "$got" ] || fail "no process \"$process\" in the runs (--digest=$d)"
  [ "$got" = "$want" ] || fail "process \"$process\": trace digest $got, expected $want"
done

echo "=== expected lines"
for e in "${expects[@]}"; do
  process=${e%%=*} line=${e#*=}
  line=$(tr -s ' \t' ' ' <<<"$line")
  for ((n = 1; n <= runs; n++)); do
    [ -f "$out/summary.$n.$process" ] || fail "no process \"$process\" in run $n (--expect=$e)"
    grep -qF -- "$line" "$out/summary.$n.$process" ||
      fail "run $n, process \"$process\": no line containing \"$line\""
  done
  echo "$process: $line"
done
echo "PASS: $runs runs, the same digests"
