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
#   security          a robot's key set (tools/make_security_set.sh) on
#                     three hosts: authorised processes talk; a process
#                     with another CA's certificate, and one without
#                     security, read nothing and write nothing anyone
#                     accepts, and the robot's processes log the refusal; a
#                     process allowed to read /sensor/imu but not to write
#                     /control/command is refused its writer, and reads
#   capture           tcpdump on the link: the payload's text is in the
#                     capture without security (the control), nowhere with
#                     it
#   link_cut          a host's cable out for 5 s: both sides report the
#                     other lost after the lease and meet again; reliable
#                     traffic resumes; a transient-local channel delivers
#                     what was written meanwhile (a volatile one does not)
#   mtu               100 kB messages over a 576-byte MTU: all delivered
#   kill9             a host's process killed with -9: reported dead, the
#                     other host's processes go on
#   service_cut       the server's host cut off: every call ends once,
#                     UNAVAILABLE or DEADLINE_EXCEEDED; calls work again
#   loss              10% and 30% packet loss each way for LOSS_SECONDS
#                     (60) at 100 Hz: reliable loses nothing, best
#                     effort's losses are counted by the transport
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tools/hosts/lib.sh
source "$here/lib.sh"
cd "$root" || exit 1

ALL_SCENARIOS="multicast discovery_server three_hosts bad_cyber_ip security capture link_cut mtu kill9 service_cut loss"
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
  peer a ds_w "$named" -- --write=/hosts/data --wait_readers=1
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

# --- security ----------------------------------------------------------------------

# make_keys DIR: a robot's key set (tools/make_security_set.sh) for the
# processes of the security scenarios.
make_keys() {
  cat >"$LOGS/spec" <<'SPEC'
# process    what it may write and read
sensor       publish=/sensor/imu
controller   publish=/control/command subscribe=/sensor/imu
actuator     subscribe=/control/command
monitor      subscribe=/sensor/imu
SPEC
  bash "$root/tools/make_security_set.sh" "$1" "$LOGS/spec" >/dev/null
}

