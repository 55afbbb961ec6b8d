#!/bin/bash
# cyber_recorder on the sensor_polling example's two processes: see BUILD.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
example="$root/examples/sensor_polling"
mainboard="$example/mainboard"
recorder="$root/cyber/tools/cyber_recorder/cyber_recorder"
check="$root/cyber/record/mcap/testing/check_mcap.js"
out="$TEST_TMPDIR"
notes="$out/shm_files"
# shellcheck source=cyber/testing/process_test.sh
source "$root/cyber/testing/process_test.sh"  # pids, domains, the clean-up, fail

# foxglove FILE [--truncated]: Foxglove's own MCAP reader accepts it.
foxglove() {
  local line
  line=$(node "$check" "$@") || fail "Foxglove's reader on $1: $line"
  echo "foxglove: $line"
}

# count CHANNEL FILE: the channel's message count in `info`'s table.
count() {
  awk -v c="$1" '$1 == c { print $3 }' "$2"
}

domain=$(fastdds_shm_free_domain)
domains+=("$domain")
export CYBER_DOMAIN_ID=$domain
echo "=== 1. record -a, started before the graph: the channels that appear are recorded, nothing lost, Foxglove reads the file"
timeout 60 "$recorder" record -a -o "$out/drive.mcap" --duration 5 >"$out/record.out" 2>"$out/record.err" &
rec=$!
pids+=($rec)
for ((i = 0; i < 600; i++)); do
  grep -q "^recording domain" "$out/record.out" 2>/dev/null && break
  sleep 0.1  # bounded to 60 s
done
"$mainboard" --process_name=pollers -d "$example/pollers.dag" >"$out/pollers.out" 2>"$out/pollers.err" &
pollers=$!
pids+=($pollers)
status=0
wait "$rec" || status=$?
[ "$status" -eq 0 ] || fail "record exited $status"
cat "$out/record.out"
grep -qE '^  /sensor/imu +[0-9]+ +0 +0 +1$' "$out/record.out" || fail "no /sensor/imu line with 0 lost, 0 dropped, 1 writer"
grep -qE '^  /sensor/lidar +[0-9]+ +0 +0 +1$' "$out/record.out" || fail "no /sensor/lidar line"
"$recorder" info "$out/drive.mcap" >"$out/info.out" || fail "info exited $?"
cat "$out/info.out"
grep -q "complete (summary and indexes)" "$out/info.out" || fail "info: not complete"
grep -q "sensor_polling.ImuReading" "$out/info.out" || fail "info: no ImuReading"
grep -q "from pollers@" "$out/info.out" || fail "info: the writer's process is not named"
imu=$(count /sensor/imu "$out/info.out")
lidar=$(count /sensor/lidar "$out/info.out")
# 100 Hz and 10 Hz for at most the recorder's 5 s; at least 1.5 s of it
# (the mainboard's start, discovery and the subscription take part of the
# first seconds, more on a loaded machine; section 4 needs 1.5 s).
[ "$imu" -ge 150 ] && [ "$imu" -le 520 ] || fail "imu count $imu"
[ "$lidar" -ge 12 ] && [ "$lidar" -le 52 ] || fail "lidar count $lidar"
foxglove "$out/drive.mcap"

echo "=== 2. a recorder that cannot keep up says so and counts every drop, and only as dropped"
# A queue of 300 bytes: a few IMU readings fit between two writes (every
# 100 ms), the rest are dropped. Nothing is lost before the recorder, so
# every message is received or dropped, never counted lost.
timeout 60 "$recorder" record -c /sensor/imu -o "$out/dropping.mcap" --duration 3 --queue_bytes 300 \
  >"$out/dropping.out" 2>"$out/dropping.err" || fail "record exited $?"
cat "$out/dropping.out"
grep -q "the recorder cannot keep up" "$out/dropping.out" || fail "no 'cannot keep up' in the status line"
grep -q "cannot keep up: it holds" "$out/dropping.err" || fail "no warning in the log"
read -r received lost dropped < <(awk '$1 == "/sensor/imu" { print $2, $3, $4 }' "$out/dropping.out")
[[ "$received" =~ ^[0-9]+$ && "$lost" =~ ^[0-9]+$ && "$dropped" =~ ^[0-9]+$ ]] || fail "no /sensor/imu row"
[ "$received" -ge 1 ] || fail "nothing passed a queue of 300 bytes"
[ "$dropped" -ge 10 ] || fail "dropped $dropped on /sensor/imu"
[ "$lost" -eq 0 ] || fail "drops counted as lost too ($lost)"
"$recorder" info "$out/dropping.mcap" >"$out/dropping_info.out"
awk -v d="$dropped" -v n="$received" '$1 == "/sensor/imu" && $3 == n && $5 == 0 && $6 == d { ok = 1 }
  END { exit !ok }' "$out/dropping_info.out" ||
  fail "the file does not store $received received, 0 lost, $dropped dropped: $(cat "$out/dropping_info.out")"
foxglove "$out/dropping.mcap"

