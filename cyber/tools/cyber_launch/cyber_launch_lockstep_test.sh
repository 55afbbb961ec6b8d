#!/bin/bash
# cyber_launch start --clock=simulated when it goes wrong: the
# sensor_polling example's launch file as two lockstep mainboards,
# cyber_launch their coordinator (see BUILD); a process killed with -9
# mid-run is named, exit 1, nothing left running or in /dev/shm; a missing
# --run_for is refused. (Runs that go right, with equal digests, are
# //examples/sensor_polling:sensor_polling_lockstep_test.)
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
example="$root/examples/sensor_polling"
launch="$root/cyber/tools/cyber_launch/cyber_launch"
out="$TEST_TMPDIR"
notes="$out/shm_files"
# cyber_launch's pid files (one per launch file) in this test's own
# directory: other tests run the same launch file at the same time.
export XDG_RUNTIME_DIR="$out/run"
mkdir -p "$XDG_RUNTIME_DIR"

# shellcheck source=cyber/testing/process_test.sh
source "$root/cyber/testing/process_test.sh"  # pids, domains, the clean-up, fail

# note_children PID: the mainboards cyber_launch PID runs, for the cleanup
# of /dev/shm.
note_children() {
  # shellcheck disable=SC2046
  fastdds_shm_note "$notes" "$1" $(ps -o pid= --ppid "$1" 2>/dev/null || true) || true
}

echo "=== fusion killed with -9 during a run: named, exit 1"
domain=$(fastdds_shm_free_domain)
domains+=("$domain")
timeout 120 env CYBER_DOMAIN_ID="$domain" "$launch" start "$example/sensor_polling.launch" \
  --mainboard="$example/mainboard" --log_dir="$out/logs.kill" --clock=simulated --run_for=600s \
  --speed=10 --step_deadline=5s >"$out/kill.out" 2>"$out/kill.err" &
pid=$!
pids+=($pid)
fusion=""
for ((i = 0; i < 600; i++)); do
  note_children "$pid"
  if grep -q "lockstep: step" "$out/kill.err" 2>/dev/null; then
    fusion=$(sed -n 's/^cyber_launch: started fusion (pid \([0-9]*\)).*/\1/p' "$out/kill.err" | head -1)
  fi
  [ -n "$fusion" ] && break
  sleep 0.1  # bounded to 60 s
done
[ -n "$fusion" ] || fail "no running fusion in a granted run within 60 s"
kill -9 "$fusion"
status=0
wait "$pid" || status=$?
cat "$out/kill.out"
[ "$status" -eq 1 ] || fail "cyber_launch exited $status after fusion was killed, not 1"
grep -q "lockstep simulated time: FAILED: .*fusion" "$out/kill.out" || fail "the failure does not name fusion"
pgrep -P "$pid" >/dev/null 2>&1 && fail "a child of cyber_launch still runs"

echo "=== --clock=simulated without --run_for is refused"
status=0
"$launch" start "$example/sensor_polling.launch" --mainboard="$example/mainboard" --clock=simulated \
  >/dev/null 2>"$out/norun.err" || status=$?
[ "$status" -eq 2 ] && grep -q -- "--clock=simulated needs --run_for" "$out/norun.err" ||
  fail "no --run_for: exit $status, $(cat "$out/norun.err")"
echo "=== a --recording that cannot be played is refused, naming what is wrong"
# refused EXPECTED_TEXT ARG...: exit 2 and EXPECTED_TEXT on stderr.
refused() {
  local want=$1 status=0 d
  shift
  d=$(fastdds_shm_free_domain)
  domains+=("$d")
  CYBER_DOMAIN_ID=$d "$launch" start "$example/sensor_polling.launch" --mainboard="$example/mainboard" \
    --log_dir="$out/logs.refused" "$@" </dev/null >/dev/null 2>"$out/refused.err" || status=$?
  [ "$status" -eq 2 ] && grep -qF -- "$want" "$out/refused.err" ||
    fail "$*: exit $status, not 2 with \"$want\": $(cat "$out/refused.err")"
}
recording="$example/testdata/pollers_10s.mcap"
refused "--recording needs --recording_channels" --clock=simulated --run_for=1s --recording="$recording"
refused "--recording is for --clock=simulated" --recording="$recording" --recording_channels=/sensor/imu
refused "channel \"/sensor/imo\" is not in it (it has: /sensor/imu, /sensor/lidar)" \
  --clock=simulated --run_for=1s --recording="$recording" --recording_channels=/sensor/imo
refused "no-such.mcap" --clock=simulated --run_for=1s --recording="$out/no-such.mcap" \
  --recording_channels=/sensor/imu
echo "PASS"
