#!/usr/bin/env bash
# The multi-host scenarios: several computers made as network namespaces
# (tools/hosts/lib.sh), one robot program per process on them, each
# scenario a check with a verdict that does not depend on the machine's
# speed (counts, with generous bounded waits; never "within N ms").
#
#   bash tools/hosts/scenarios.sh              # every scenario
#   bash tools/hosts/scenarios.sh multicast loss   # some
#   LOSS_SECONDS=60 bash tools/hosts/scenarios.sh loss
#
# Needs root (CI runs it from tools/run_tests.sh, config "hosts", outside
# Bazel's sandbox, where namespaces cannot be made). Where namespaces
# cannot be made it says why and exits 0 having run nothing ("hosts:
# skipped: ..."). It builds what it runs (bazel build), prints PASSED or
# FAILED per scenario (with the tail of the logs of a failed one) and ends
# with "hosts: N passed, N failed"; exit status 1 if any failed.
#
# Every scenario runs in a subshell whose EXIT trap kills its processes
# and deletes its namespaces (hosts_end), whatever happens; the logs go to
# a temporary directory removed at the end.
#
# Scenarios (docs/transport.md, "Several computers", says what each proves):
#   multicast         the sensor_polling example split over two hosts
#                     (pollers.dag | fusion.dag), discovery by multicast
#   discovery_server  multicast dropped on both hosts: nothing meets; with
#                     CYBER_DISCOVERY_SERVER naming a `fastdds discovery`
#                     server on host a, everything does
#   three_hosts       three hosts, each reading what another writes
#   bad_cyber_ip      CYBER_IP names an address the host does not have:
#                     an error naming the variable and the host's addresses
#   (more are added by the sections below)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tools/hosts/lib.sh
source "$here/lib.sh"
cd "$root"

ALL_SCENARIOS="multicast discovery_server three_hosts bad_cyber_ip"
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && read -r -a scenarios <<<"$ALL_SCENARIOS"

if ! why=$(hosts_can_run); then
  echo "hosts: skipped: $why"
  echo "hosts: 0 passed, 0 failed"
  exit 0
fi

if ! bazel build --noshow_progress //tests/hosts:host_peer //examples/sensor_polling:mainboard; then
  echo "FAILED [hosts] build"
  echo "hosts: 0 passed, 1 failed"
  exit 1
fi
bin=$(bazel info bazel-bin 2>/dev/null)
PEER="$bin/tests/hosts/host_peer"
MAINBOARD="$bin/examples/sensor_polling/mainboard"
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/cyber_hosts.XXXXXX")
# KEEP_LOGS=DIR: each scenario's logs are copied to DIR/<scenario>/.
trap 'rm -rf "$LOGS"' EXIT

# --- helpers of the scenarios -------------------------------------------------

# peer HOST NAME [env...] -- [flags...]: host_peer on HOST, its output in
# $LOGS/NAME.log (stdout and stderr), its pid in $HOST_PID.
peer() {
  local host=$1 name=$2
  shift 2
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    envs+=("$1")
    shift
  done
  [ "${1:-}" = -- ] && shift
  host_run "$host" "$LOGS/$name.log" env CYBER_DOMAIN_ID="$DOMAIN" \
    CYBER_IP="$(host_ip "$host")" "${envs[@]}" "$PEER" "$@"
}

# sent_at_least LOG CHANNEL N: the writer has written N messages of CHANNEL.
sent_at_least() {
  local n
  n=$(field "$(last_line "$1" "sent $2 ")" count)
  [ "${n:-0}" -ge "$3" ]
}

# recv_at_least LOG CHANNEL N: the reader has N distinct messages of CHANNEL.
recv_at_least() {
  local n
  n=$(field "$(last_line "$1" "recv $2 ")" count)
  [ "${n:-0}" -ge "$3" ]
}

# A fact about the last "recv" line of CHANNEL in LOG: recv_field LOG CH F
recv_field() { field "$(last_line "$1" "recv $2 ")" "$3"; }

