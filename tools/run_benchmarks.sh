#!/usr/bin/env bash
# The project's figures, reproduced by one command (README "Performance"):
#
#   bash tools/run_benchmarks.sh            # everything, ~30 minutes
#   PARTS="peers accuracy" bash tools/run_benchmarks.sh   # a subset
#   PARTS=" " bash tools/run_benchmarks.sh   # only rewrite the index
#   TRANSPORT_SOAK=0 bash tools/run_benchmarks.sh   # without the 10-minute soak
#
# Installs what is missing (the build packages; libuv/libevent/Boost.Fiber
# when the peers or dispatch part runs; python3-matplotlib for the plots),
# builds with --config=opt and writes into docs/performance/ (override with
# OUT=...):
#
#   README.md        index: machine, date, commit, commands, peer tables and
#                    scale-run summary
#   peers.md         our wheel vs priority_queue, multimap, Boost.Asio, libuv
#                    and libevent, median of 3 runs, ratios to ours
#   timer_peers.md   whole cyber::Timer vs Boost.Asio, libuv, libevent timers
#                    and a priority_queue of std::function: ns per arm /
#                    cancel / re-arm / reset / expire, RSS bytes per timer
#   scale.md/.json   1e6 oneshot timeouts + 1e5 periodic timers, 60 s, real
#                    clock: RSS, tick-thread CPU, lateness vs the wake floor
#   dispatch_peers.md  empty tasks/s on 2 workers: Scheduler::Dispatch (one
#                    by one and batched), whole Timer callbacks, asio::post,
#                    Boost.Fiber; ratios to asio::post
#   fire_path.txt    tick-thread ns and allocations per expiry at 1e3, 1e5,
#                    1e6 live periodic timers (simulated clock, real
#                    scheduler)
#   capacity.md      live oneshot timeouts (each fired once) in doubling
#                    steps: RSS per timer, tick-thread CPU, the largest N
#                    under 5% of a core
#   accuracy/        REPORT.md with tables and SVG plots (real clock, each
#                    scenario next to a bare clock_nanosleep thread)
#   transport.md     between two processes on this host: one-way latency
#                    p50/p99 and throughput, 64 B and 64 KiB, 100 Hz and
#                    flat out, for ours (Writer/Reader on DdsTransport), bare
#                    Fast-DDS and bare UDP, each case the median of
#                    REPETITIONS runs, ratios ours/bare DDS (~6 min);
#                    then the soak: one reliable channel of ours at 1 kHz
#                    for TRANSPORT_SOAK (default 10m, the duration its
#                    target is stated for; 0 skips it): messages lost, time
#                    to the first message (tests/transport_bench)
#   large_messages.md  camera-sized messages between two processes on this
#                    host: 1 MiB and 4 MiB at 10 and 30 Hz, ours (protobuf
#                    bytes), bare Fast-DDS (raw bytes, shared memory) and
#                    loaned (LoanWriter -> Reader<SharedBytes>, read in
#                    place): p50/p99 and CPU of both ends, ratios
#                    loan/dds and loan/ours, each case the median of
#                    REPETITIONS runs (~8 min at 3)
#   hosts.md         across a link, two hosts made as network namespaces
#                    (root only; tools/hosts/bench.sh): one-way latency
#                    p50/p99 of ours, bare Fast-DDS and UDP, 64 B and
#                    64 KiB at 100 Hz, without and with DDS Security (CPU
#                    of both ends), 4 MiB messages flat out (~8 min)
#   wheel.md         our wheel vs the floor (a lock-free single-threaded
#                    hierarchical wheel, tests/reference/floor_wheel.h) and
#                    a priority_queue: ns per schedule / re-arm / cancel /
#                    expire at 1e3 and 1e6, ratios ours/floor (target
#                    <= 1.5x); two threads on one wheel (target <= 40 ns/op);
#                    medians and ranges of REPETITIONS runs
#                    (tools/wheel_table.py over wheel_benchmark.json)
#   record.md        cyber_recorder (record_throughput): from another process,
#                    10 channels x 1 kHz x 64 B and 2 channels x 30 Hz x
#                    4 MiB (none, lz4, zstd): sent, recorded, lost,
#                    dropped, recorder CPU per message; the sweep to where
#                    loss begins; McapWriter against dd (same block size,
#                    same run); 60 s of recording replayed into a graph
#                    test (fusion_replay_benchmark) (~3 min)
#   lockstep_runs.md  lockstep simulated time across processes: the cost of
#                    a step with 1, 2 and 4 members against a bare DDS round
#                    trip (lockstep_benchmark, REPETITIONS runs,
#                    tools/lockstep_table.py), then the two-process
#                    sensor_polling example 20 times for 60 simulated s,
#                    alone, with two CPU hogs, and all on one CPU: digests
#                    and speed (tools/lockstep_determinism.sh), and the
#                    three-process split's (~4 min)
#   timer_benchmark.txt, wheel_benchmark.txt, scheduler_benchmark.txt
#                    raw Google Benchmark output
#
# Measurements on the real clock need a quiet machine: nothing else should
# run meanwhile (no build, no test). Benchmarks are never part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

