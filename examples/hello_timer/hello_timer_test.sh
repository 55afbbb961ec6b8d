#!/usr/bin/env bash
# Runs hello_timer for 10 polls of 5 ms and checks its report: every poll
# printed, a non-negative lateness on each (never early), and the summary.
set -euo pipefail
bin="${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/hello_timer/hello_timer"
out="$("$bin" --period=5ms --cycles=10)"
echo "$out"
[ "$(grep -c '^poll ' <<<"$out")" -eq 10 ] || { echo "FAIL: expected 10 poll lines"; exit 1; }
if grep -E 'late +-' <<<"$out"; then echo "FAIL: a poll ran before it was due"; exit 1; fi
grep -q '^done: 10 polls' <<<"$out" || { echo "FAIL: no summary line"; exit 1; }
# Bad input gets a clear error and a non-zero exit.
if err="$("$bin" --period=banana --cycles=1 2>&1)"; then echo "FAIL: bad period accepted"; exit 1; fi
grep -q 'flag --period: "banana" is not a duration' <<<"$err" || { echo "FAIL: unclear error: $err"; exit 1; }
if err="$("$bin" --period=0s --cycles=1 2>&1)"; then echo "FAIL: zero period accepted"; exit 1; fi
grep -q 'timer "poller": period 0 must be positive' <<<"$err" || { echo "FAIL: unclear error: $err"; exit 1; }
echo PASS
