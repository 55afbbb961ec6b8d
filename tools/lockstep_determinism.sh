#!/usr/bin/env bash
# Lockstep's determinism target (issue 37): the two-process sensor_polling
# example (sensor_polling.launch: pollers and fusion, two mainboards) run
# RUNS times for SIMULATED of simulated time with cyber_launch as the
# coordinator; a third of the runs alone, a third with two CPU hogs, a third
# with two CPU hogs and every process on one CPU, the hogs too (taskset -c 0). Every
# run must print the same trace digest and the same delivery digest in each
# process. LAUNCH names another launch file of the example (the three-process
# split, where fusion gathers its two writers' messages).
#
#   bash tools/lockstep_determinism.sh                 # 20 runs of 60 s
#   RUNS=6 SIMULATED=20s bash tools/lockstep_determinism.sh
#   LAUNCH=sensor_polling_three_processes.launch bash tools/lockstep_determinism.sh
#   LOCKSTEP_JSON=out.json bash tools/lockstep_determinism.sh
#
# Prints a line per run (load, wall time, speed, digests) and ends with
#   lockstep determinism: PASS (N runs, ..., one trace/delivery digest per process)
# or FAIL (what differed); exit status 0 on PASS. Builds with --config=opt.
# Leaves nothing running and nothing in /dev/shm.
set -uo pipefail
cd "$(dirname "$0")/.."
source cyber/testing/fastdds_shm.sh

runs="${RUNS:-20}"
launch_file="examples/sensor_polling/${LAUNCH:-sensor_polling.launch}"
[ -f "$launch_file" ] || { echo "lockstep determinism: FAIL (no $launch_file)"; exit 2; }
simulated="${SIMULATED:-60s}"
config="${LOCKSTEP_CONFIG:-opt}"
# SIMULATED in seconds ("60s", "500ms"), for the speeds.
simulated_s=$(awk -v s="$simulated" 'BEGIN {
  if (s ~ /ms$/) print substr(s, 1, length(s) - 2) / 1000; else print substr(s, 1, length(s) - 1) }')

if ! bazel build --config="$config" //examples/sensor_polling:mainboard //cyber/tools/cyber_launch; then
  echo "lockstep determinism: FAIL (build failed, --config=$config)"
  exit 1
fi
bin="$(bazel info --config="$config" bazel-bin 2>/dev/null)"
launch="$bin/cyber/tools/cyber_launch/cyber_launch"
mainboard="$bin/examples/sensor_polling/mainboard"

work="$(mktemp -d "${TMPDIR:-/tmp}/lockstep_determinism.XXXXXX")"
notes="$work/shm_files"
hogs=()
domains=()
launcher_pid=""
cleanup() {
  local status=$? d
  trap - EXIT INT TERM
  stop_hogs
  if [ -n "$launcher_pid" ] && kill -0 "$launcher_pid" 2>/dev/null; then stop "$launcher_pid" || true; fi
  for d in "${domains[@]}"; do fastdds_shm_remove "$notes" "$d" >/dev/null || true; done
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_hogs [CPU]: two busy loops, on CPU only if given.
start_hogs() {
  local i pin=()
  [ $# -gt 0 ] && pin=(taskset -c "$1")
  for i in 1 2; do
    "${pin[@]}" bash -c 'while :; do :; done' &
    hogs+=($!)
  done
}
stop_hogs() {
  local p
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  hogs=()
}

first=""
failed=0
json_rows=()
# speed: simulated time / wall time of the whole run (start-up included);
# stepping: the same from the first grant to the end (cyber_launch's figure).
echo "run  load                 wall s   speed x  stepping   digests"
for ((n = 1; n <= runs; n++)); do
  load="alone"
  pin=()
  if ((n > 2 * runs / 3)); then
    load="2 hogs, all on CPU 0"
    start_hogs 0
    pin=(taskset -c 0)
  elif ((n > runs / 3)); then
    load="2 hogs"
    start_hogs
  fi
  domain=$(fastdds_shm_free_domain)
  domains+=("$domain")
  begin=$(date +%s.%N)
  env CYBER_DOMAIN_ID="$domain" "${pin[@]}" "$launch" start "$launch_file" \
    --mainboard="$mainboard" --log_dir="$work/logs.$n" --clock=simulated --run_for="$simulated" \
    >"$work/run.$n.out" 2>"$work/run.$n.err" &
  launcher_pid=$!
  # The files in /dev/shm the processes use are noted (for the clean-up
  # after a crash) at 0.4 s and then every 2 s: the note forks a few dozen
  # times, which on this 2-CPU machine slows the run it measures.
  polls=0
  while kill -0 "$launcher_pid" 2>/dev/null; do
    if ((polls % 10 == 2)); then
      # shellcheck disable=SC2046
      fastdds_shm_note "$notes" "$launcher_pid" $(ps -o pid= --ppid "$launcher_pid" 2>/dev/null || true) || true
    fi
    polls=$((polls + 1))
    sleep 0.2
  done
  status=0
  wait "$launcher_pid" || status=$?
  launcher_pid=""
  end=$(date +%s.%N)
  stop_hogs
  # <process>=<trace digest>/<delivery digest>
  digests=$(awk '/^== [^ ]+ \(.*\) ==$/ { p = $2 } /^trace digest: / && p != "" { t = $3 }
    /^delivery digest: / && p != "" { printf "%s=%s/%s ", p, t, $3 }' "$work/run.$n.out")
  wall=$(awk -v a="$begin" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
  speed=$(awk -v t="$simulated_s" -v w="$wall" 'BEGIN { printf "%.1f", t / w }')
  # The coordinator's own figure: from the first grant to the end.
  stepping=$(sed -n 's/.*simulated in \([0-9.]*\)\(m*s\) of real time.*/\1 \2/p' "$work/run.$n.out" |
    awk -v t="$simulated_s" '{ w = ($2 == "ms") ? $1 / 1000 : $1; printf "%.1f", t / w }')
  printf "%-4d %-20s %7.2f %9.1f %9s   %s\n" "$n" "$load" "$wall" "$speed" "${stepping:--}" "$digests"
  json_rows+=("{\"run\": $n, \"load\": \"$load\", \"wall_s\": $wall, \"speed\": $speed, \"stepping_speed\": ${stepping:-null}, \"exit\": $status, \"digests\": \"${digests% }\"}")
  if [ "$status" -ne 0 ] || [ -z "$digests" ]; then
    echo "  run $n: cyber_launch exited $status; its output:"
    tail -20 "$work/run.$n.out" "$work/run.$n.err" | sed 's/^/  /'
    failed=1
    continue
  fi
  if [ -z "$first" ]; then
    first="$digests"
  elif [ "$digests" != "$first" ]; then
    echo "  run $n: digests differ from run 1 ($first)"
    failed=1
  fi
done
if [ -n "${LOCKSTEP_JSON:-}" ]; then
  (IFS=,; echo "[${json_rows[*]}]") >"$LOCKSTEP_JSON"
fi
if [ "$failed" -ne 0 ]; then
  echo "lockstep determinism: FAIL (see the runs above)"
  exit 1
fi
echo "lockstep determinism: PASS ($runs runs of $simulated, $launch_file, one trace/delivery digest per process: ${first% })"