scenario_security() {
  host_add a 1 && host_add b 2 && host_add c 3 || return 1
  make_keys "$LOGS/keys" || return 1
  # Another robot's set: valid certificates, but of a CA this robot does
  # not trust.
  make_keys "$LOGS/other" || return 1
  local k="$LOGS/keys"
  # Authorised processes talk: sensor (a) -> controller (b) -> actuator (c).
  peer a sensor -- --security="$k/sensor" --write=/sensor/imu
  local sensor=$HOST_PID
  peer b controller -- --security="$k/controller" --read=/sensor/imu --write=/control/command
  local controller=$HOST_PID
  peer c actuator -- --security="$k/actuator" --read=/control/command
  local actuator=$HOST_PID
  WATCH_PIDS="$sensor $controller $actuator"
  wait_for 90 "the controller reads 200 IMU messages" \
    recv_at_least "$LOGS/controller.log" /sensor/imu 200 || return 1
  wait_for 90 "the actuator reads 200 commands" \
    recv_at_least "$LOGS/actuator.log" /control/command 200 || return 1

  # Intruders on host c: one with another CA's certificate, one without
  # security; each reads the IMU and writes commands (seq 0, 1, ...: had
  # any reached the actuator, its seqs would repeat: dup > 0).
  peer c intruder -- --security="$LOGS/other/controller" --read=/sensor/imu --write=/control/command
  local intruder=$HOST_PID
  peer c plain -- --read=/sensor/imu --write=/control/command
  local plain=$HOST_PID
  WATCH_PIDS="$sensor $controller $actuator $intruder $plain"
  # The window: both intruders write 300 commands, and the actuator reads
  # 300 more of the controller's meanwhile.
  local before
  before=$(recv_field "$LOGS/actuator.log" /control/command count)
  wait_for 90 "the intruders write 300 commands each" \
    eval 'sent_at_least "$LOGS/intruder.log" /control/command 300 && sent_at_least "$LOGS/plain.log" /control/command 300' ||
    return 1
  wait_for 90 "the actuator reads 300 more commands" \
    recv_at_least "$LOGS/actuator.log" /control/command $((before + 300)) || return 1
  local ok=0 who
  for who in intruder plain; do
    if [ "$(recv_field "$LOGS/$who.log" /sensor/imu count)" != 0 ]; then
      echo "  the $who read IMU messages" >&2
      ok=1
    fi
    if [ "$(field "$(last_line "$LOGS/$who.log" "sent /control/command ")" readers)" != 0 ]; then
      echo "  the $who's command writer matched a reader" >&2
      ok=1
    fi
  done
  if [ "$(recv_field "$LOGS/actuator.log" /control/command dup)" != 0 ] ||
    [ "$(recv_field "$LOGS/actuator.log" /control/command writers)" != 1 ]; then
    echo "  the actuator accepted commands of an intruder: $(last_line "$LOGS/actuator.log" "recv ")" >&2
    ok=1
  fi
  # Refusals are logged naming the other side. The process without
  # security is refused by every process of the robot at once. With the
  # other CA's certificate, the handshake of each pair fails on the side
  # that checks the other's certificate: the one that did not begin it
  # (Fast-DDS decides by the two GUIDs, at random); the side that began it
  # gets no answer and keeps asking. So each pair logs the refusal on one
  # side or the other, naming the peer.
  local robot_pids="sensor:$sensor controller:$controller actuator:$actuator" rp who_pid
  for rp in $robot_pids; do
    who=${rp%%:*}
    who_pid=${rp#*:}
    wait_for 60 "the $who logs the refusal of the process without security (pid $plain)" \
      has_line "$LOGS/$who.log" "refused .*pid $plain" || ok=1
    wait_for 60 "the $who and the intruder (pid $intruder) log their refusal, one of them" \
      eval "has_line '$LOGS/$who.log' 'refused .*pid $intruder' || has_line '$LOGS/intruder.log' 'refused .*pid $who_pid'" ||
      ok=1
    if has_line "$LOGS/$who.log" "refused .*pid $intruder"; then
      echo "  the $who refused the intruder: $(grep -a -o "refused .*pid $intruder)" "$LOGS/$who.log" | head -n 1)"
    else
      echo "  the intruder refused the $who: $(grep -a -o "refused .*pid $who_pid)" "$LOGS/intruder.log" | head -n 1)"
    fi
  done

  # A process allowed to read /sensor/imu but not to write /control/command.
  peer b monitor_w -- --security="$k/monitor" --read=/sensor/imu --write=/control/command
  local monitor_w=$HOST_PID
  wait "$monitor_w" 2>/dev/null
  if ! grep -aq '^error .*"/control/command"' "$LOGS/monitor_w.log"; then
    echo "  the monitor was not refused its /control/command writer" >&2
    ok=1
  else
    echo "  $(grep -a '^error ' "$LOGS/monitor_w.log" | head -n 1)"
  fi
  peer b monitor -- --security="$k/monitor" --read=/sensor/imu
  WATCH_PIDS="$sensor $HOST_PID"
  wait_for 90 "the monitor reads 100 IMU messages" \
    recv_at_least "$LOGS/monitor.log" /sensor/imu 100 || ok=1
  return "$ok"
}

# capture_run NAME WRITER_FLAG READER_FLAG: writer on a, reader on b, a
# capture on b's eth0 until the reader has 200 messages whose body repeats
# $MARKER; prints how often the capture holds the marker.
capture_run() {
  local name=$1
  host_run b "$LOGS/$name.tcpdump.log" tcpdump -i eth0 -U -s 0 -w "$LOGS/$name.pcap"
  local dump=$HOST_PID
  wait_for 30 "tcpdump listens" has_line "$LOGS/$name.tcpdump.log" "listening on" || return 1
  peer a "${name}_w" -- "$2" --write=/sensor/imu --payload="$MARKER" --bytes=512
  local w=$HOST_PID
  peer b "${name}_r" -- "$3" --read=/sensor/imu
  local r=$HOST_PID
  WATCH_PIDS="$dump $w $r"
  wait_for 90 "the reader ($name) reads 200 messages" \
    recv_at_least "$LOGS/${name}_r.log" /sensor/imu 200 || return 1
  stop_pid "$r"
  stop_pid "$w"
  stop_pid "$dump"
  { grep -a -o "$MARKER" "$LOGS/$name.pcap" || true; } | wc -l
}

scenario_capture() {
  host_add a 1 && host_add b 2 || return 1
  make_keys "$LOGS/keys" || return 1
  MARKER="CYBERPLAINTEXTMARKER"
  local plain secure
  # The control: without security the capture does hold the payload.
  plain=$(capture_run plain --stats_period=250ms --stats_period=250ms) || return 1
  secure=$(capture_run secure --security="$LOGS/keys/sensor" \
    --security="$LOGS/keys/controller") || return 1
  echo "  the payload's text in the capture: $plain times without security, $secure with it"
  [ "$plain" -gt 0 ] && [ "$secure" -eq 0 ]
}