echo "=== 3. a recorder killed with -9: its complete chunks read; recover makes it whole"
"$recorder" record -a -k /sensor/lidar -o "$out/killed.mcap" >"$out/killed.out" 2>"$out/killed.err" &
rec=$!
pids+=($rec)
# Killed once 200 messages are in and a flush period (1 s) has passed.
for ((i = 0; i < 600; i++)); do
  # The background recorder's shell may not have made killed.out yet: sed
  # then fails, which must not end the test (set -e, pipefail).
  n=$(sed -n 's/^\[ *[0-9.]* s\] [0-9]* channels, \([0-9]*\) messages.*/\1/p' "$out/killed.out" 2>/dev/null | tail -1 || true)
  [ "${n:-0}" -ge 200 ] && break
  sleep 0.1  # bounded to 60 s
done
[ "${n:-0}" -ge 200 ] || fail "the recorder to be killed recorded ${n:-nothing} in 60 s"
sleep 1.5  # past the recorder's 1 s flush, so the messages counted are on disk
kill -9 "$rec"
wait "$rec" 2>/dev/null || true
fastdds_shm_note "$notes" "$rec" || true
"$recorder" info "$out/killed.mcap" >"$out/killed_info.out" || fail "info of the cut file exited $?"
cat "$out/killed_info.out"
grep -q "cut short" "$out/killed_info.out" || fail "info does not say the file was cut short"
grep -qE '^  /sensor/lidar ' "$out/killed_info.out" && fail "-k /sensor/lidar was recorded"
kept=$(count /sensor/imu "$out/killed_info.out")
[ "${kept:-0}" -ge 100 ] || fail "only ${kept:-no} IMU messages readable after the kill"
foxglove "$out/killed.mcap" --truncated
"$recorder" recover -f "$out/killed.mcap" -o "$out/recovered.mcap" >"$out/recover.out" || fail "recover exited $?"
cat "$out/recover.out"
"$recorder" info "$out/recovered.mcap" >"$out/recovered_info.out"
grep -q "complete (summary and indexes)" "$out/recovered_info.out" || fail "recovered file not complete"
[ "$(count /sensor/imu "$out/recovered_info.out")" = "$kept" ] || fail "recover lost messages"
awk '$1 == "/sensor/imu" && $5 == "0" { ok = 1 } END { exit !ok }' "$out/recovered_info.out" ||
  fail "recover did not count losses (lost 0 expected): $(cat "$out/recovered_info.out")"
foxglove "$out/recovered.mcap"

echo "=== 4. split by time: 0.5 s to 1.5 s after the first message"
"$recorder" split -f "$out/drive.mcap" -o "$out/second.mcap" -b 0.5 -e 1.5 -c /sensor/imu >"$out/split.out" ||
  fail "split exited $?"
"$recorder" info "$out/second.mcap" >"$out/second_info.out"
n=$(count /sensor/imu "$out/second_info.out")
# 100 Hz for 1 s of receive time; a stall of the loaded machine moves a
# few readings across an edge.
[ "$n" -ge 85 ] && [ "$n" -le 115 ] || fail "split of 1 s of 100 Hz gave $n"
grep -qE '^  /sensor/lidar ' "$out/second_info.out" && fail "split kept /sensor/lidar"
foxglove "$out/second.mcap"

echo "=== 5. play into fusion alone: every recorded IMU message reaches it"
stop "$pollers"
"$mainboard" --process_name=fusion -d "$example/fusion.dag" >"$out/fusion.out" 2>"$out/fusion.err" &
fusion=$!
pids+=($fusion)
timeout 60 "$recorder" play -f "$out/drive.mcap" -r 2 --wait_for_readers 20 --no_keys \
  >"$out/play.out" 2>"$out/play.err" || fail "play exited $?"
cat "$out/play.out"
grep -q "played $((imu + lidar)) of $((imu + lidar)) messages" "$out/play.out" || fail "not every message played"
sleep 1  # the last messages in flight reach fusion before it stops
fastdds_shm_note "$notes" "$fusion" || true
stop "$fusion"
# What fusion's process received on /sensor/imu (its channel table:
# received, dropped, p99 are the last three columns), and what its
# component did with them (run, or dropped from its own queue when the
# 2x burst outran it: counted, not lost).
received=$(awk '$1 == "/sensor/imu" { print $(NF - 2) }' "$out/fusion.out")
[ "$received" = "$imu" ] || fail "fusion's process received $received of $imu recorded IMU messages"
read -r procs dropped < <(awk '$1 == "fusion" && $2 == "Fusion" { print $3, $9 }' "$out/fusion.out")
[[ "$procs" =~ ^[0-9]+$ && "$dropped" =~ ^[0-9]+$ ]] || fail "no fusion row in fusion's summary"
[ "$((procs + dropped))" = "$imu" ] || fail "fusion ran $procs and dropped $dropped of $imu"

echo "=== 6. bad input is named"
set +e
"$recorder" info "$out/none.mcap" 2>"$out/bad.err"; status=$?
set -e
[ "$status" -eq 1 ] && grep -q "none.mcap" "$out/bad.err" || fail "info of a missing file: $status"
set +e
"$recorder" play -f "$out/drive.mcap" -c /not/recorded --no_keys >/dev/null 2>"$out/bad.err"; status=$?
set -e
[ "$status" -ne 0 ] && grep -q '"/not/recorded" is not in the recording' "$out/bad.err" ||
  fail "play -c of a channel not recorded: $status $(cat "$out/bad.err")"
echo "PASS"
