#!/usr/bin/env bash
# cyber_monitor in a real terminal: tmux (120 x 40) runs it against the
# sensor-polling graph split over two mainboards (pollers.dag, fusion.dag)
# on a random DDS domain of this run's own. Checks, reading the screen with
# `tmux capture-pane` and typing with `tmux send-keys`, that
#   - the channel list shows /sensor/imu, its type, and a rate near 100 Hz
#     (90..110: the IMU poller's 100 Hz timer, as counted by the pollers'
#     status);
#   - Down/Enter on /sensor/imu opens its latest message, decoded from the
#     announced descriptor (seq, stamp_ns, accel { ... });
#   - Esc goes back to the list, Tab shows the processes with the pollers'
#     components;
#   - q quits: the pane's program exits 0 and the terminal's settings
#     (stty -g) are as they were before it started; Ctrl-C too (status
#     130);
#   - --once prints the same figures on stdout; on an empty domain it
#     exits 2 and says which domain it searched.
#
# No timing assertion: each wait polls the screen against a generous
# deadline (60 s for what takes a second or two on an idle machine). The
# EXIT trap stops everything that is still running (the tmux server of
# this test's own socket, the mainboards: SIGINT, SIGKILL after 30 s),
# removes the /dev/shm files they left (fastdds_shm.sh) and the socket.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
example="$root/examples/sensor_polling"
mainboard="$example/mainboard"
monitor="$root/cyber/tools/cyber_monitor/cyber_monitor"
# shellcheck source=cyber/testing/fastdds_shm.sh
source "$root/cyber/testing/fastdds_shm.sh"
out="$TEST_TMPDIR"
notes="$out/shm_files"
domain=$(fastdds_shm_free_domain)
export CYBER_DOMAIN_ID=$domain
echo "DDS domain $domain"
# tmux's socket: a short path of our own (TEST_TMPDIR may be longer than a
# Unix socket's 108 bytes), removed at exit.
sockdir=$(mktemp -d /tmp/cyber_monitor_test.XXXXXX)
tmux_() { tmux -S "$sockdir/tmux" -f /dev/null "$@"; }

