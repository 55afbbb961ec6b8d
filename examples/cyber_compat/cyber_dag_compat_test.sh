#!/usr/bin/env bash
# Cyber RT's timer component example graph, loaded by the plain mainboard:
# the class is found only through module_library (dlopen), runs at 100 Hz,
# and shuts down cleanly. Also: a missing library is a clear error.
set -euo pipefail
cd "${TEST_SRCDIR}/${TEST_WORKSPACE}"  # module_library is relative to here
bin=cyber/mainboard/mainboard
out="$("$bin" -d examples/cyber_compat/timer_component_example.dag --run_for=1s \
       --status=never 2>"$TEST_TMPDIR/err")" || { echo "FAIL: exit $?"; cat "$TEST_TMPDIR/err"; exit 1; }
echo "$out"
row="$(grep -E '^timer +TimerComponentSample' <<<"$out")" || { echo "FAIL: no row"; exit 1; }
procs="$(awk '{print $3}' <<<"$row")"
[ "$procs" -ge 90 ] || { echo "FAIL: only $procs procs in 1 s at 100 Hz"; exit 1; }
grep -q "TimerComponentSample init, interval 10 ms" "$TEST_TMPDIR/err" || { echo "FAIL: Init not run"; exit 1; }
# The same graph pointing at a library that does not exist.
sed 's#examples/cyber_compat/libtimer_component_example.so#/nonexistent/libx.so#' \
  examples/cyber_compat/timer_component_example.dag >"$TEST_TMPDIR/missing.dag"
if "$bin" -d "$TEST_TMPDIR/missing.dag" 2>"$TEST_TMPDIR/err2"; then echo "FAIL: accepted"; exit 1; fi
grep -q 'class_name "TimerComponentSample": no such component class' "$TEST_TMPDIR/err2" || { cat "$TEST_TMPDIR/err2"; echo "FAIL: unclear"; exit 1; }
grep -q '/nonexistent/libx.so' "$TEST_TMPDIR/err2" || { echo "FAIL: library not named"; exit 1; }
echo PASS