# --- faults of real links ----------------------------------------------------------

# drop HOST PERCENT: HOST loses PERCENT% of its packets in each direction.
drop() {
  local p
  p=$(awk "BEGIN { printf \"%.2f\", $2 / 100 }")
  host_exec "$1" iptables -A INPUT -m statistic --mode random --probability "$p" -j DROP &&
    host_exec "$1" iptables -A OUTPUT -m statistic --mode random --probability "$p" -j DROP
}

# calls_ended LOG N: every call 1..N has its outcome line.
calls_ended() {
  local n
  n=$(grep -a -c -E '^call [0-9]+ ' "$1")
  [ "$n" -ge "$2" ] || return 1
  [ "$(grep -a -E '^call [0-9]+ ' "$1" | awk -v n="$2" '$2 <= n { print $2 }' | sort -un | wc -l)" -eq "$2" ]
}

scenario_loss() {
  # One writer on a; a reader on b losing 10% of its packets each way, one
  # on c losing 30%: 100 Hz for LOSS_SECONDS (default 60), a reliable
  # channel of the default QoS (keep last 16) read by b, a reliable keep-all
  # one read by c, and a best-effort one read by both. (At 30% a repair
  # that needs many tries in a row can take longer than a keep-last
  # writer's depth, 160 ms, and the message is lost: only keep-all is
  # lossless whatever the loss, docs/transport.md.)
  host_add a 1 && host_add b 2 && host_add c 3 || return 1
  drop b 10 && drop c 30 || return 1
  local seconds=${LOSS_SECONDS:-60} n
  n=$((seconds * 100))
  peer b r10 -- --read=/hosts/rel,/hosts/be@best_effort
  local r10=$HOST_PID
  peer c r30 -- --read=/hosts/all@keep_all,/hosts/be@best_effort
  local r30=$HOST_PID
  peer a w -- --write=/hosts/rel,/hosts/all@keep_all,/hosts/be@best_effort --start_on_signal \
    --count="$n"
  local w=$HOST_PID
  WATCH_PIDS="$w $r10 $r30"
  # Writing begins once both readers have matched the writer on both
  # channels (a message written before that may never reach a reader:
  # DDS matches each direction separately).
  local r ch
  for ch in /hosts/rel /hosts/be; do
    wait_for 60 "r10 matches the writer of $ch" \
      eval '[ "$(recv_field "$LOGS/r10.log" $ch writers)" = 1 ]' || return 1
  done
  for ch in /hosts/all /hosts/be; do
    wait_for 60 "r30 matches the writer of $ch" \
      eval '[ "$(recv_field "$LOGS/r30.log" $ch writers)" = 1 ]' || return 1
  done
  wait_for 60 "the writer of /hosts/be matches both readers" \
    eval '[ "$(field "$(last_line "$LOGS/w.log" "sent /hosts/be ")" readers)" = 2 ]' || return 1
  for ch in /hosts/rel /hosts/all; do
    wait_for 60 "the writer of $ch matches its reader" \
      eval '[ "$(field "$(last_line "$LOGS/w.log" "sent $ch ")" readers)" = 1 ]' || return 1
  done
  kill -USR1 "$w"
  wait_for $((seconds * 3 + 60)) "the writer writes $n messages on each channel" \
    has_line "$LOGS/w.log" "^done /hosts/rel" || return 1
  local ok=0 line rel
  for r in r10 r30; do
    rel=/hosts/rel
    [ "$r" = r30 ] && rel=/hosts/all
    # Reliable: every message, once, in the end (repairs take a while).
    wait_for 120 "$r: the last reliable message ($((n - 1))) on $rel" \
      eval '[ "$(recv_field "$LOGS/$r.log" $rel last)" = $((n - 1)) ]' || ok=1
    line=$(last_line "$LOGS/$r.log" "recv $rel ")
    echo "  $r reliable ($rel):    ${line#recv $rel }"
    if [ "$(field "$line" first)" != 0 ] || [ "$(field "$line" missing)" != 0 ] ||
      [ "$(field "$line" dup)" != 0 ]; then
      echo "  $r: the reliable channel lost or repeated messages" >&2
      ok=1
    fi
    # Best effort: losses happen, and the transport counts them.
    line=$(last_line "$LOGS/$r.log" "recv /hosts/be ")
    echo "  $r best effort: ${line#recv /hosts/be }"
    if [ "$(field "$line" missing)" -eq 0 ] || [ "$(field "$line" lost)" -eq 0 ]; then
      echo "  $r: best effort lost nothing, or the transport counted nothing lost" >&2
      ok=1
    fi
  done
  return "$ok"
}

