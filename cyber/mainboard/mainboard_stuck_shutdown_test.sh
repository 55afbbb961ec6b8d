#!/usr/bin/env bash
# mainboard's shutdown is bounded: a graph whose Clear() stops a timer while
# holding the lock the timer's callback needs (testdata/stuck_stop.dag)
# used to hang for ever after --run_for. With --shutdown_deadline it exits
# with status 3, says on stderr which component and which timer stop it
# waits for (and the timer's own stuck-stop warning comes first), and
# prints the summary table on stdout.
#
# Bounded by `timeout`: a hang fails the test (status 124) instead of
# waiting for Bazel's. The limit is generous (a loaded machine, sanitizers):
# each run takes about 4 s. The deadline (3 s) leaves the stop's own
# warning (due at 200 ms) seconds to be logged before the exit.
set -euo pipefail
ulimit -c 0  # the --clock=simulated run aborts: leave no core file behind
bin="${TEST_SRCDIR}/${TEST_WORKSPACE}/cyber/mainboard/mainboard_with_stuck_stop_components"
dag="${TEST_SRCDIR}/${TEST_WORKSPACE}/cyber/mainboard/testdata/stuck_stop.dag"
out="$TEST_TMPDIR/out"
err="$TEST_TMPDIR/err"
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }

status=0
timeout 120 "$bin" -d "$dag" --run_for=1s --shutdown_deadline=3s \
  --timer_stop_warn_after=200ms --status=never >"$out" 2>"$err" || status=$?
[ "$status" -ne 124 ] || fail "mainboard did not exit within 120 s"
[ "$status" -eq 3 ] || fail "exit status $status, want 3"

expect() {  # a line of stderr matching the extended regex $1
  grep -qE "$1" "$err" || fail "no stderr line matching: $1"
}
expect '^mainboard: shutdown did not finish within 3s \(--shutdown_deadline\): stuck stopping the components$'
# Stop order is the reverse of start order: "stuck" is in progress,
# "ticker" not reached.
expect '^mainboard: components not stopped: "stuck" \(Shutdown\(\) in progress\), "ticker"$'
expect '^mainboard: timer stops in progress:$'
expect '^mainboard:   timer "stuck_worker": Stop\(\) waiting [0-9.]+m?s for its running callback; caller: thread [0-9]+ "[^"]*", in component "stuck" Shutdown\(\)$'
expect '^mainboard: exiting with status 3 \(the shutdown did not finish\)$'
# --timer_stop_warn_after: the stop's own warning, before the deadline.
expect 'timer "stuck_worker": Stop\(\) has waited [0-9.]+m?s for its running callback to return \(caller: thread [0-9]+ "[^"]*", in component "stuck" Shutdown\(\)\); still waiting'

# The summary of what is known: a row per component.
grep -qE '^component ' "$out" || fail "no summary table header"
grep -qE '^ticker ' "$out" || fail "no summary row for ticker"
grep -qE '^stuck ' "$out" || fail "no summary row for stuck"

# The same graph on simulated time: the stop cannot make progress either;
# after --shutdown_deadline of wall time the same report, then abort (134).
status=0
timeout 120 "$bin" -d "$dag" --clock=simulated --run_for=1s --shutdown_deadline=3s \
  >"$out" 2>"$err" || status=$?
[ "$status" -ne 124 ] || fail "--clock=simulated: mainboard did not exit within 120 s"
[ "$status" -eq 134 ] || fail "--clock=simulated: exit status $status, want 134 (abort)"
expect '^simulated graph "sim": stuck: Stop\(\) has made no progress for [0-9.]+m?s of wall time'
expect '^simulated graph "sim": components not stopped: "stuck" \(Shutdown\(\) in progress\), "ticker"$'
expect '^simulated graph "sim":   timer "stuck_worker": Stop\(\) waiting [0-9.]+m?s for its running callback; caller: thread [0-9]+ "[^"]*", in component "stuck" Shutdown\(\)$'
expect '^stuck +StuckStop '

# A bad deadline is refused before anything starts.
status=0
"$bin" -d "$dag" --shutdown_deadline=soon >"$out" 2>"$err" || status=$?
[ "$status" -eq 2 ] || fail "--shutdown_deadline=soon: exit status $status, want 2"
expect '^mainboard: flag --shutdown_deadline: "soon" is not a positive duration'
echo PASS
