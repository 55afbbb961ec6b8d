# shellcheck shell=bash
# The multi-host harness's "hosts": network namespaces joined by veth pairs
# to one bridge (in a namespace of its own, the "switch"), each host with
# its own hostname and its own /dev/shm. Sourced by tools/hosts/scenarios.sh.
#
# Why namespaces: they are what a second computer is to the DDS transport
# (its own interfaces, addresses, multicast, hostname, shared memory), made
# in a second, with faults (iptables, a link set down, a small MTU) that
# touch nothing outside them. Addresses are from 198.18.0.0/15, the range
# reserved for benchmarking and never routed: host N is 198.18.0.N/24.
# Nothing is added to the machine's own namespace: the switch, the hosts,
# their firewall rules and their /dev/shm all live (and die) in the
# namespaces.
#
# A host is a holder process (sleep) inside a network, UTS and mount
# namespace; every program of that host is started with nsenter into the
# holder's namespaces, so the programs of one host share its /dev/shm (a
# private tmpfs) and see each other's shared memory, as on one computer.
#
#   hosts_can_run                    0, or prints why not (not root, ...)
#   hosts_begin                      a fresh set of names; call first
#   host_add NAME N                  host NAME at 198.18.0.N
#   host_ip NAME                     its address
#   host_run NAME LOG cmd...         runs cmd on NAME (background, stdout
#                                    and stderr to LOG), pid in $HOST_PID
#   host_exec NAME cmd...            runs cmd on NAME, in the foreground
#   host_link NAME up|down           the host's cable, at the switch
#   stop_pid PID                     SIGINT, SIGKILL 20 s later; its status
#   hosts_end                        kills every process started here,
#                                    deletes every namespace (idempotent;
#                                    the scenarios call it from their trap)
#   wait_for SECONDS DESCRIPTION cmd...  runs cmd every 0.2 s until it
#                                    succeeds (0) or SECONDS pass (1), or
#                                    one of $WATCH_PIDS exits (1)
#   last_line LOG PREFIX             the last line of LOG starting PREFIX
#   field LINE NAME                  the value of NAME=value in LINE

HOSTS_NET=198.18.0

hosts_can_run() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "not root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
    return 1
  fi
  local probe="cyhprobe$$" tool
  for tool in ip nsenter unshare iptables; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed (tools/setup.sh)"; return 1; }
  done
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "cannot make a network namespace here (no CAP_NET_ADMIN, or inside a sandbox)"
    return 1
  fi
  local ok=0
  ip netns exec "$probe" unshare --uts --mount true 2>/dev/null || ok=1
  ip netns del "$probe" 2>/dev/null || true
  if [ "$ok" -ne 0 ]; then
    echo "cannot make UTS and mount namespaces here"
    return 1
  fi
  return 0
}

hosts_begin() {
  # Short names: an interface name has at most 15 characters.
  HOSTS_PREFIX="cyh$(printf '%04x' $((RANDOM % 65536)))"
  HOSTS_NAMES=()
  HOSTS_PIDS=()
  declare -gA HOSTS_HOLDER=() HOSTS_ADDR=()
  HOSTS_SWITCH="${HOSTS_PREFIX}-sw"
  ip netns add "$HOSTS_SWITCH" || return 1
  ip -n "$HOSTS_SWITCH" link add br0 type bridge || return 1
  # Flood multicast to every port: no IGMP querier here.
  ip -n "$HOSTS_SWITCH" link set br0 type bridge mcast_snooping 0 || return 1
  ip -n "$HOSTS_SWITCH" link set br0 up || return 1
}