scenario_link_cut() {
  host_add a 1 && host_add b 2 || return 1
  peer b r -- --read=/hosts/rel,/hosts/tl@transient_local,/hosts/vol
  local r=$HOST_PID
  peer a w -- --write=/hosts/rel
  local w=$HOST_PID
  # State channels written on command (SIGUSR1: one message each): one
  # transient local (keeps its last 4), one volatile, as the control.
  peer a state -- --write=/hosts/tl@transient_local,/hosts/vol --write_on_signal --wait_readers=1
  local state=$HOST_PID
  WATCH_PIDS="$w $state $r"
  wait_for 90 "b reads 100 reliable messages" recv_at_least "$LOGS/r.log" /hosts/rel 100 || return 1
  wait_for 90 "the state channels have their reader" \
    eval '[ "$(field "$(last_line "$LOGS/state.log" "sent /hosts/vol ")" readers)" = 1 ] && [ "$(field "$(last_line "$LOGS/state.log" "sent /hosts/tl ")" readers)" = 1 ]' ||
    return 1
  kill -USR1 "$state" && sleep 0.1 && kill -USR1 "$state"
  wait_for 60 "b reads the 2 state values" \
    eval 'recv_at_least "$LOGS/r.log" /hosts/tl 2 && recv_at_least "$LOGS/r.log" /hosts/vol 2' ||
    return 1
  host_link b down || return 1
  local cut=$SECONDS
  echo "  link of host b down"
  # Each side reports the other lost after its lease (3 s).
  wait_for 60 "b reports a's processes lost" has_line "$LOGS/r.log" "^lost host_peer (host a" ||
    return 1
  wait_for 60 "a reports b's process lost" has_line "$LOGS/w.log" "^lost host_peer (host b" ||
    return 1
  # While b is away the state changes three times.
  local i
  for i in 1 2 3; do
    kill -USR1 "$state"
    wait_for 30 "state message $((2 + i)) written" sent_at_least "$LOGS/state.log" /hosts/tl $((2 + i)) ||
      return 1
  done
  # The cut lasts at least 5 s.
  while [ $((SECONDS - cut)) -lt 5 ]; do sleep 0.2; done
  local before
  before=$(recv_field "$LOGS/r.log" /hosts/rel count)
  host_link b up || return 1
  echo "  link of host b up after $((SECONDS - cut)) s; b had $before reliable messages"
  # Found again, and reliable traffic resumes.
  wait_for 90 "b reads 200 more reliable messages" \
    recv_at_least "$LOGS/r.log" /hosts/rel $((before + 200)) || return 1
  [ "$(recv_field "$LOGS/r.log" /hosts/rel writers)" = 1 ] || {
    echo "  b does not list a's writer again" >&2
    return 1
  }
  # The transient-local channel replays the values b missed (seq 2..4).
  wait_for 90 "b gets the 3 state values written while it was away" \
    eval '[ "$(recv_field "$LOGS/r.log" /hosts/tl last)" = 4 ]' || return 1
  local tl vol
  tl=$(last_line "$LOGS/r.log" "recv /hosts/tl ")
  vol=$(last_line "$LOGS/r.log" "recv /hosts/vol ")
  echo "  transient local: ${tl#recv /hosts/tl }"
  echo "  volatile:        ${vol#recv /hosts/vol }"
  [ "$(field "$tl" count)" = 5 ] || { echo "  transient local did not deliver all 5" >&2; return 1; }
  # The volatile control kept nothing for b: it has only the first two.
  [ "$(field "$vol" count)" = 2 ] || { echo "  the volatile control delivered values written during the cut" >&2; return 1; }
}

scenario_mtu() {
  host_add a 1 && host_add b 2 || return 1
  host_exec a ip link set eth0 mtu 576 && host_exec b ip link set eth0 mtu 576 || return 1
  # 100 kB messages on a 576-byte link: DDS fragments them, IP fragments
  # the fragments. Transient local (the last 4 kept for a reader that
  # matches late): the writer starts when it has matched the reader, and
  # the reader may match the writer a moment later; on a volatile channel
  # the first message can then be lost, which is not what this is about.
  peer b r -- --read=/hosts/big@transient_local
  local r=$HOST_PID
  peer a w -- --write=/hosts/big@transient_local --bytes=100000 --rate_hz=20 \
    --count=100 --wait_readers=1
  local w=$HOST_PID
  WATCH_PIDS="$w $r"
  wait_for 120 "b reads the 100th message" \
    eval '[ "$(recv_field "$LOGS/r.log" /hosts/big last)" = 99 ]' || return 1
  local line
  line=$(last_line "$LOGS/r.log" "recv /hosts/big ")
  echo "  ${line}"
  [ "$(field "$line" count)" = 100 ] && [ "$(field "$line" missing)" = 0 ]
}

