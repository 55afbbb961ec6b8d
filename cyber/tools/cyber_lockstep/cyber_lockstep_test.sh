#!/bin/bash
# cyber_lockstep with the sensor_polling example's two mainboards on
# lockstep simulated time: see BUILD.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
example="$root/examples/sensor_polling"
mainboard="$example/mainboard"
lockstep="$root/cyber/tools/cyber_lockstep/cyber_lockstep"
out="$TEST_TMPDIR"
notes="$out/shm_files"

# shellcheck source=cyber/testing/process_test.sh
source "$root/cyber/testing/process_test.sh"  # pids, domains, the clean-up, fail

# run N: one 20 s simulated run on a fresh domain; the digests in
# $out/digests.N ("pollers <digest>", "fusion <digest>").
run() {
  local n=$1 domain p status i
  domain=$(fastdds_shm_free_domain)
  domains+=("$domain")
  export CYBER_DOMAIN_ID=$domain
  local started=()
  for p in pollers fusion; do
    "$mainboard" --process_name=$p --clock=simulated --lockstep -d "$example/$p.dag" \
      >"$out/$p.$n.out" 2>"$out/$p.$n.err" &
    pids+=($!)
    started+=($!)
  done
  status=0
  # Bounded: a run that cannot finish fails with the processes' output.
  timeout 100 "$lockstep" --processes=pollers,fusion --run_for=20s --join_deadline=30s \
    >"$out/lockstep.$n.out" 2>"$out/lockstep.$n.err" || status=$?
  [ "$status" -eq 0 ] || fail "run $n on domain $domain: cyber_lockstep exited $status"
  for p in "${started[@]}"; do
    for ((i = 0; i < 300; i++)); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.1  # the mainboard prints its summary and leaves; bounded to 30 s
    done
    kill -0 "$p" 2>/dev/null && fail "run $n: a mainboard (pid $p) still runs 30 s after the end"
    status=0
    wait "$p" || status=$?
    [ "$status" -eq 0 ] || fail "run $n: a mainboard (pid $p) exited $status"
  done
  fastdds_shm_note "$notes" "${pids[@]}"
  cat "$out/lockstep.$n.out"
  grep -q "the end (20s) reached" "$out/lockstep.$n.out" || fail "run $n: not at the end"
  : >"$out/digests.$n"
  for p in pollers fusion; do
    d=$(sed -n 's/^trace digest: //p' "$out/$p.$n.out")
    [ "${#d}" -eq 16 ] || fail "run $n: no trace digest from $p"
    echo "$p $d" >>"$out/digests.$n"
  done
  cat "$out/digests.$n"
}

run 1
run 2
cmp -s "$out/digests.1" "$out/digests.2" || fail "the two runs differ: $(paste "$out/digests.1" "$out/digests.2")"
awk '$1 == "fusion" && $3 == 2000 { ok = 1 } END { exit !ok }' "$out/fusion.1.out" ||
  fail "fusion did not run once per IMU message (2000 in 20 s)"

# Bad arguments: named, exit 2.
status=0
"$lockstep" --run_for=10s >"$out/bad.out" 2>&1 || status=$?
[ "$status" -eq 2 ] && grep -q "\-\-processes is required" "$out/bad.out" || fail "no --processes: $status"
status=0
"$lockstep" --processes=a --run_for=soon >"$out/bad2.out" 2>&1 || status=$?
[ "$status" -eq 2 ] && grep -q '"soon" is not a positive duration' "$out/bad2.out" || fail "bad --run_for: $status"
"$lockstep" --help | grep -q "usage: cyber_lockstep" || fail "--help"
echo PASS
