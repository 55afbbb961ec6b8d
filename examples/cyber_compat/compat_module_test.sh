#!/usr/bin/env bash
# The ported Cyber RT module (compat_module.dag) under the plain mainboard.
# Counts are lower bounds with wide margins (real clock, shared machine): a
# component that never ran, a task that never paced, or a fusion that never
# fused fails; a slow machine does not.
set -euo pipefail
cd "${TEST_SRCDIR}/${TEST_WORKSPACE}"  # the dag's paths are relative to here
bin=cyber/mainboard/mainboard
# --in_process_only: this test is about the Cyber surface, not the transport;
# its protobuf channels must not meet other tests' processes on this host.
fail() { echo "FAIL: $*"; echo "--- stdout"; echo "${out:-}"; echo "--- stderr"; cat "$TEST_TMPDIR/err"; exit 1; }

out="$("$bin" -d examples/cyber_compat/compat_module.dag --in_process_only --run_for=2s --status=never \
       2>"$TEST_TMPDIR/err")" || fail "mainboard exited $?"
procs() {  # procs of the summary row of component $1
  local row
  row="$(grep -E "^$1 " <<<"$out")" || fail "no summary row for $1"
  awk '{print $3}' <<<"$row"
}
car="$(procs car_status)"; talker="$(procs talker)"; fusion="$(procs fusion)"
echo "car_status $car, talker $talker, fusion $fusion"
[ "$car" -ge 10 ] || fail "car_status ran $car times in 2 s at 10 Hz"
[ "$talker" -ge 10 ] || fail "talker got $talker driver messages"
[ "$fusion" -ge 20 ] || fail "fusion ran $fusion times in 2 s at 20 Hz chatter"
grep -q "CarStatusWriter init: every 100 ms on /carstatus/channel" "$TEST_TMPDIR/err" \
  || fail "GetProtoConfig's channel not used"
written="$(sed -nE 's/.*ChatterTalker: ([0-9]+) chatter messages written.*/\1/p' "$TEST_TMPDIR/err")"
[ -n "$written" ] && [ "$written" -ge 20 ] || fail "the Rate task wrote '${written}' messages"
[ "$written" -le 45 ] || fail "the Rate task wrote $written messages in 2 s at 20 Hz"
fused="$(sed -nE 's/.*CarStatusWriter: [0-9]+ driver messages written, ([0-9]+) fused.*/\1/p' "$TEST_TMPDIR/err")"
[ -n "$fused" ] && [ "$fused" -ge 20 ] || fail "car_status received '${fused}' fused statuses"

# The same module with a typo in its config file: refused, located.
sed 's/chatter_hz: 20.0/chatter_hz_typo: 20.0/' examples/cyber_compat/compat_module.pb.txt \
  >"$TEST_TMPDIR/typo.pb.txt"
sed "s#examples/cyber_compat/compat_module.pb.txt#$TEST_TMPDIR/typo.pb.txt#" \
  examples/cyber_compat/compat_module.dag >"$TEST_TMPDIR/typo.dag"
if "$bin" -d "$TEST_TMPDIR/typo.dag" --in_process_only --run_for=1s --status=never >/dev/null 2>"$TEST_TMPDIR/err"; then
  fail "a config with an unknown field was accepted"
fi
grep -q "typo.pb.txt:6:16: .*chatter_hz_typo" "$TEST_TMPDIR/err" || fail "the config error is not located"
echo PASS