has_line() { grep -aq -- "$2" "$1" 2>/dev/null; }

# --- scenarios -------------------------------------------------------------------

scenario_multicast() {
  host_add a 1 && host_add b 2 || return 1
  local dag=$root/examples/sensor_polling
  host_run a "$LOGS/pollers.log" env CYBER_DOMAIN_ID="$DOMAIN" CYBER_IP="$(host_ip a)" \
    "$MAINBOARD" -d "$dag/pollers.dag" --status=never
  local pollers=$HOST_PID
  host_run b "$LOGS/fusion.log" env CYBER_DOMAIN_ID="$DOMAIN" CYBER_IP="$(host_ip b)" \
    "$MAINBOARD" -d "$dag/fusion.dag" --status=never
  local fusion=$HOST_PID
  WATCH_PIDS="$pollers $fusion"
  # Three health reports in a row with both sensors heard: discovery
  # across the link, and the data flowing.
  healthy() {
    [ "$(grep -a 'health "health"' "$LOGS/fusion.log" | tail -n 3 |
      grep -c -E 'imu [1-9][0-9]* msgs, lidar [1-9][0-9]* msgs')" -eq 3 ]
  }
  wait_for 90 "fusion on host b hears the IMU and the lidar of host a" healthy || return 1
  has_line "$LOGS/fusion.log" "peer mainboard (host a, pid" || {
    echo "  fusion did not log its peer on host a by name" >&2
    return 1
  }
  stop_pid "$fusion" || { echo "  fusion's mainboard exited with $?" >&2; return 1; }
  stop_pid "$pollers" || { echo "  the pollers' mainboard exited with $?" >&2; return 1; }
  # Both summaries name the other host's process in the channel table.
  grep -aq 'mainboard@a:' "$LOGS/fusion.log" || {
    echo "  fusion's channel table names no writer on host a" >&2
    return 1
  }
}

scenario_discovery_server() {
  host_add a 1 && host_add b 2 || return 1
  local h
  for h in a b; do
    host_exec "$h" iptables -A OUTPUT -d 224.0.0.0/4 -j DROP || return 1
    host_exec "$h" iptables -A INPUT -d 224.0.0.0/4 -j DROP || return 1
  done
  # Without the server, multicast gone: the two never meet. (A control:
  # it shows the server is what joins them below. It waits until the
  # writer has written 300 messages, 3 s at 100 Hz, however slow the
  # machine; a reader that met it would have some.)
  peer a alone_w -- --write=/hosts/data
  local w=$HOST_PID
  peer b alone_r -- --read=/hosts/data
  local r=$HOST_PID
  WATCH_PIDS="$w $r"
  wait_for 60 "the control writer writes 300 messages" \
    sent_at_least "$LOGS/alone_w.log" /hosts/data 300 || return 1
  if [ "$(recv_field "$LOGS/alone_r.log" /hosts/data count)" != 0 ]; then
    echo "  multicast was dropped, yet the reader got messages without a server" >&2
    return 1
  fi
  stop_pid "$w"
  stop_pid "$r"
  # The server on host a; both processes its clients.
  host_run a "$LOGS/server.log" fastdds discovery -i 0 -l "$(host_ip a)" -p 11811
  local server=$HOST_PID
  local named="CYBER_DISCOVERY_SERVER=$(host_ip a):11811"
  peer a ds_w "$named" -- --write=/hosts/data --wait_readers
  w=$HOST_PID
  peer b ds_r "$named" -- --read=/hosts/data
  r=$HOST_PID
  WATCH_PIDS="$server $w $r"
  wait_for 90 "the reader on host b gets 300 messages through the discovery server" \
    recv_at_least "$LOGS/ds_r.log" /hosts/data 300 || return 1
  [ "$(recv_field "$LOGS/ds_r.log" /hosts/data missing)" = 0 ] || {
    echo "  reliable messages missing" >&2
    return 1
  }
  # Multicast really was dropped: the rules counted packets.
  local dropped
  dropped=$(host_exec a iptables -L OUTPUT -v -x -n | awk '/224.0.0.0/ {print $1}')
  echo "  multicast packets dropped on host a: $dropped"
  stop_pid "$r" || return 1
  stop_pid "$w" || return 1
  kill -INT "$server" 2>/dev/null
}

