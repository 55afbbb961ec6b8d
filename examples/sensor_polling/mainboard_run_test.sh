#!/usr/bin/env bash
# Runs mainboard on the sensor-polling graph for 2 s (--run_for, the same
# shutdown path as Ctrl-C) and checks the summary it prints; SIGTERM mid-run,
# also on a load graph (37 components, ~16,000 timer callbacks and 12,000
# messages a second); and a bad graph. Every run is --in_process_only: the
# graph alone, as it was before its channels could cross processes (another
# run on the same DDS domain would otherwise feed it, and the "no duplicate
# delivery" count below would see that run's IMU messages).
set -euo pipefail
bin="${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/sensor_polling/mainboard"
dag="${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/sensor_polling/sensor_polling.dag"
out="$("$bin" -d "$dag" --in_process_only --run_for=2s --status=never 2>"$TEST_TMPDIR/stderr")" || {
  echo "FAIL: mainboard exited non-zero"; cat "$TEST_TMPDIR/stderr"; exit 1; }
echo "$out"
for c in imu lidar fusion health; do
  grep -qE "^$c " <<<"$out" || { echo "FAIL: no summary row for $c"; exit 1; }
done
# SIGTERM mid-run shuts down cleanly too (exit 0, summary printed).
"$bin" -d "$dag" --in_process_only --status=never >"$TEST_TMPDIR/term.out" 2>"$TEST_TMPDIR/term.err" &
pid=$!
for _ in $(seq 1 100); do
  grep -q 'started component "health"' "$TEST_TMPDIR/term.err" && break
  sleep 0.05  # polling another process's log; bounded to 5 s
done
kill -TERM "$pid"
wait "$pid" || { echo "FAIL: SIGTERM exit status $?"; cat "$TEST_TMPDIR/term.err"; exit 1; }
grep -qE '^imu ' "$TEST_TMPDIR/term.out" || { echo "FAIL: no summary after SIGTERM"; exit 1; }
# SIGTERM under load: exit 0 within 10 s, a summary row for every
# component, no early fire and no failed Proc() anywhere.
load="${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/sensor_polling/testdata/load.dag"
"$bin" -d "$load" --in_process_only --status=never >"$TEST_TMPDIR/load.out" 2>"$TEST_TMPDIR/load.err" &
pid=$!
for _ in $(seq 1 200); do
  grep -q 'started component "health"' "$TEST_TMPDIR/load.err" && break
  sleep 0.05  # bounded to 10 s
done
sleep 1  # under load for a second
kill -TERM "$pid"
( sleep 10; kill -KILL "$pid" 2>/dev/null ) &
killer=$!
status=0
wait "$pid" || status=$?
kill "$killer" 2>/dev/null || true
[ "$status" -eq 0 ] || { echo "FAIL: SIGTERM under load: exit status $status"; tail -20 "$TEST_TMPDIR/load.err"; exit 1; }
rows=$(grep -cE '^(imu|lidar|fusion|health)' "$TEST_TMPDIR/load.out" || true)
[ "$rows" -eq 37 ] || { echo "FAIL: $rows summary rows under load, want 37"; cat "$TEST_TMPDIR/load.out"; exit 1; }
# Columns: component class procs failed rate config p99 overruns dropped early
# threw; `-` where one does not apply (early for fusion, dropped for timers).
bad=$(awk '/^(imu|lidar|fusion|health)/ && ($4 != 0 || ($10 != 0 && $10 != "-") || $11 != 0 || $3 == 0)' "$TEST_TMPDIR/load.out")
[ -z "$bad" ] || { echo "FAIL: failed Proc(), early fire or no run under load:"; echo "$bad"; exit 1; }
# No duplicate delivery: a fusion reader cannot see (process or drop) more
# IMU messages than the pollers published.
dup=$(awk '/^imu/ {published += $3} /^fusion/ {seen[$1] = $3 + $9}
  END {for (f in seen) if (seen[f] > published) print f, seen[f], ">", published}' "$TEST_TMPDIR/load.out")
[ -z "$dup" ] || { echo "FAIL: more deliveries than publications: $dup"; exit 1; }
# A bad graph is refused before anything starts, naming file and field.
printf 'module_config { timer_components { class_name: "ImuPoller" config { name: "x" interval: 0 } } }\n' >"$TEST_TMPDIR/bad.dag"
if "$bin" -d "$TEST_TMPDIR/bad.dag" 2>"$TEST_TMPDIR/bad.err"; then echo "FAIL: bad graph accepted"; exit 1; fi
grep -q "bad.dag:1" "$TEST_TMPDIR/bad.err" || { echo "FAIL: error lacks file:line"; cat "$TEST_TMPDIR/bad.err"; exit 1; }
grep -q "interval" "$TEST_TMPDIR/bad.err" || { echo "FAIL: error lacks the field"; exit 1; }
echo PASS