host_add() {
  local name=$1 n=$2 ns="${HOSTS_PREFIX}-$1"
  local host_end="${HOSTS_PREFIX}${name}0" switch_end="${HOSTS_PREFIX}${name}1"
  ip netns add "$ns" || return 1
  HOSTS_NAMES+=("$name")
  ip link add "$host_end" type veth peer name "$switch_end" || return 1
  ip link set "$host_end" netns "$ns" name eth0 || return 1
  ip link set "$switch_end" netns "$HOSTS_SWITCH" || return 1
  ip -n "$HOSTS_SWITCH" link set "$switch_end" master br0 up || return 1
  ip -n "$ns" link set lo up || return 1
  ip -n "$ns" addr add "$HOSTS_NET.$n/24" dev eth0 || return 1
  ip -n "$ns" link set eth0 up || return 1
  # Multicast leaves by eth0 (there is no default route).
  ip -n "$ns" route add 224.0.0.0/4 dev eth0 || return 1
  HOSTS_ADDR[$name]="$HOSTS_NET.$n"
  # The holder: its own hostname and a private tmpfs on /dev/shm, which
  # vanishes with the mount namespace when the host's last process exits.
  # (Started outside this shell's jobs, so that killing it prints nothing;
  # it writes its own pid: ip, unshare and sh each exec the next.)
  local ready
  ready=$(mktemp "${TMPDIR:-/tmp}/cyh_ready.XXXXXX")
  (ip netns exec "$ns" unshare --uts --mount --propagation private sh -c \
    "hostname '$name' && mount -t tmpfs -o size=256m,mode=1777 tmpfs /dev/shm && echo \$\$ > '$ready' && exec sleep 86400" \
    >/dev/null 2>&1 </dev/null &)
  local i
  for ((i = 0; i < 100; i++)); do
    [ -s "$ready" ] && break
    sleep 0.1
  done
  HOSTS_HOLDER[$name]=$(cat "$ready")
  rm -f "$ready"
  [ -n "${HOSTS_HOLDER[$name]}" ] && [ "$(host_exec "$name" hostname)" = "$name" ] || {
    echo "host $name: its holder did not start" >&2
    return 1
  }
}

host_ip() { echo "${HOSTS_ADDR[$1]}"; }

host_exec() {
  local name=$1
  shift
  nsenter -t "${HOSTS_HOLDER[$name]}" -n -m -u -- "$@"
}

host_run() {
  local name=$1 log=$2
  shift 2
  nsenter -t "${HOSTS_HOLDER[$name]}" -n -m -u -- "$@" >"$log" 2>&1 </dev/null &
  HOST_PID=$!
  HOSTS_PIDS+=("$HOST_PID")
}

host_link() {
  ip -n "$HOSTS_SWITCH" link set "${HOSTS_PREFIX}${1}1" "$2"
}

stop_pid() {
  local pid=$1 i status=0
  kill -INT "$pid" 2>/dev/null || true
  for ((i = 0; i < 200; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "pid $pid did not stop within 20 s of SIGINT: SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || status=$?
  return "$status"
}

hosts_end() {
  local pid name
  for pid in "${HOSTS_PIDS[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
  done
  for pid in "${HOSTS_PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  HOSTS_PIDS=()
  for name in "${!HOSTS_HOLDER[@]}"; do
    # Anything else still inside the host's network namespace goes too.
    ip netns pids "${HOSTS_PREFIX}-$name" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    kill -KILL "${HOSTS_HOLDER[$name]}" 2>/dev/null || true
  done
  HOSTS_HOLDER=()
  for name in "${HOSTS_NAMES[@]}"; do
    ip netns del "${HOSTS_PREFIX}-$name" 2>/dev/null || true
  done
  HOSTS_NAMES=()
  if [ -n "${HOSTS_SWITCH:-}" ]; then
    ip netns del "$HOSTS_SWITCH" 2>/dev/null || true
  fi
  HOSTS_SWITCH=
}

wait_for() {
  local seconds=$1 what=$2 i pid
  shift 2
  for ((i = 0; i < seconds * 5; i++)); do
    if "$@"; then return 0; fi
    for pid in ${WATCH_PIDS:-}; do
      if ! kill -0 "$pid" 2>/dev/null; then
        echo "  pid $pid exited while waiting for: $what" >&2
        return 1
      fi
    done
    sleep 0.2
  done
  echo "  gave up after ${seconds} s waiting for: $what" >&2
  return 1
}

last_line() { grep -a -- "^$2" "$1" 2>/dev/null | tail -n 1; }

field() { sed -n "s/.* $2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }
