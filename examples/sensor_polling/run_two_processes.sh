#!/usr/bin/env bash
# The sensor-polling graph in two processes: builds mainboard, starts one on
# pollers.dag (IMU and lidar pollers) and one on fusion.dag (fusion and
# health monitor), which receives the pollers' messages over DDS:
#
#   bash examples/sensor_polling/run_two_processes.sh [SECONDS]
#
# runs them for SECONDS (default 10; 0: until Ctrl-C), or until Ctrl-C,
# then stops both with SIGINT and prints both summaries (from any directory:
# it builds and runs in the workspace the script is in). The fusion
# process's health reports (once a second: the IMU and lidar messages that
# reached it) are shown as they come.
#
# Both join the DDS domain CYBER_DOMAIN_ID if it is set, else a random one
# that no process of this host uses, so they do not meet other mainboards
# (Cyber RT's default domain is 80). Shared memory and loopback only,
# unless CYBER_IP is set (cyber/transport/dds/dds_transport.h).
#
# Leaves nothing behind: on any exit (the end, Ctrl-C, an error) the trap
# stops what still runs (SIGINT; SIGKILL if it has not exited 30 s later)
# and removes the files in /dev/shm that the two processes left
# (fastdds_shm.sh; a clean stop leaves none). The logs stay in a temporary
# directory, printed at the start.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=examples/sensor_polling/fastdds_shm.sh
source "$here/fastdds_shm.sh"
seconds=${1:-10}
case "$seconds" in '' | *[!0-9]*)
  echo "usage: $0 [SECONDS]  (default 10; 0: until Ctrl-C)" >&2
  exit 2
  ;;
esac

cd "$here/../.."
bazel build //examples/sensor_polling:mainboard
bin="$(bazel info bazel-bin 2>/dev/null)/examples/sensor_polling/mainboard"
domain=${CYBER_DOMAIN_ID:-$(fastdds_shm_free_domain)}
export CYBER_DOMAIN_ID=$domain
logs=$(mktemp -d "${TMPDIR:-/tmp}/sensor_polling_two_processes.XXXXXX")
notes="$logs/shm_files"

pids=()
tail_pid=
# stop PID: SIGINT, then SIGKILL if it is still running 30 s later (its
# own --shutdown_deadline is 5 s); returns its exit status.
stop() {
  local pid=$1 i status=0
  kill -INT "$pid" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "pid $pid did not stop within 30 s of SIGINT: SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" || status=$?
  return "$status"
}
cleanup() {
  local status=$? pid
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then stop "$pid" || true; fi
  done
  if [ -n "$tail_pid" ]; then kill "$tail_pid" 2>/dev/null || true; fi
  fastdds_shm_remove "$notes" "$domain" || true
  exit "$status"
}
trap cleanup EXIT
interrupted=0
trap 'interrupted=1' INT TERM

start() {  # NAME: mainboard on NAME.dag, in the background
  # In a session of its own: Ctrl-C reaches this script only, which then
  # sends one SIGINT (a second one would kill mainboard without a summary).
  setsid "$bin" -d "examples/sensor_polling/$1.dag" --status=never \
    >"$logs/$1.out" 2>"$logs/$1.err" &
  pids+=("$!")
}

echo "DDS domain $domain; logs in $logs"
start pollers
start fusion
pollers_pid=${pids[0]}
fusion_pid=${pids[1]}
# The health reports, as they come (the tail ends with the fusion process).
tail --pid="$fusion_pid" -n +1 -f "$logs/fusion.err" 2>/dev/null |
  grep --line-buffered -E 'health "health":|DDS transport|launcher: ' | sed -u 's/^.*\] /fusion: /' &
tail_pid=$!
if [ "$seconds" -eq 0 ]; then
  echo "running until Ctrl-C"
else
  echo "running for $seconds s (Ctrl-C to stop earlier)"
fi
end=$((SECONDS + seconds))
while [ "$interrupted" -eq 0 ] && { [ "$seconds" -eq 0 ] || [ "$SECONDS" -lt "$end" ]; }; do
  fastdds_shm_note "$notes" "${pids[@]}"
  if ! kill -0 "$pollers_pid" 2>/dev/null || ! kill -0 "$fusion_pid" 2>/dev/null; then
    echo "a mainboard exited early" >&2
    break
  fi
  sleep 0.2
done

echo "stopping both (SIGINT)"
status=0
stop "$fusion_pid" || status=$?
stop "$pollers_pid" || status=$?
wait "$tail_pid" 2>/dev/null || true
tail_pid=
for name in pollers fusion; do
  echo
  echo "== $name ($name.dag) =="
  cat "$logs/$name.out"
  grep -E '^E|^F|mainboard: ' "$logs/$name.err" || true
done
exit "$status"
