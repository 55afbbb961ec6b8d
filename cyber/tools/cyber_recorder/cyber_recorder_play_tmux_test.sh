#!/usr/bin/env bash
# cyber_recorder play in a real terminal (tmux, 120 x 10), playing the
# example's recording (testdata/pollers_10s.mcap, 10 s) on a DDS domain of
# this run's own. Reading the screen with `tmux capture-pane` and typing
# with `tmux send-keys`, checks that
#   - the status line shows the pass and the messages played;
#   - space pauses: the count stops moving;
#   - s while paused sends exactly one message, twice;
#   - space resumes, q quits: exit 0, "played N of 1101", and the
#     terminal's settings (stty -g) are as they were before.
# No timing assertion: each wait polls the screen against a generous
# deadline. The EXIT trap stops the tmux server of this test's own socket
# and removes what the player left in /dev/shm.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
example="$root/examples/sensor_polling"
recorder="$root/cyber/tools/cyber_recorder/cyber_recorder"
recording="$example/testdata/pollers_10s.mcap"
source "$root/cyber/testing/fastdds_shm.sh"
out="$TEST_TMPDIR"
notes="$out/shm_files"
domain=$(fastdds_shm_free_domain)
sockdir=$(mktemp -d /tmp/cyber_recorder_test.XXXXXX)
tmux_() { tmux -S "$sockdir/tmux" -f /dev/null "$@"; }

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  tmux_ kill-server 2>/dev/null || true
  fastdds_shm_remove "$notes" "$domain" || true
  rm -rf "$sockdir"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM  # bazel's timeout

screen() { tmux_ capture-pane -p 2>/dev/null || true; }
fail() {
  { echo "FAIL: $*"; echo "--- screen"; screen; echo "--- log"; tail -20 "$out/play.log" 2>/dev/null || true; } >&2
  exit 1
}
note_shm() {
  local pane
  pane=$(tmux_ list-panes -F '#{pane_pid}' 2>/dev/null || true)
  # shellcheck disable=SC2046
  fastdds_shm_note "$notes" $( [ -n "$pane" ] && ps -o pid= --ppid "$pane" || true) || true
}
# played: the count of the status line now ("[paused ] pass 1: 123/1101").
played() {
  screen | sed -n 's/.*\] pass [0-9]*: \([0-9]*\)\/1101 messages.*/\1/p' | tail -1
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
until_played() {  # N: at most 60 s for the count to reach exactly N
  local i n
  for ((i = 0; i < 600; i++)); do
    n=$(played)
    [ "$n" = "$1" ] && return 0
    [ -n "$n" ] && [ "$n" -gt "$1" ] && fail "played $n, expected $1"
    sleep 0.1  # bounded to 60 s
  done
  fail "the count did not reach $1 (it is $(played))"
}

cat >"$out/pane.sh" <<PANE
saved=\$(stty -g)
CYBER_DOMAIN_ID=$domain "$recorder" play -f "$recording" --wait_for_readers 0 2>"$out/play.log"
echo \$? >"$out/exit_status"
if [ "\$(stty -g)" = "\$saved" ]; then echo same >"$out/tty"; else echo changed >"$out/tty"; fi
sleep 60  # keeps the pane (and play's last line) on the screen; the cleanup kills it
PANE
tmux_ new-session -d -x 120 -y 10 "bash $out/pane.sh"

until_screen '\[playing\] pass 1: [0-9]+/1101 messages' "status line"
tmux_ send-keys Space
until_screen '\[paused \] pass 1:' "paused status"
# The message in hand when the pause came may still go: the count is read
# once two looks 0.3 s apart agree.
n=$(played)
for ((i = 0; i < 20; i++)); do
  sleep 0.3
  [ "$(played)" = "$n" ] && break
  n=$(played)
done
sleep 1  # paused: nothing may move in a second
[ "$(played)" = "$n" ] || fail "the count moved while paused ($n -> $(played))"
echo "paused at $n"
tmux_ send-keys s
until_played $((n + 1))
tmux_ send-keys s
until_played $((n + 2))
sleep 0.5  # paused: a third message in this half second would be a step sending two
[ "$(played)" = "$((n + 2))" ] || fail "a step sent more than one message"
echo "two steps: $((n + 2))"
tmux_ send-keys Space
until_screen '\[playing\] pass 1:' "playing again"
tmux_ send-keys q
for ((i = 0; i < 600; i++)); do
  [ -f "$out/tty" ] && break
  sleep 0.1  # bounded to 60 s
done
[ -f "$out/tty" ] || fail "q did not end play"
[ "$(cat "$out/exit_status")" = 0 ] || fail "play exited $(cat "$out/exit_status")"
[ "$(cat "$out/tty")" = same ] || fail "the terminal's settings were not restored"
screen | grep -qE '^played [0-9]+ of 1101 messages' || fail "no 'played N of 1101' line"
echo "PASS"