scenario_kill9() {
  host_add a 1 && host_add b 2 || return 1
  peer a w -- --write=/hosts/data
  local w=$HOST_PID
  # On b: a reader of a's channel that also writes one of its own, read by
  # a second process of b (through b's shared memory).
  peer b r -- --read=/hosts/data --write=/hosts/local
  local r=$HOST_PID
  peer b r2 -- --read=/hosts/local
  local r2=$HOST_PID
  WATCH_PIDS="$w $r $r2"
  wait_for 90 "b reads 100 of a's messages" recv_at_least "$LOGS/r.log" /hosts/data 100 || return 1
  kill -KILL "$w"
  wait "$w" 2>/dev/null
  WATCH_PIDS="$r $r2"
  wait_for 60 "b reports a's process dead" has_line "$LOGS/r.log" "^lost host_peer (host a, pid $w" ||
    return 1
  echo "  $(grep -a 'stopped answering' "$LOGS/r.log" | head -n 1 | sed 's/^.*\] //')"
  # b keeps running: its own channel goes on.
  local before
  before=$(recv_field "$LOGS/r2.log" /hosts/local count)
  wait_for 60 "b's processes go on (200 more messages between them)" \
    recv_at_least "$LOGS/r2.log" /hosts/local $((before + 200)) || return 1
  stop_pid "$r" || { echo "  b's reader exited with $?" >&2; return 1; }
  stop_pid "$r2" || return 1
}

scenario_service_cut() {
  host_add a 1 && host_add b 2 || return 1
  peer b server -- --serve=/hosts/add
  local server=$HOST_PID
  peer a client -- --call=/hosts/add --call_period=200ms --call_timeout=2s
  local client=$HOST_PID
  WATCH_PIDS="$server $client"
  wait_for 90 "10 calls answered" eval '[ "$(grep -a -c " OK$" "$LOGS/client.log")" -ge 10 ]' ||
    return 1
  local ok_before failed_before
  ok_before=$(grep -a -c ' OK$' "$LOGS/client.log")
  failed_before=$(grep -a -c -E '^call [0-9]+ (UNAVAILABLE|DEADLINE_EXCEEDED)$' "$LOGS/client.log")
  host_link b down || return 1
  local cut=$SECONDS
  wait_for 60 "3 calls fail while b is cut off" \
    eval '[ "$(grep -a -c -E "^call [0-9]+ (UNAVAILABLE|DEADLINE_EXCEEDED)$" "$LOGS/client.log")" -ge $((failed_before + 3)) ]' ||
    return 1
  while [ $((SECONDS - cut)) -lt 5 ]; do sleep 0.2; done
  local sent_at_restore
  sent_at_restore=$(field "$(last_line "$LOGS/client.log" "calls ")" sent)
  host_link b up || return 1
  local ok_at_restore
  ok_at_restore=$(grep -a -c ' OK$' "$LOGS/client.log")
  wait_for 90 "10 calls answered after the link is back" \
    eval '[ "$(grep -a -c " OK$" "$LOGS/client.log")" -ge $((ok_at_restore + 10)) ]' || return 1
  # Every call made until the link came back has ended, once.
  wait_for 60 "calls 1..$sent_at_restore have ended" \
    calls_ended "$LOGS/client.log" "$sent_at_restore" || return 1
  local ok=0
  if [ -n "$(grep -a -E '^call [0-9]+ ' "$LOGS/client.log" | awk '{print $2}' | sort -n | uniq -d)" ]; then
    echo "  a call ended twice" >&2
    ok=1
  fi
  if grep -a -E '^call [0-9]+ ' "$LOGS/client.log" | grep -a -v -E ' (OK|UNAVAILABLE|DEADLINE_EXCEEDED)$'; then
    echo "  a call ended another way" >&2
    ok=1
  fi
  echo "  outcomes: $(grep -a -E '^call [0-9]+ ' "$LOGS/client.log" | awk '{print $3}' | sort | uniq -c | tr -s ' \n' ' ')"
  echo "  (OK before the cut: $ok_before, after it: $(( $(grep -a -c ' OK$' "$LOGS/client.log") - ok_at_restore )))"
  return "$ok"
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
  rm -rf "${LOGS:?}"/*
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