PARTS="${PARTS:-peers dispatch firepath timer wheel scheduler scale capacity accuracy transport large hosts record lockstep}"
OUT="${OUT:-docs/performance}"
REPETITIONS="${REPETITIONS:-3}"
TRANSPORT_SOAK="${TRANSPORT_SOAK:-10m}"
mkdir -p "$OUT"

has_part() { [[ " $PARTS " == *" $1 "* ]]; }

bash tools/setup.sh
if has_part peers || has_part dispatch; then
  bash tools/setup_peers.sh
fi

targets=()
has_part peers && targets+=(//tests/peers:peer_timer_benchmark
  //tests/peers:timer_level_benchmark)
has_part dispatch && targets+=(//tests/peers:dispatch_peer_benchmark)
has_part firepath && targets+=(//tests/fire_path:fire_path_benchmark)
has_part scale && targets+=(//tests/scale:timer_scale_run)
has_part capacity && targets+=(//tests/scale:timeout_capacity)
has_part timer && targets+=(//timer:timer_benchmark)
has_part wheel && targets+=(//timer:timing_wheel_benchmark)
has_part scheduler && targets+=(//scheduler:scheduler_benchmark)
has_part hosts && targets+=(//tests/transport_bench:transport_bench)
has_part large && targets+=(//tests/transport_bench:transport_bench)
has_part record && targets+=(//cyber/tools/cyber_recorder:record_throughput
  //examples/sensor_polling:fusion_replay_benchmark)
has_part lockstep && targets+=(//cyber/lockstep:lockstep_benchmark)
has_part transport && targets+=(//tests/transport_bench:transport_bench
  //tests/transport_bench:transport_soak)
if [ ${#targets[@]} -gt 0 ]; then
  bazel build --config=opt "${targets[@]}"
fi
bin="$(bazel info --config=opt bazel-bin)"

# "N CPUs, model, RAM, kernel, compiler", for the files that record their run.
machine() {
  echo "$(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1),"
  echo "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM,"
  echo "Linux $(uname -r), $(g++ --version | head -1)."
}

if has_part peers; then
  echo "=== peer benchmark (${REPETITIONS} repetitions) ==="
  "$bin/tests/peers/peer_timer_benchmark" \
    --benchmark_repetitions="$REPETITIONS" --table_out="$OUT/peers.md"
  echo "=== timer-level peer benchmark (${REPETITIONS} repetitions) ==="
  "$bin/tests/peers/timer_level_benchmark" \
    --benchmark_repetitions="$REPETITIONS" --table_out="$OUT/timer_peers.md"
fi
if has_part dispatch; then
  echo "=== dispatch peers (${REPETITIONS} repetitions) ==="
  "$bin/tests/peers/dispatch_peer_benchmark" \
    --benchmark_repetitions="$REPETITIONS" --table_out="$OUT/dispatch_peers.md"
fi
if has_part firepath; then
  echo "=== fire path: tick-thread cost and allocations per expiry ==="
  "$bin/tests/fire_path/fire_path_benchmark" \
    --benchmark_repetitions="$REPETITIONS" \
    --benchmark_report_aggregates_only=true | tee "$OUT/fire_path.txt"
fi
if has_part timer; then
  echo "=== timer benchmark: a whole Timer next to the bare wheel ==="
  "$bin/timer/timer_benchmark" --benchmark_repetitions="$REPETITIONS" \
    --benchmark_report_aggregates_only=true | tee "$OUT/timer_benchmark.txt"
fi
if has_part wheel; then
  # Every repetition goes to the JSON file (the table's medians and ranges
  # come from it); the console and wheel_benchmark.txt get the aggregates.
  # Random interleaving runs the repetitions of all rows in a shuffled
  # order, so ours, the floor and the heap share whatever other load the
  # machine has instead of one of them meeting it all.
  echo "=== wheel benchmark: ours, the floor and the heap (${REPETITIONS} repetitions) ==="
  wheel_args=(--benchmark_repetitions="$REPETITIONS"
    --benchmark_enable_random_interleaving=true
    --benchmark_display_aggregates_only=true
    --benchmark_out="$OUT/wheel_benchmark.json" --benchmark_out_format=json)
  "$bin/timer/timing_wheel_benchmark" "${wheel_args[@]}" \
    | tee "$OUT/wheel_benchmark.txt"
  {
    echo "# Wheel: ours, the floor, the heap"
    echo
    echo "Generated by \`PARTS=wheel REPETITIONS=$REPETITIONS bash tools/run_benchmarks.sh\`"
    echo "on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), which ran"
    echo "\`timing_wheel_benchmark ${wheel_args[*]}\`"
    echo "(//timer:timing_wheel_benchmark built with --config=opt) and"
    echo "\`python3 tools/wheel_table.py $OUT/wheel_benchmark.json\`."
    echo
    echo "Machine: $(machine)"
    echo
    echo "Ours is TimingWheel (timer/timing_wheel.h, with its lock); the floor is"
    echo "FloorWheel (tests/reference/floor_wheel.h), a lock-free single-threaded"
    echo "hierarchical wheel; the heap a std::priority_queue with lazy cancellation."
    echo "Same workload for the three: N live timers, delays uniform in [2 ms, 60 s]"
    echo "(ticks of 2 ms), fixed seed; see the benchmark's header for each row."
    echo
    python3 tools/wheel_table.py "$OUT/wheel_benchmark.json"
  } > "$OUT/wheel.md"
  echo "wrote $OUT/wheel.md"
fi
if has_part scheduler; then
  echo "=== scheduler benchmark ==="
  "$bin/scheduler/scheduler_benchmark" --benchmark_repetitions="$REPETITIONS" \
    --benchmark_report_aggregates_only=true | tee "$OUT/scheduler_benchmark.txt"
fi
# The real-clock parts last.
if has_part scale; then
  echo "=== scale run (60 s) ==="
  "$bin/tests/scale/timer_scale_run" --json_out="$OUT/scale.json" \
    --markdown_out="$OUT/scale.md"
fi
if has_part capacity; then
  echo "=== timeout capacity (1e6 .. 1.6e7 live timeouts, ~4 min) ==="
  "$bin/tests/scale/timeout_capacity" --markdown_out="$OUT/capacity.md"
fi
if has_part accuracy; then
  echo "=== accuracy report ==="
  bash tools/accuracy_report.sh --out "$OUT/accuracy"
fi

if has_part transport; then
  echo "=== transport between processes: ours, bare Fast-DDS, UDP (${REPETITIONS} repetitions) ==="
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$bin/tests/transport_bench/transport_bench" --repetitions="$REPETITIONS" \
    --markdown_out="$tmp/bench.md"
  if [[ "$TRANSPORT_SOAK" != "0" ]]; then
    echo "=== transport soak: one reliable channel at 1 kHz for $TRANSPORT_SOAK ==="
    "$bin/tests/transport_bench/transport_soak" --duration="$TRANSPORT_SOAK" \
      --markdown_out="$tmp/soak.md"
  fi
  {
    echo "# Transport between processes"
    echo
    echo "Generated by \`PARTS=transport REPETITIONS=$REPETITIONS TRANSPORT_SOAK=$TRANSPORT_SOAK bash tools/run_benchmarks.sh\`"
    echo "on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), with"
    echo "\`transport_bench --repetitions=$REPETITIONS\` and"
    echo "\`transport_soak --duration=$TRANSPORT_SOAK\` of"
    echo "tests/transport_bench (built with --config=opt)."
    echo
    echo "Machine: $(machine)"
    echo
    echo "## Latency and throughput: ours, bare Fast-DDS, UDP"
    echo
    cat "$tmp/bench.md"
    echo
    echo "## Soak: one reliable channel of ours at 1 kHz"
    echo
    if [ -f "$tmp/soak.md" ]; then
      cat "$tmp/soak.md"
    else
      echo "Not run (TRANSPORT_SOAK=0)."
    fi
  } > "$OUT/transport.md"
  echo "wrote $OUT/transport.md"
fi

if has_part large; then
  echo "=== camera-sized messages: ours, bare Fast-DDS, loaned (${REPETITIONS} repetitions) ==="
  large_tmp="$(mktemp -d)"
  "$bin/tests/transport_bench/transport_bench" --repetitions="$REPETITIONS" \
    --paths=ours,ours_ds,dds,dds_ds,loan --sizes=1048576,4194304 --rates=10,30 \
    --markdown_out="$large_tmp/large.md"
  {
    echo "# Camera-sized messages between processes"
    echo
    echo "Generated by \`PARTS=large REPETITIONS=$REPETITIONS bash tools/run_benchmarks.sh\`"
    echo "on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), with"
    echo "\`transport_bench --repetitions=$REPETITIONS --paths=ours,ours_ds,dds,dds_ds,loan"
    echo "--sizes=1048576,4194304 --rates=10,30\` of tests/transport_bench (built"
    echo "with --config=opt). What the loan path is: [../transport.md](../transport.md),"
    echo "\"Camera-sized messages\"."
    echo
    echo "Machine: $(machine)"
    echo
    cat "$large_tmp/large.md"
  } > "$OUT/large_messages.md"
  rm -rf "$large_tmp"
  echo "wrote $OUT/large_messages.md"
fi

if has_part hosts; then
  # Two hosts as network namespaces (root only): latency with and without
  # DDS Security, 4 MiB throughput (tools/hosts/bench.sh, ~8 minutes).
  if [ "$(id -u)" -eq 0 ]; then
    echo "=== across a link: two hosts as network namespaces (${REPETITIONS} repetitions) ==="
    REPETITIONS="$REPETITIONS" bash tools/hosts/bench.sh "$OUT/hosts.md" \
      "$bin/tests/transport_bench/transport_bench"
  else
    echo "=== hosts: skipped (network namespaces need root) ==="
  fi
fi

if has_part record; then
  echo "=== recording and replay ==="
  rt="$bin/cyber/tools/cyber_recorder/record_throughput"
  {
    echo "# Recording and replay"
    echo
    echo "$(machine)"
    echo "Generated by \`PARTS=record bash tools/run_benchmarks.sh\` on"
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)."
    echo "A writer process and the Recorder (as \`cyber_recorder record -a\`) on"
    echo "this host; lost = gaps in the writers' sequences, dropped = the"
    echo "recorder's queue, CPU = the recording process per recorded message."
    echo "Payloads are incompressible (xorshift bytes)."
    echo
    echo '```'
    "$rt" --channels=10 --hz=1000 --size=64 --seconds=10 2>/dev/null
    for c in none lz4 zstd; do
      "$rt" --channels=2 --hz=30 --size=4194304 --seconds=10 --compression=$c 2>/dev/null
    done
    "$rt" --sweep --seconds=5 2>/dev/null
    "$rt" --disk_mib=512 --dir="${TMPDIR:-/tmp}" 2>/dev/null
    echo '```'
    echo
    echo "Replay into a graph test (60 s of pollers into fusion.dag alone):"
    echo
    echo '```'
    (cd "$bin/examples/sensor_polling/fusion_replay_benchmark.runfiles/cyber_timer" &&
      "$bin/examples/sensor_polling/fusion_replay_benchmark" 2>/dev/null | tail -1)
    echo '```'
  } > "$OUT/record.md"
  echo "wrote $OUT/record.md"
fi

if has_part lockstep; then
  echo "=== lockstep: a step's cost, and the two-process example's digests and speed ==="
  ls_dir="$(mktemp -d "${TMPDIR:-/tmp}/lockstep_bench.XXXXXX")"
  ls_json=()
  for ((i = 1; i <= REPETITIONS; i++)); do
    "$bin/cyber/lockstep/lockstep_benchmark" --benchmark_repetitions=3 \
      --benchmark_display_aggregates_only=true \
      --benchmark_out="$ls_dir/run$i.json" --benchmark_out_format=json
    ls_json+=("$ls_dir/run$i.json")
  done
  determinism_status=0
  LOCKSTEP_JSON="$ls_dir/determinism.json" bash tools/lockstep_determinism.sh \
    | tee "$ls_dir/determinism.txt" || determinism_status=$?
  RUNS=12 LAUNCH=sensor_polling_three_processes.launch bash tools/lockstep_determinism.sh \
    | tee "$ls_dir/determinism3.txt" || determinism_status=$?
  {
    echo "# Lockstep: a step's cost, determinism and speed"
    echo
    echo "$(machine)"
    echo "Generated by \`PARTS=lockstep REPETITIONS=$REPETITIONS bash tools/run_benchmarks.sh\` on"
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)."
    echo
    echo "## A step against a bare round trip"
    echo
    echo "\`lockstep_benchmark --benchmark_repetitions=3\` (//cyber/lockstep, --config=opt),"
    echo "$REPETITIONS runs; the table is \`python3 tools/lockstep_table.py\` over their"
    echo "JSON. Every participant (coordinator, members, the round trip's two) is"
    echo "a DdsTransport of its own; samples cross shared memory as between"
    echo "processes. What the columns mean: [lockstep.md](lockstep.md)."
    echo
    python3 tools/lockstep_table.py "${ls_json[@]}"
    echo "## The two-process sensor_polling example, 60 simulated seconds"
    echo
    echo "\`bash tools/lockstep_determinism.sh\` (20 runs; speed = simulated time /"
    echo "wall time of the whole run, start-up and shut-down included; stepping ="
    echo "the same from the first grant to the end, cyber_launch's own figure):"
    echo
    echo '```'
    cat "$ls_dir/determinism.txt"
    echo '```'
    echo
    echo "## The same graph as three processes (imu, lidar, fusion), 60 simulated seconds"
    echo
    echo "\`RUNS=12 LAUNCH=sensor_polling_three_processes.launch bash tools/lockstep_determinism.sh\`:"
    echo "fusion reads from two processes and gathers their messages of each 100 ms"
    echo "instant (docs/lockstep.md, \"One order for everything\"); each process's"
    echo "digests are trace/delivery."
    echo
    echo '```'
    cat "$ls_dir/determinism3.txt"
    echo '```'
  } > "$OUT/lockstep_runs.md"
  rm -rf "$ls_dir"
  echo "wrote $OUT/lockstep_runs.md"
  if [ "$determinism_status" -ne 0 ]; then
    echo "lockstep: the determinism runs FAILED (see $OUT/lockstep_runs.md)"
    exit 1
  fi
fi

# The index, from whatever this run (or an earlier one) left in $OUT.
{
  echo "# Performance figures"
  echo
  if [[ -z "${PARTS// /}" ]]; then
    echo "Index written by \`PARTS=\" \" bash tools/run_benchmarks.sh\` on"
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD),"
    echo "from the files earlier runs left here (each records its own run)."
  else
    echo "Generated by \`bash tools/run_benchmarks.sh\` (parts: $PARTS) on"
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)."
  fi
  echo
  echo "Machine: $(machine)"
  echo
  if [ -f "$OUT/peers.md" ]; then
    echo "## Timer peers (ns/op)"
    echo
    cat "$OUT/peers.md"
    echo
  fi
  if [ -f "$OUT/timer_peers.md" ]; then
    echo "## Timer peers, whole timer (ns/op, bytes)"
    echo
    cat "$OUT/timer_peers.md"
    echo
  fi
  if [ -f "$OUT/dispatch_peers.md" ]; then
    echo "## Dispatch peers (tasks/s on 2 workers)"
    echo
    cat "$OUT/dispatch_peers.md"
    echo
  fi
  if [ -f "$OUT/scale.md" ]; then
    echo "## Scale run"
    echo
    cat "$OUT/scale.md"
    echo
  fi
  if [ -f "$OUT/wheel.md" ]; then
    echo "## Wheel: ours, the floor, the heap"
    echo
    echo "See [wheel.md](wheel.md): ns/op next to a lock-free single-threaded"
    echo "wheel and a priority_queue, ratios to the floor, two threads on one wheel."
    echo
  fi
  if [ -f "$OUT/capacity.md" ]; then
    echo "## Capacity: live timeouts per process, tick thread under 5%"
    echo
    cat "$OUT/capacity.md"
    echo
  fi
  if [ -f "$OUT/transport.md" ]; then
    echo "## Transport between processes"
    echo
    echo "See [transport.md](transport.md): latency and throughput of ours next to"
    echo "bare Fast-DDS and UDP, and the 1 kHz soak."
    echo
  fi
  if [ -f "$OUT/large_messages.md" ]; then
    echo "## Camera-sized messages between processes"
    echo
    echo "See [large_messages.md](large_messages.md): 1 and 4 MiB at 10 and 30 Hz,"
    echo "ours (protobuf), bare Fast-DDS and loaned (read in place), p50/p99 and CPU."
    echo
  fi
  if [ -f "$OUT/hosts.md" ]; then
    echo "## Across a link (two hosts as network namespaces)"
    echo
    echo "See [hosts.md](hosts.md): latency of ours, bare Fast-DDS and UDP across a"
    echo "veth link, with and without DDS Security (and its CPU cost), and 4 MiB throughput."
    echo
  fi
  if [ -f "$OUT/record.md" ]; then
    echo "## Recording and replay"
    echo
    echo "See [record.md](record.md): what cyber_recorder records from another process"
    echo "without loss, its CPU per message, its writer against dd, and replay speed."
    echo
  fi
  if [ -f "$OUT/lockstep_runs.md" ]; then
    echo "## Lockstep simulated time across processes"
    echo
    echo "See [lockstep_runs.md](lockstep_runs.md): a step's cost with 1, 2 and 4"
    echo "processes against a bare round trip, and the two-process example's digests"
    echo "and speed over 20 runs; the analysis is in [lockstep.md](lockstep.md)."
    echo
  fi
  if [ -f "$OUT/accuracy/REPORT.md" ]; then
    echo "## Accuracy"
    echo
    echo "See [accuracy/REPORT.md](accuracy/REPORT.md) (tables and plots)."
    echo
  fi
  for f in fire_path timer_benchmark wheel_benchmark scheduler_benchmark; do
    if [ -f "$OUT/$f.txt" ]; then
      echo "## $f (raw Google Benchmark output)"
      echo
      echo '```'
      cat "$OUT/$f.txt"
      echo '```'
      echo
    fi
  done
} > "$OUT/README.md"
echo "wrote $OUT/README.md"
