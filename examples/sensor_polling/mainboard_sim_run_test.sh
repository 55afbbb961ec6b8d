#!/usr/bin/env bash
# mainboard --clock=simulated on the sensor-polling graph: 60 simulated
# seconds, exact call counts in the summary (the same every run), twice with
# the same output, and a line saying it stays off DDS; fusion.dag alone fed a recording (--recording): one
# fusion per recorded IMU reading, the same digest twice; --clock=simulated
# without --run_for, a bad --clock and bad recording flags are refused with
# a message naming the flag.
set -euo pipefail
bin="${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/sensor_polling/mainboard"
dag="${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/sensor_polling/sensor_polling.dag"
run() {
  "$bin" -d "$dag" --clock=simulated --run_for=60s 2>"$TEST_TMPDIR/stderr" || {
    echo "FAIL: mainboard exited non-zero"; cat "$TEST_TMPDIR/stderr"; exit 1; }
}
out="$(run)"
echo "$out"
expect() {  # component procs
  awk -v c="$1" -v n="$2" '$1 == c { found = 1; if ($3 != n) { print "FAIL: " c " procs " $3 ", expected " n; exit 1 } }
       END { if (!found) { print "FAIL: no summary row for " c; exit 1 } }' <<<"$out"
}
expect imu 6000
expect lidar 600
expect health 60
expect fusion 6000
grep -qE '^simulated 1m in .* of wall time \([0-9]+x real time\)$' <<<"$out" || {
  echo "FAIL: no wall-time line"; exit 1; }
# Off the DDS domain, and it says so (with the way to share time).
grep -q "stays off the DDS domain .* add --lockstep" "$TEST_TMPDIR/stderr" || {
  echo "FAIL: no line saying the process stays off DDS"; cat "$TEST_TMPDIR/stderr"; exit 1; }
# The same run again prints the same table.
again="$(run)"
diff <(grep -v '^simulated' <<<"$out") <(grep -v '^simulated' <<<"$again") || {
  echo "FAIL: two simulated runs differ"; exit 1; }
# Bad input: a clear message naming the flag, exit 2.
status=0
"$bin" -d "$dag" --clock=simulated 2>"$TEST_TMPDIR/err" >/dev/null || status=$?
[ "$status" -eq 2 ] && grep -q -- '--clock=simulated needs --run_for' "$TEST_TMPDIR/err" || {
  echo "FAIL: --clock=simulated without --run_for: status $status"; cat "$TEST_TMPDIR/err"; exit 1; }
status=0
"$bin" -d "$dag" --clock=wall --run_for=1s 2>"$TEST_TMPDIR/err" >/dev/null || status=$?
[ "$status" -eq 2 ] && grep -q -- 'flag --clock: "wall" is not steady or simulated' "$TEST_TMPDIR/err" || {
  echo "FAIL: --clock=wall: status $status"; cat "$TEST_TMPDIR/err"; exit 1; }
# A recording of the real pollers (cyber_recorder's) fed into fusion alone:
# 10 s hold IMU readings 1..1000 (the 1001st is at 10.000 s + a few us).
recording="${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/sensor_polling/testdata/pollers_10s.mcap"
fusion_dag="${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/sensor_polling/fusion.dag"
replay() {
  "$bin" -d "$fusion_dag" --clock=simulated --run_for=10s --recording="$recording" \
    --recording_channels=/sensor/imu,/sensor/lidar 2>"$TEST_TMPDIR/stderr" || {
    echo "FAIL: mainboard --recording exited non-zero"; cat "$TEST_TMPDIR/stderr"; exit 1; }
}
out="$(replay)"
echo "$out"
expect fusion 1000
expect health 10
d1=$(sed -n 's/^trace digest: //p' <<<"$out")
d2=$(replay | sed -n 's/^trace digest: //p')
[ "${#d1}" -eq 16 ] && [ "$d1" = "$d2" ] || { echo "FAIL: replay digests '$d1' and '$d2'"; exit 1; }
status=0
"$bin" -d "$fusion_dag" --clock=simulated --run_for=1s --recording="$recording" 2>"$TEST_TMPDIR/err" >/dev/null || status=$?
[ "$status" -eq 2 ] && grep -q -- '--recording and --recording_channels go together' "$TEST_TMPDIR/err" || {
  echo "FAIL: --recording without channels: status $status"; cat "$TEST_TMPDIR/err"; exit 1; }
status=0
"$bin" -d "$fusion_dag" --run_for=1s --recording="$recording" --recording_channels=/sensor/imu \
  2>"$TEST_TMPDIR/err" >/dev/null || status=$?
[ "$status" -eq 2 ] && grep -q -- '--recording needs --clock=simulated' "$TEST_TMPDIR/err" || {
  echo "FAIL: --recording on the real clock: status $status"; cat "$TEST_TMPDIR/err"; exit 1; }
status=0
"$bin" -d "$fusion_dag" --clock=simulated --run_for=1s --recording="$recording" \
  --recording_channels=/sensor/gps 2>"$TEST_TMPDIR/err" >/dev/null || status=$?
[ "$status" -eq 1 ] && grep -q '/sensor/gps' "$TEST_TMPDIR/err" || {
  echo "FAIL: a channel not recorded: status $status"; cat "$TEST_TMPDIR/err"; exit 1; }
echo PASS
