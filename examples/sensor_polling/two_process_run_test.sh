#!/usr/bin/env bash
# The sensor-polling graph split over two mainboard processes that talk over
# DDS: pollers.dag in one, fusion.dag in the other, on a random DDS domain
# of this run's own (CYBER_DOMAIN_ID), so other runs of this test and other
# DDS processes of the host never meet it. Checks that
#   - both split graphs start without a graph warning (--strict_graph would
#     refuse to start them, and no summary lists one);
#   - the fusion process received the pollers' messages: a health report
#     with both the IMU and the lidar count non-zero, and fused IMU
#     readings in its summary;
#   - both stop cleanly on SIGINT (the path --run_for takes), exit 0.
#
# No timing assertion: each wait is a generous deadline on a condition
# (60 s for what takes about a second on an idle machine), --run_for=120s
# bounds each process even if this script is killed, and the fusion
# process is stopped as soon as the condition holds. Whatever happens, the
# EXIT trap stops what is still running (SIGINT, SIGKILL after 30 s) and
# removes the files in /dev/shm that the two processes left
# (fastdds_shm.sh).
set -euo pipefail
dir="${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/sensor_polling"
bin="$dir/mainboard"
# shellcheck source=cyber/testing/fastdds_shm.sh
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/cyber/testing/fastdds_shm.sh"
out="$TEST_TMPDIR"
notes="$out/shm_files"
domain=$(fastdds_shm_free_domain)
export CYBER_DOMAIN_ID=$domain
echo "DDS domain $domain"

pids=()
cleanup() {
  local status=$? pid
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then stop "$pid" || true; fi
  done
  fastdds_shm_remove "$notes" "$domain" || true
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM  # bazel's timeout

fail() {
  echo "FAIL: $*"
  for f in pollers fusion; do
    echo "--- $f stdout"; cat "$out/$f.out" 2>/dev/null || true
    echo "--- $f stderr (last 30 lines)"; tail -30 "$out/$f.err" 2>/dev/null || true
  done
  exit 1
}

# until_log NAME PATTERN WHAT: waits (at most 60 s) for PATTERN in the log
# of process NAME, noting the /dev/shm files of the processes meanwhile.
until_log() {
  local name=$1 pattern=$2 what=$3 pid i
  for ((i = 0; i < 600; i++)); do
    fastdds_shm_note "$notes" "${pids[@]}"
    grep -qE "$pattern" "$out/$name.err" && return 0
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || fail "a mainboard exited while waiting for $what"
    done
    sleep 0.1  # polling other processes' logs; bounded to 60 s
  done
  fail "no $what within 60 s"
}

start() {  # NAME: mainboard on NAME.dag, in the background
  "$bin" -d "$dir/$1.dag" --run_for=120s --strict_graph --status=never \
    >"$out/$1.out" 2>"$out/$1.err" &
  pids+=("$!")
}

start pollers
until_log pollers 'started component "lidar"' "pollers started"
pollers_pid=${pids[0]}
start fusion
until_log fusion 'started component "health"' "fusion started"
fusion_pid=${pids[1]}
until_log fusion 'health "health": last [0-9]+ ms: imu [1-9][0-9]* msgs, lidar [1-9][0-9]* msgs' \
  "health report with IMU and lidar messages from the pollers"
grep -E 'health "health":' "$out/fusion.err" | sed 's/^.*\] //'

status=0
stop "$fusion_pid" || status=$?
[ "$status" -eq 0 ] || fail "fusion mainboard: exit status $status after SIGINT"
stop "$pollers_pid" || status=$?
[ "$status" -eq 0 ] || fail "pollers mainboard: exit status $status after SIGINT"
echo "--- pollers"; cat "$out/pollers.out"
echo "--- fusion"; cat "$out/fusion.out"

# Summary columns: component class procs failed ...
procs() {  # NAME COMPONENT: its procs in NAME's summary (empty: no row)
  awk -v c="$2" '$1 == c { print $3 }' "$out/$1.out"
}
[ "$(procs pollers imu)" -gt 0 ] 2>/dev/null || fail "no IMU poller calls in the pollers' summary"
[ "$(procs pollers lidar)" -gt 0 ] 2>/dev/null || fail "no lidar poller calls in the pollers' summary"
[ "$(procs fusion fusion)" -gt 0 ] 2>/dev/null || fail "fusion fused no IMU reading"
# The channel table names the pollers' process as the sensors' writer.
for ch in /sensor/imu /sensor/lidar; do
  grep -qE "^$ch +[^ ]+ +[0-9]+/[0-9]+ +mainboard@[^ ]+:$pollers_pid " "$out/fusion.out" ||
    fail "fusion's channel table does not show $ch written by the pollers (pid $pollers_pid)"
done
for f in pollers fusion; do
  ! grep -q '^warnings:' "$out/$f.out" || fail "graph warnings in the $f summary"
done
# A clean stop leaves nothing in /dev/shm; say so if it did (the trap
# removes it either way).
left=$(fastdds_shm_remove "$notes" "$domain")
[ -z "$left" ] || echo "note: the clean stop left in /dev/shm:"$'\n'"$left"
echo PASS
