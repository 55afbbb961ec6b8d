# shellcheck shell=bash
# Sourced (bash) by the shell tests that run mainboards (two_process_run_test.sh,
# cyber_bridge and cyber_monitor tests) and run_two_processes.sh: a DDS
# domain for a run of our own, and the removal of the /dev/shm files that
# the processes of that run left behind; and stop PID, a clean stop with a
# bounded wait.
#
# Fast-DDS's shared-memory transport keeps, in /dev/shm, per participant a
# segment (fastrtps_<16 hex digits>) and per port it listens on one more
# (fastrtps_port<N>, N = 7400 + 250 * domain + offset < 250), each with a
# lock file (<name>_el), and per port a named semaphore
# (sem.fastrtps_port<N>_mutex). A participant removes its own files when
# its process exits cleanly (SIGINT, SIGTERM, --run_for); a process killed
# (SIGKILL, a crash) leaves them. Other processes of this host (other
# tests, a ROS 2 node) may have files there at the same time, so nothing
# is removed by pattern: the files removed are those the run's processes
# were seen using (fastdds_shm_note, called while they run) and the port
# files of the run's domain, and only once no process uses them.
#
# What is not covered: a process killed before it was first seen using its
# files leaves its segment (its name is random).

# fastdds_shm_port_files DOMAIN: prints the files in /dev/shm of DOMAIN's
# ports (fastrtps_port<N>, its lock file and its semaphore).
fastdds_shm_port_files() {
  local base=$((7400 + 250 * $1)) f n
  for f in /dev/shm/fastrtps_port* /dev/shm/sem.fastrtps_port*; do
    n=${f#/dev/shm/}
    n=${n#sem.}
    n=${n#fastrtps_port}
    n=${n%_el}
    n=${n%_mutex}
    case "$n" in '' | *[!0-9]*) continue ;; esac
    if [ "$n" -ge "$base" ] && [ "$n" -lt $((base + 250)) ]; then echo "$f"; fi
  done
}

# fastdds_shm_free_domain: prints a random DDS domain id in 1..200, not
# Cyber RT's default 80, that no other test holds and whose ports have no
# files in /dev/shm. It is claimed as the C++ tests claim theirs
# (dds_test::RandomDomain: the abstract Unix socket
# "cyber_dds_test_domain_<d>", which only one process can bind), by a
# python3 helper that holds it until the calling shell ($$) exits: two
# tests never meet on one domain.
fastdds_shm_free_domain() {
  local domain _ answer
  answer=$(mktemp "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/domain_claim.XXXXXX")
  for _ in $(seq 1 100); do
    domain=$((1 + RANDOM % 200))
    [ "$domain" -eq 80 ] && continue
    [ -n "$(fastdds_shm_port_files "$domain")" ] && continue
    : >"$answer"
    python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
try:
    s.bind("\0cyber_dds_test_domain_" + sys.argv[1])
except OSError:
    print("taken", flush=True)
    sys.exit(0)
print("ok", flush=True)
shell = int(sys.argv[2])
while True:
    try:
        os.kill(shell, 0)
    except OSError:
        break
    time.sleep(0.5)
' "$domain" "$$" >"$answer" 2>/dev/null </dev/null &
    local waited
    for ((waited = 0; waited < 1000; waited++)); do
      [ -s "$answer" ] && break
      sleep 0.01  # the helper answers at once; bounded to 10 s
    done
    if [ ! -s "$answer" ]; then
      echo "fastdds_shm_free_domain: the python3 helper claiming domain $domain did not answer in 10 s" >&2
      rm -f "$answer"
      return 1
    fi
    [ "$(cat "$answer")" = ok ] && break
  done
  rm -f "$answer"
  echo "$domain"
}

# fastdds_shm_note NOTES PID...: appends to the file NOTES the Fast-DDS
# files in /dev/shm that the processes PID... map or hold open now.
fastdds_shm_note() {
  local notes=$1 pid fd
  shift
  for pid in "$@"; do
    awk '$6 ~ /^\/dev\/shm\/fastrtps_/ { print $6 }' "/proc/$pid/maps" 2>/dev/null >>"$notes" || true
    for fd in /proc/"$pid"/fd/*; do
      fd=$(readlink "$fd" 2>/dev/null) || continue
      case "$fd" in /dev/shm/fastrtps_*) echo "$fd" >>"$notes" ;; esac
    done
  done
}

# fastdds_shm_remove NOTES DOMAIN: removes the noted files and the port
# files of DOMAIN (with their lock files and semaphores) that are still
# there and that no process maps or holds open. Prints what it removed.
# Call it once the run's processes have exited.
fastdds_shm_remove() {
  local notes=$1 domain=$2 stem f in_use
  in_use=$({
    awk '{ print $6 }' /proc/[0-9]*/maps 2>/dev/null
    find /proc/[0-9]*/fd -lname '/dev/shm/*' -printf '%l\n' 2>/dev/null
  } | grep '^/dev/shm/' | sort -u || true)
  {
    if [ -f "$notes" ]; then cat "$notes"; fi
    fastdds_shm_port_files "$domain"
  } | sed 's/_el$//' | sort -u | while read -r stem; do
    for f in "$stem" "${stem}_el" "/dev/shm/sem.${stem#/dev/shm/}_mutex"; do
      [ -e "$f" ] || continue
      grep -qxF "$f" <<<"$in_use" && continue
      rm -f "$f" && echo "removed $f"
    done
  done
  return 0
}

# stop PID: SIGINT, then SIGKILL if it is still running 30 s later (a
# mainboard's own --shutdown_deadline is 5 s); returns its exit status.
# PID must be a child of the calling shell (for its status).
stop() {
  local pid=$1 i status=0
  kill -INT "$pid" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1  # another process's shutdown; bounded to 30 s
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" || status=$?
  return "$status"
}