scenario_three_hosts() {
  host_add a 1 && host_add b 2 && host_add c 3 || return 1
  peer a a -- --write=/hosts/ab --read=/hosts/ca
  peer b b -- --read=/hosts/ab
  peer c c -- --read=/hosts/ab --write=/hosts/ca
  WATCH_PIDS=$(jobs -p | tr '\n' ' ')
  local ok=0 log ch
  for log in b:/hosts/ab c:/hosts/ab a:/hosts/ca; do
    ch=${log#*:}
    log=${log%%:*}
    wait_for 90 "host $log reads 300 messages of $ch" \
      recv_at_least "$LOGS/$log.log" "$ch" 300 || ok=1
    [ "$(recv_field "$LOGS/$log.log" "$ch" missing)" = 0 ] || {
      echo "  host $log: reliable messages of $ch missing" >&2
      ok=1
    }
  done
  # Host b and c both see host a's writer, and a sees c's.
  [ "$(recv_field "$LOGS/b.log" /hosts/ab writers)" = 1 ] || ok=1
  [ "$(recv_field "$LOGS/c.log" /hosts/ab writers)" = 1 ] || ok=1
  return "$ok"
}

scenario_bad_cyber_ip() {
  host_add a 1 && host_add b 2 || return 1
  host_run b "$LOGS/bad_ip.log" env CYBER_DOMAIN_ID="$DOMAIN" CYBER_IP=198.18.0.77 \
    "$PEER" --write=/hosts/data
  local p=$HOST_PID
  wait_for 60 "the error naming CYBER_IP" has_line "$LOGS/bad_ip.log" "CYBER_IP" || return 1
  local line
  line=$(grep -a 'CYBER_IP' "$LOGS/bad_ip.log" | head -n 1)
  echo "  $line"
  local want
  for want in '"198.18.0.77"' 'host "b"' 'eth0 198.18.0.2' 'lo 127.0.0.1'; do
    [[ "$line" == *"$want"* ]] || {
      echo "  the error does not say $want" >&2
      return 1
    }
  done
  stop_pid "$p" || return 1
}

# --- running them ----------------------------------------------------------------

passed=0
failed=0
for s in "${scenarios[@]}"; do
  if ! declare -F "scenario_$s" >/dev/null; then
    echo "FAILED [hosts] $s: no such scenario (have: $ALL_SCENARIOS)"
    failed=$((failed + 1))
    continue
  fi
  start=$SECONDS
  echo "--- hosts: $s"
  (
    trap 'hosts_end' EXIT
    trap 'exit 130' INT TERM
    DOMAIN=$((100 + RANDOM % 100))
    hosts_begin || exit 1
    "scenario_$s"
  )
  status=$?
  if [ "$status" -eq 0 ]; then
    echo "PASSED [hosts] $s ($((SECONDS - start)) s)"
    passed=$((passed + 1))
  else
    echo "FAILED [hosts] $s ($((SECONDS - start)) s); the logs' last lines:"
    for f in "$LOGS"/*.log; do
      [ -e "$f" ] || continue
      echo "  == $(basename "$f")"
      tail -n 15 "$f" | sed 's/^/  | /'
    done
    failed=$((failed + 1))
  fi
  if [ -n "${KEEP_LOGS:-}" ]; then
    mkdir -p "$KEEP_LOGS/$s" && cp "$LOGS"/* "$KEEP_LOGS/$s/" 2>/dev/null
  fi
  rm -f "$LOGS"/*
done
# Nothing of ours is left: no namespace, no process.
left=$(ip netns list 2>/dev/null | grep -c '^cyh' || true)
if [ "$left" -ne 0 ]; then
  echo "FAILED [hosts] namespaces left behind:"
  ip netns list | grep '^cyh'
  failed=$((failed + 1))
fi
echo "hosts: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