pids=()
cleanup() {
  local status=$? pid
  trap - EXIT INT TERM
  tmux_ kill-server 2>/dev/null || true
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then stop "$pid" || true; fi
  done
  fastdds_shm_remove "$notes" "$domain" || true
  rm -rf "$sockdir"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM  # bazel's timeout

screen() { tmux_ capture-pane -p 2>/dev/null || true; }
# On stderr: also seen when called in a $(...).
fail() {
  {
    echo "FAIL: $*"
    echo "--- screen"; screen
    for f in pollers fusion; do
      echo "--- $f stderr (last 20 lines)"; tail -20 "$out/$f.err" 2>/dev/null || true
    done
    echo "--- cyber_monitor log (last 20 lines)"; tail -20 "$out/monitor.log" 2>/dev/null || true
  } >&2
  exit 1
}
# The processes whose /dev/shm files the cleanup may remove: the
# mainboards and the monitor (the child of the pane's shell).
note_shm() {
  local pane
  pane=$(tmux_ list-panes -F '#{pane_pid}' 2>/dev/null || true)
  # shellcheck disable=SC2046
  fastdds_shm_note "$notes" "${pids[@]}" $( [ -n "$pane" ] && ps -o pid= --ppid "$pane" || true)
}
# until_screen PATTERN WHAT: waits (at most 60 s) for a line of the screen
# matching the extended regex PATTERN; prints the line.
until_screen() {
  local pattern=$1 what=$2 i line
  for ((i = 0; i < 600; i++)); do
    note_shm
    line=$(screen | grep -E -m1 -e "$pattern" || true)
    if [ -n "$line" ]; then echo "$line"; return 0; fi
    sleep 0.1  # polling the screen; bounded to 60 s
  done
  fail "no $what on the screen within 60 s"
}
until_log() {  # NAME PATTERN WHAT: at most 60 s
  local i
  for ((i = 0; i < 600; i++)); do
    note_shm
    grep -qE "$2" "$out/$1.err" && return 0
    sleep 0.1  # polling another process's log; bounded to 60 s
  done
  fail "no $3 within 60 s"
}

start() {  # NAME: mainboard --process_name=NAME on NAME.dag
  "$mainboard" -d "$example/$1.dag" --process_name="$1" --run_for=300s --status=never \
    >"$out/$1.out" 2>"$out/$1.err" &
  pids+=("$!")
}
start pollers
until_log pollers 'started component "lidar"' "pollers started"
start fusion
until_log fusion 'started component "health"' "fusion started"

# The pane runs the monitor between two looks at the terminal's settings,
# and leaves its exit status and the comparison in files.
cat >"$out/pane.sh" <<PANE
saved=\$(stty -g)
CYBER_DOMAIN_ID=$domain "$monitor" --log="$out/monitor.log"
echo \$? >"$out/exit_status"
if [ "\$(stty -g)" = "\$saved" ]; then echo same >"$out/tty"; else echo changed >"$out/tty"; fi
PANE
tmux_ new-session -d -x 120 -y 40 "bash $out/pane.sh"

# 1. The channel list: /sensor/imu at ~100 Hz (the Hz column is the 5th).
imu_re='^/sensor/imu +sensor_polling\.ImuReading +[0-9]+ +[0-9]+ +[0-9]'
hz=""
for ((attempt = 0; attempt < 600; attempt++)); do
  line=$(until_screen "$imu_re" "/sensor/imu with a rate")
  hz=$(awk '{ print $5 }' <<<"$line")
  if awk -v hz="$hz" 'BEGIN { exit !(hz >= 90 && hz <= 110) }'; then break; fi
  sleep 0.1  # the first rates of a just-started graph; bounded to 60 s
done
awk -v hz="$hz" 'BEGIN { exit !(hz >= 90 && hz <= 110) }' || fail "/sensor/imu at $hz Hz, not ~100"
echo "channel list: $line"
screen | sed -n '1,8p'

# 2. Select /sensor/imu (Down from the first row) and open it with Enter.
# The list may grow between a look and a key (the selection follows its
# channel by name), so a wrong channel is left with Esc and tried again.
opened=""
for ((attempt = 0; attempt < 5; attempt++)); do
  row=$(screen | awk 'NR > 2 && $1 ~ /^\// { n++; if ($1 == "/sensor/imu") { print n - 1; exit } }')
  [ -n "$row" ] || fail "/sensor/imu left the list"
  tmux_ send-keys Home
  for ((i = 0; i < row; i++)); do tmux_ send-keys Down; done
  tmux_ send-keys Enter
  # Only the message view has this line; its title (line 1) is drawn
  # before it.
  until_screen '^received [0-9]+ ' "a message view" >/dev/null
  title=$(screen | head -1)
  if [[ "$title" == "/sensor/imu  sensor_polling.ImuReading"* ]]; then opened=yes; break; fi
  tmux_ send-keys Escape
  until_screen '^Channel +Type' "the channel list after Esc" >/dev/null
done
[ -n "$opened" ] || fail "Enter did not open /sensor/imu"
until_screen '^seq: [0-9]+' "the decoded IMU message's seq" >/dev/null
until_screen '^accel \{' "the decoded IMU message's accel" >/dev/null
until_screen '^stamp_ns: [0-9]+' "the decoded IMU message's stamp_ns" >/dev/null
echo "message view:"; screen | sed -n '1,14p'

# 3. Esc back to the list; Tab to the processes.
tmux_ send-keys Escape
until_screen '^Channel +Type' "the channel list after Esc" >/dev/null
tmux_ send-keys Tab
until_screen '^pollers@' "the pollers process in the process view" >/dev/null
until_screen '^  imu +ImuPoller' "the IMU poller component in the process view" >/dev/null
echo "process view:"; screen | sed -n '1,14p'

# 4. q: the program exits 0 and the terminal is as it was.
tmux_ send-keys q
for ((i = 0; i < 600; i++)); do
  tmux_ has-session 2>/dev/null || break
  sleep 0.1  # the monitor leaving its domain; bounded to 60 s
done
! tmux_ has-session 2>/dev/null || fail "the pane still runs 60 s after q"
[ "$(cat "$out/exit_status" 2>/dev/null)" = 0 ] ||
  fail "cyber_monitor exit status $(cat "$out/exit_status" 2>/dev/null) after q"
[ "$(cat "$out/tty" 2>/dev/null)" = same ] || fail "the terminal's settings differ after cyber_monitor"

# 5. Ctrl-C (SIGINT): the view ends with status 130, the terminal restored.
rm -f "$out/exit_status" "$out/tty"
tmux_ new-session -d -x 120 -y 40 "bash $out/pane.sh"
until_screen "$imu_re" "/sensor/imu in a second monitor" >/dev/null
tmux_ send-keys C-c
for ((i = 0; i < 600; i++)); do
  tmux_ has-session 2>/dev/null || break
  sleep 0.1  # the monitor leaving its domain; bounded to 60 s
done
! tmux_ has-session 2>/dev/null || fail "the pane still runs 60 s after Ctrl-C"
[ "$(cat "$out/exit_status" 2>/dev/null)" = 130 ] ||
  fail "cyber_monitor exit status $(cat "$out/exit_status" 2>/dev/null) after Ctrl-C, not 130"
[ "$(cat "$out/tty" 2>/dev/null)" = same ] || fail "the terminal's settings differ after Ctrl-C"

# 6. --once: the same figures on stdout, for scripts.
"$monitor" --once >"$out/once.out" 2>"$out/once.err" || fail "--once: exit status $?"
cat "$out/once.out"
grep -qE "$imu_re" "$out/once.out" || fail "--once lists no /sensor/imu"
hz=$(awk '$1 == "/sensor/imu" { print $5 }' "$out/once.out")
awk -v hz="$hz" 'BEGIN { exit !(hz >= 90 && hz <= 110) }' || fail "--once: /sensor/imu at $hz Hz"
grep -qE '^pollers@' "$out/once.out" || fail "--once lists no pollers process"
grep -qE '^  imu +ImuPoller +100\.0' "$out/once.out" || fail "--once lists no IMU poller at 100 Hz"

# 7. --once on a domain where nothing runs: exit 2, and where it looked.
empty=$(fastdds_shm_free_domain)
status=0
CYBER_DOMAIN_ID=$empty "$monitor" --once >"$out/empty.out" 2>"$out/empty.err" || status=$?
cat "$out/empty.out"
[ "$status" -eq 2 ] || fail "--once on the empty domain $empty: exit status $status, not 2"
grep -q "No process found in domain $empty" "$out/empty.out" || fail "--once on an empty domain does not say where it looked"
fastdds_shm_remove /dev/null "$empty" >/dev/null || true

for i in "${!pids[@]}"; do
  status=0
  stop "${pids[$i]}" || status=$?
  [ "$status" -eq 0 ] || fail "mainboard ${i}: exit status $status after SIGINT"
done
left=$(fastdds_shm_remove "$notes" "$domain")
[ -z "$left" ] || echo "note: the clean stop left in /dev/shm:"$'\n'"$left"
echo PASS
