#!/usr/bin/env bash
# cyber_launch start --clock=simulated --paused in a real terminal (tmux,
# 160 x 20): the sensor_polling example's two processes in lockstep, held at
# the start. Reading the screen with `tmux capture-pane` and typing with
# `tmux send-keys`, checks that
#   - nothing is granted while paused (no step line);
#   - s runs exactly one step at a time: steps 1, 2, 3 at 0, 10 ms, 20 ms;
#   - space resumes, the run reaches its end (5 s, 501 steps), exit 0, the
#     digests are those of an unpaused run (sensor_polling_lockstep_test's
#     runs are 20 s; this one's are compared with a run of 5 s made here
#     without a terminal), and the terminal's settings are as before.
# No timing assertion: each wait polls the screen against a generous
# deadline. The EXIT trap stops the tmux server of this test's own socket
# and removes what the processes left in /dev/shm.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
example="$root/examples/sensor_polling"
launch="$root/cyber/tools/cyber_launch/cyber_launch"
source "$root/cyber/testing/fastdds_shm.sh"
out="$TEST_TMPDIR"
notes="$out/shm_files"
# cyber_launch's pid files (one per launch file) in this test's own
# directory: other tests run the same launch file at the same time.
export XDG_RUNTIME_DIR="$out/run"
mkdir -p "$XDG_RUNTIME_DIR"
domain=$(fastdds_shm_free_domain)
plain_domain=$(fastdds_shm_free_domain)
sockdir=$(mktemp -d /tmp/cyber_launch_keys_test.XXXXXX)
tmux_() { tmux -S "$sockdir/tmux" -f /dev/null "$@"; }
plain_pid=""

cleanup() {
  local status=$? i
  trap - EXIT INT TERM
  tmux_ kill-server 2>/dev/null || true
  # The pane's cyber_launch stops its mainboards on SIGHUP: wait for it
  # (at most 30 s; then kill it) before removing their files.
  for ((i = 0; i < 300; i++)); do
    pgrep -f -- "--log_dir=$out/logs " >/dev/null 2>&1 || break
    sleep 0.1
  done
  pkill -KILL -f -- "--log_dir=$out/logs " 2>/dev/null || true
  if [ -n "$plain_pid" ] && kill -0 "$plain_pid" 2>/dev/null; then stop "$plain_pid" || true; fi
  fastdds_shm_remove "$notes" "$domain" || true
  fastdds_shm_remove "$notes" "$plain_domain" || true
  rm -rf "$sockdir"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM  # bazel's timeout

screen() { tmux_ capture-pane -p -S -200 2>/dev/null || true; }
fail() {
  { echo "FAIL: $*"; echo "--- screen"; screen; echo "--- output"; tail -30 "$out/launch.out" 2>/dev/null || true; } >&2
  exit 1
}
note_shm() {
  local pane p
  pane=$(tmux_ list-panes -F '#{pane_pid}' 2>/dev/null || true)
  [ -n "$pane" ] || return 0
  for p in $(pgrep -P "$pane" 2>/dev/null || true); do  # cyber_launch, then its mainboards
    # shellcheck disable=SC2046
    fastdds_shm_note "$notes" "$p" $(ps -o pid= --ppid "$p" 2>/dev/null || true) || true
  done
}
until_screen() {  # PATTERN WHAT: at most 60 s
  local i
  for ((i = 0; i < 600; i++)); do
    note_shm
    screen | grep -qE -e "$1" && return 0
    sleep 0.1  # polling the screen; bounded to 60 s
  done
  fail "no $2 on the screen within 60 s"
}

# The reference: the same run without a terminal, never paused.
CYBER_DOMAIN_ID=$plain_domain "$launch" start "$example/sensor_polling.launch" \
  --mainboard="$example/mainboard" --log_dir="$out/plain_logs" --clock=simulated --run_for=5s \
  </dev/null >"$out/plain.out" 2>"$out/plain.err" &
plain_pid=$!
while kill -0 "$plain_pid" 2>/dev/null; do
  # shellcheck disable=SC2046
  fastdds_shm_note "$notes" "$plain_pid" $(ps -o pid= --ppid "$plain_pid" 2>/dev/null || true) || true
  sleep 0.1  # bounded by the test's timeout
done
wait "$plain_pid" || fail "the run without a terminal failed: $(tail -5 "$out/plain.out")"
plain_pid=""
grep '^trace digest: ' "$out/plain.out" >"$out/plain.digests" || fail "no digests in the plain run"

# --paused without a terminal is refused.
status=0
"$launch" start "$example/sensor_polling.launch" --mainboard="$example/mainboard" \
  --clock=simulated --run_for=5s --paused </dev/null >/dev/null 2>"$out/refused.err" || status=$?
[ "$status" -eq 2 ] && grep -q "needs a terminal" "$out/refused.err" ||
  fail "--paused without a terminal: exit $status, $(cat "$out/refused.err")"

cat >"$out/pane.sh" <<PANE
saved=\$(stty -g)
CYBER_DOMAIN_ID=$domain "$launch" start "$example/sensor_polling.launch" \
  --mainboard="$example/mainboard" --log_dir="$out/logs" --clock=simulated --run_for=5s --paused \
  >"$out/launch.out"
echo \$? >"$out/exit_status"
if [ "\$(stty -g)" = "\$saved" ]; then echo same >"$out/tty"; else echo changed >"$out/tty"; fi
sleep 120  # keeps the pane on the screen; the cleanup kills it
PANE
tmux_ new-session -d -x 160 -y 20 "bash $out/pane.sh"

until_screen "lockstep keys: space pauses" "key help"
# Held: both processes join, and no instant is granted.
sleep 1  # a grant, if one went out wrongly, would show as a step line
screen | grep -q "lockstep: step" && fail "a step was granted while paused"
for k in 1 2 3; do
  tmux_ send-keys s
  until_screen "lockstep paused at step $k \(" "step $k after s"
done
screen | grep -q "lockstep paused at step 3 (20ms simulated)" || fail "step 3 is not at 20ms"
screen | grep -q "lockstep paused at step 4" && fail "more than one step per s"
tmux_ send-keys ' '
until_screen "lockstep running at step" "the resume"
for ((i = 0; i < 600; i++)); do
  note_shm
  [ -s "$out/exit_status" ] && break
  sleep 0.1  # bounded to 60 s
done
[ -s "$out/exit_status" ] || fail "the run did not end within 60 s of the resume"
[ "$(cat "$out/exit_status")" = 0 ] || fail "cyber_launch exited $(cat "$out/exit_status")"
grep -q "reached the end: the end (5s) reached after 501 steps" "$out/launch.out" ||
  fail "the end was not reached after 501 steps"
grep '^trace digest: ' "$out/launch.out" >"$out/paused.digests" || fail "no digests"
diff "$out/plain.digests" "$out/paused.digests" || fail "pausing and stepping changed the digests"
[ "$(cat "$out/tty")" = same ] || fail "the terminal's settings were not restored"
echo "PASS: held, three single steps, resumed to the end with the digests of an unpaused run"
