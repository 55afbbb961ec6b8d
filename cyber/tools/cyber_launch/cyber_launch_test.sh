#!/usr/bin/env bash
# cyber_launch, the program, against the sensor_polling example's
# mainboards on a random DDS domain of this run's own (CYBER_DOMAIN_ID):
#   1. kill -9 of cyber_launch: no child is left 2 s later (the children
#      die with it: PR_SET_PDEATHSIG);
#   2. the example's sensor_polling.launch: fusion starts after pollers
#      (it waits for /sensor/imu to have a writer) and receives both
#      sensors; the launcher then leaves the DDS domain; a pollers process killed with -9 is respawned (counted
#      1/3) while fusion keeps running; `cyber_launch stop FILE` stops both
#      with SIGINT in reverse start order, the launcher exits 0 and its
#      summary holds each process's exit and own summary table; the pid
#      file is gone, and a second stop finds nothing;
#   3. errors: a bad launch file names FILE:LINE, --help.
#
# Waits are generous bounds on conditions (60 s for what takes about a
# second), except the 2 s of (1), the target under test. Whatever happens,
# the EXIT trap stops what still runs and removes the /dev/shm files the
# run's processes were seen using (fastdds_shm.sh): processes killed with
# -9 leave theirs.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
launch_bin="$root/cyber/tools/cyber_launch/cyber_launch"
mainboard="$root/examples/sensor_polling/mainboard"
example="$root/examples/sensor_polling"
# shellcheck source=cyber/testing/fastdds_shm.sh
source "$root/cyber/testing/fastdds_shm.sh"
out="$TEST_TMPDIR"
notes="$out/shm_files"
export XDG_RUNTIME_DIR="$out/run"  # the pid files
mkdir -p "$XDG_RUNTIME_DIR"
domain=$(fastdds_shm_free_domain)
export CYBER_DOMAIN_ID=$domain
echo "DDS domain $domain"

watched=()  # every pid of the run: launchers and their children
cleanup() {
  local status=$? pid i
  trap - EXIT INT TERM
  for pid in "${watched[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  for ((i = 0; i < 300; i++)); do
    local any=0
    for pid in "${watched[@]}"; do alive "$pid" && any=1; done
    [ "$any" -eq 0 ] && break
    sleep 0.1  # other processes' shutdown; bounded to 30 s
  done
  for pid in "${watched[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  fastdds_shm_remove "$notes" "$domain" || true
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# alive PID: running (a zombie waiting for its reaper is not).
alive() {
  local state
  state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

fail() {
  echo "FAIL: $*"
  local f
  for f in "$out"/*.out "$out"/*.err "$out"/logs*/*.log; do
    [ -f "$f" ] || continue
    echo "--- $f (last 40 lines)"
    tail -40 "$f"
  done
  exit 1
}

note() { fastdds_shm_note "$notes" "${watched[@]}"; }

# until_grep FILE PATTERN WHAT: waits (at most 60 s) for PATTERN in FILE.
until_grep() {
  local file=$1 pattern=$2 what=$3 i
  for ((i = 0; i < 600; i++)); do
    note
    grep -qE "$pattern" "$file" 2>/dev/null && return 0
    sleep 0.1  # polling other processes' output; bounded to 60 s
  done
  fail "no $what within 60 s"
}

# started_pid ERRFILE NAME [N]: the pid of NAME's Nth start (default 1st).
started_pid() {
  grep -E "^cyber_launch: started $2 \(pid [0-9]+" "$1" | sed -n "${3:-1}p" |
    sed -E 's/^.*\(pid ([0-9]+).*$/\1/'
}

# --- 1. kill -9 of cyber_launch leaves no child -----------------------------
cat >"$out/two.launch" <<EOF
<cyber>
  <module><name>pollers</name><dag_conf>$example/pollers.dag</dag_conf>
    <process_name>pollers</process_name></module>
  <module><name>fusion</name><dag_conf>$example/fusion.dag</dag_conf>
    <process_name>fusion</process_name></module>
</cyber>
EOF
"$launch_bin" start "$out/two.launch" --mainboard="$mainboard" --log_dir="$out/logs1" \
  >"$out/kill9.out" 2>"$out/kill9.err" &
launcher=$!
watched+=("$launcher")
until_grep "$out/kill9.err" "started fusion \(pid" "fusion started by cyber_launch"
pollers=$(started_pid "$out/kill9.err" pollers)
fusion=$(started_pid "$out/kill9.err" fusion)
watched+=("$pollers" "$fusion")
until_grep "$out/logs1/pollers.log" 'started component "lidar"' "pollers' components up"
until_grep "$out/logs1/fusion.log" 'started component "health"' "fusion's components up"
note
kill -KILL "$launcher"
killed_at=$(date +%s%N)
wait "$launcher" 2>/dev/null || true
gone=0
for ((i = 0; i < 40; i++)); do  # 2 s: the target
  if ! alive "$pollers" && ! alive "$fusion"; then gone=1; break; fi
  sleep 0.05
done
[ "$gone" -eq 1 ] || fail "a child of cyber_launch still runs 2 s after kill -9 (pollers $pollers, fusion $fusion)"
echo "children gone $(( ($(date +%s%N) - killed_at) / 1000000 )) ms (at most; polled every 50 ms) after kill -9 of cyber_launch"
# The pid file of the killed launcher names a dead pid: a new start takes it.

# --- 1b. a stop while the processes are still starting ---------------------
# Each mainboard starts with SIGINT blocked until cyber::Init can take it:
# stopped at once, it still ends the orderly way, with its summary. The
# stop must come before Init: a wrapper (bash keeps the signal mask across
# its sleep and exec, dash would clear it) holds each mainboard back 2 s.
printf '#!/bin/bash\nsleep 2\nexec "%s" "$@"\n' "$mainboard" >"$out/slow_mainboard"
chmod +x "$out/slow_mainboard"
"$launch_bin" start "$out/two.launch" --mainboard="$out/slow_mainboard" --log_dir="$out/logs1b" \
  >"$out/early.out" 2>"$out/early.err" &
launcher=$!
watched+=("$launcher")
until_grep "$out/early.err" "started fusion \(pid" "fusion started by cyber_launch"
kill -INT "$launcher"
status=0
wait "$launcher" || status=$?
[ "$status" -eq 0 ] || fail "cyber_launch exited $status after a stop during start-up"
grep -qE "^pollers +- +1 +0/3 +exit 0 +INT " "$out/early.out" ||
  fail "pollers stopped while starting: not exit 0 after INT"
grep -qE "^fusion +- +1 +0/3 +exit 0 +INT " "$out/early.out" ||
  fail "fusion stopped while starting: not exit 0 after INT"
echo "a stop during start-up: both mainboards ended with exit 0"

# --- 2. the example's launch file: readiness, respawn, stop ---------------
"$launch_bin" start "$example/sensor_polling.launch" --mainboard="$mainboard" \
  --log_dir="$out/logs2" >"$out/example.out" 2>"$out/example.err" &
launcher=$!
watched+=("$launcher")
until_grep "$out/example.err" "started fusion \(pid" "fusion started"
pollers=$(started_pid "$out/example.err" pollers)
fusion=$(started_pid "$out/example.err" fusion)
watched+=("$pollers" "$fusion")
# Started in order: pollers, then fusion once /sensor/imu had a writer.
[ "$(grep -nE '^cyber_launch: started pollers' "$out/example.err" | cut -d: -f1)" -lt \
  "$(grep -nE '^cyber_launch: started fusion' "$out/example.err" | cut -d: -f1)" ] ||
  fail "fusion started before pollers"
until_grep "$out/logs2/fusion.log" 'health "health": last [0-9]+ ms: imu [1-9][0-9]* msgs, lidar [1-9][0-9]* msgs' \
  "health report with IMU and lidar messages"

# Nothing waits any more: the launcher has left the DDS domain.
until_grep "$out/example.err" "DDS transport: cyber_launch \(host [^,]*, pid $launcher\) left domain" \
  "the launcher leaving the domain once every process started"

# kill -9 of pollers: respawned, counted; fusion keeps running.
note
kill -KILL "$pollers"
until_grep "$out/example.err" "started pollers \(pid [0-9]+, respawn 1/3\)" "pollers respawned"
grep -qE "pollers \(pid $pollers\) exited: signal 9 \(KILL\); respawn 1/3 in 1s" "$out/example.err" ||
  fail "the kill -9 of pollers is not reported as respawn 1/3"
pollers2=$(started_pid "$out/example.err" pollers 2)
watched+=("$pollers2")
alive "$fusion" || fail "fusion (pid $fusion) did not keep running while pollers was respawned"
[ "$(grep -c 'started fusion' "$out/example.err")" -eq 1 ] || fail "fusion was restarted"
# The new pollers is up and fusion hears it again.
lines=$(grep -c 'health "health"' "$out/logs2/fusion.log")
for ((i = 0; i < 600; i++)); do
  note
  # A health report after the respawn with both sensors counted.
  tail -n +1 "$out/logs2/fusion.log" | grep -E 'health "health":' | tail -n +$((lines + 1)) |
    grep -qE 'imu [1-9][0-9]* msgs, lidar [1-9][0-9]* msgs' && break
  sleep 0.1  # polling another process's log; bounded to 60 s
done
[ "$i" -lt 600 ] || fail "fusion heard no IMU and lidar from the respawned pollers within 60 s"

# stop FILE: SIGINT to cyber_launch, which stops both and exits 0.
"$launch_bin" stop "$example/sensor_polling.launch" >"$out/stop.out" 2>&1 ||
  fail "cyber_launch stop: $(cat "$out/stop.out")"
status=0
wait "$launcher" || status=$?
[ "$status" -eq 0 ] || fail "cyber_launch exited $status after stop"
cat "$out/example.out"
grep -qE "ended: stop requested \(exit code 0\)" "$out/example.out" || fail "no end line"
grep -qE "^pollers +- +2 +1/3 +exit 0 +INT " "$out/example.out" || fail "pollers' row: 2 starts, 1/3 respawns, exit 0 after INT"
grep -qE "^fusion +- +1 +0/3 +exit 0 +INT " "$out/example.out" || fail "fusion's row: 1 start, exit 0 after INT"
[ "$(grep -nE 'SIGINT to fusion' "$out/example.err" | cut -d: -f1)" -lt \
  "$(grep -nE 'SIGINT to pollers' "$out/example.err" | cut -d: -f1)" ] ||
  fail "SIGINT not in reverse start order (fusion first)"
# Each process's own table, from its last run.
awk '/^== pollers/ { s = 1 } /^== fusion/ { s = 0 } s && $1 == "imu" && $3 > 0 { ok = 1 } END { exit !ok }' \
  "$out/example.out" || fail "no IMU poller row in the pollers' own summary"
awk '/^== fusion/ { s = 1 } s && $1 == "fusion" && $3 > 0 { ok = 1 } END { exit !ok }' \
  "$out/example.out" || fail "no fusion row in the fusion's own summary"
[ -z "$(ls -A "$XDG_RUNTIME_DIR/cyber_launch" | grep -v '^two.launch-')" ] ||
  fail "pid file left: $(ls "$XDG_RUNTIME_DIR/cyber_launch")"
if "$launch_bin" stop "$example/sensor_polling.launch" >"$out/stop2.out" 2>&1; then
  fail "a second stop found a launch"
fi
grep -q "no cyber_launch runs" "$out/stop2.out" || fail "second stop: $(cat "$out/stop2.out")"

# --- 3. errors and help -------------------------------------------------
printf '<cyber>\n  <module>\n    <name>x</name>\n    <dag_conf>x.dag</dag_conf>\n    <respawn_limit>many</respawn_limit>\n  </module>\n</cyber>\n' >"$out/bad.launch"
status=0
"$launch_bin" start "$out/bad.launch" >"$out/bad.out" 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "a bad launch file: exit $status, not 2"
grep -qF "$out/bad.launch:4: <dag_conf>: \"x.dag\" is not a file" "$out/bad.out" ||
  fail "bad launch file: $(cat "$out/bad.out")"
"$launch_bin" --help | grep -q "usage: cyber_launch start FILE.launch" || fail "--help"
echo PASS
