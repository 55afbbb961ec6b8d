#!/usr/bin/env bash
# cyber_bridge with Foxglove's own client. On a random DDS domain of this
# run's own (CYBER_DOMAIN_ID): the sensor_polling example's pollers in one
# mainboard (IMU 100 Hz on /sensor/imu), cyber_bridge on a free port, and
# foxglove_client_check.js (@foxglove/ws-protocol's FoxgloveClient over
# `ws`, from tools/npm) which waits for the advertise of /sensor/imu,
# subscribes, decodes 50 IMU messages with the advertised schema and checks
# their fields. With bridge_test_peer on the graph too (a service and a
# command/answer channel pair), foxglove_client_services_check.js calls the
# service through the bridge and decodes the response, and publishes a
# command through the bridge until the peer's answer comes back through it.
# Checks also that
#   - the bridge listens on 127.0.0.1 only (no --address given);
#   - it sees the client leave, counts the messages it forwarded;
#   - it and the mainboard stop cleanly on SIGINT (exit 0).
# That a channel is read only while a client subscribes, once for all
# clients, is //cyber/bridge:foxglove_bridge_test's (a graph driven by hand).
#
# No timing assertion: each wait is a generous deadline on a condition (60 s
# for what takes a second on an idle machine); --run_for bounds each process
# even if this script is killed. The EXIT trap stops what still runs and
# removes the files the processes left in /dev/shm (fastdds_shm.sh).
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
example="$root/examples/sensor_polling"
bridge="$root/cyber/tools/cyber_bridge/cyber_bridge"
check="$root/cyber/bridge/testing/foxglove_client_check.js"
services_check="$root/cyber/bridge/testing/foxglove_client_services_check.js"
peer="$root/tests/bridge/bridge_test_peer"
# shellcheck source=cyber/testing/fastdds_shm.sh
source "$root/cyber/testing/fastdds_shm.sh"
out="$TEST_TMPDIR"
notes="$out/shm_files"

if [ -z "${CYBER_NPM_MODULES:-}" ] || [ ! -d "${CYBER_NPM_MODULES}/@foxglove/ws-protocol" ]; then
  echo "FAIL: Foxglove's client is not installed (CYBER_NPM_MODULES=${CYBER_NPM_MODULES:-unset})."
  echo "Run: bash tools/setup.sh   (npm ci --prefix tools/npm; it also writes the"
  echo "'test --test_env=CYBER_NPM_MODULES=...' line of .bazelrc.generated)"
  exit 1
fi
command -v node >/dev/null || { echo "FAIL: node is not installed (tools/setup.sh installs nodejs)"; exit 1; }

domain=$(fastdds_shm_free_domain)
export CYBER_DOMAIN_ID=$domain
echo "DDS domain $domain"

pids=()
cleanup() {
  local status=$? pid
  trap - EXIT INT TERM
  exec 3>&- 2>/dev/null || true  # the peer's stdin, if open: it exits
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
  for f in pollers peer bridge client services_client; do
    echo "--- $f stdout"; cat "$out/$f.out" 2>/dev/null || true
    echo "--- $f stderr (last 30 lines)"; tail -30 "$out/$f.err" 2>/dev/null || true
  done
  exit 1
}

# until_grep FILE PATTERN WHAT: waits (at most 60 s) for PATTERN in FILE,
# noting the /dev/shm files of the processes meanwhile.
until_grep() {
  local file=$1 pattern=$2 what=$3 pid i
  for ((i = 0; i < 600; i++)); do
    fastdds_shm_note "$notes" "${pids[@]}"
    grep -qE "$pattern" "$file" 2>/dev/null && return 0
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || fail "a process exited while waiting for $what"
    done
    sleep 0.1  # polling other processes' output; bounded to 60 s
  done
  fail "no $what within 60 s"
}

"$example/mainboard" -d "$example/pollers.dag" --process_name=pollers --run_for=180s \
  --status=never >"$out/pollers.out" 2>"$out/pollers.err" &
pids+=("$!")
pollers_pid=$!
until_grep "$out/pollers.err" 'started component "imu"' "IMU poller started"

# The peer runs until its stdin (this script's fd 3) closes: at the end,
# or when this script dies.
mkfifo "$out/peer_in"
"$peer" bridge "$domain" <"$out/peer_in" >"$out/peer.out" 2>"$out/peer.err" &
pids+=("$!")
peer_pid=$!
exec 3>"$out/peer_in"
until_grep "$out/peer.out" '^ready' "the peer ready"

"$bridge" --port=0 --run_for=180s >"$out/bridge.out" 2>"$out/bridge.err" &
pids+=("$!")
bridge_pid=$!
until_grep "$out/bridge.out" 'serving .* on ws://127\.0\.0\.1:[0-9]+ ' "bridge listening"
port=$(sed -nE 's|.*ws://127\.0\.0\.1:([0-9]+) .*|\1|p' "$out/bridge.out")
echo "bridge on port $port"
until_grep "$out/bridge.err" 'advertised /sensor/imu ' "/sensor/imu advertised"

# Bound to the loopback address only.
listening=$(ss -Hltn "sport = :$port" | awk '{ print $4 }')
[ "$listening" = "127.0.0.1:$port" ] || fail "the bridge listens on '$listening', not 127.0.0.1:$port only"

node "$check" "ws://127.0.0.1:$port" /sensor/imu 50 60 >"$out/client.out" 2>"$out/client.err" ||
  fail "Foxglove's client did not decode 50 IMU messages"
cat "$out/client.out"
grep -q '^decoded 50 messages on /sensor/imu' "$out/client.out" || fail "no decode summary"
until_grep "$out/bridge.err" 'client 1 left' "the client's departure"

node "$services_check" "ws://127.0.0.1:$port" 60 >"$out/services_client.out" \
  2>"$out/services_client.err" || fail "Foxglove's client: service call or publish failed"
cat "$out/services_client.out"
grep -q '^received 7 8' "$out/peer.out" || fail "the peer did not receive the published command"

status=0
stop "$bridge_pid" || status=$?
[ "$status" -eq 0 ] || fail "cyber_bridge: exit status $status after SIGINT"
forwarded=$(sed -nE 's/.*; ([0-9]+) messages forwarded.*/\1/p' "$out/bridge.out")
[ "${forwarded:-0}" -ge 50 ] || fail "the bridge says it forwarded '${forwarded}' messages"
cat "$out/bridge.out"
stop "$pollers_pid" || status=$?
[ "$status" -eq 0 ] || fail "pollers mainboard: exit status $status after SIGINT"
exec 3>&-  # the peer's stdin: it exits
for ((i = 0; i < 300; i++)); do
  kill -0 "$peer_pid" 2>/dev/null || break
  sleep 0.1  # the peer's shutdown; bounded to 30 s
done
wait "$peer_pid" || status=$?
[ "$status" -eq 0 ] || fail "bridge_test_peer: exit status $status after its stdin closed"
left=$(fastdds_shm_remove "$notes" "$domain")
[ -z "$left" ] || echo "note: the clean stop left in /dev/shm:"$'\n'"$left"
echo PASS
