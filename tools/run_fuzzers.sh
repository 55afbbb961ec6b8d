#!/usr/bin/env bash
# Runs every libFuzzer fuzzer of tests/fuzz (the <name>_fuzzer targets) for a
# bounded time each, starting from its committed seeds and regression inputs,
# and reports one line per fuzzer:
#
#   fuzz wheel_fuzzer: PASS (151234 execs, 2520 exec/s, cov 812, ft 2954, corpus 412)
#   fuzz dag_fuzzer: FAIL (/tmp/fuzz.XXXX/dag_fuzzer/artifacts/crash-...)
#   ...
#   fuzzers: 4 passed, 1 failed
#
# and exits non-zero if any fuzzer failed (a crash, a failed check, a
# timeout, running out of memory) or could not be built. The working corpus
# is a scratch copy: nothing in the repository is written. When a fuzzer
# fails, the scratch directory is kept so that the input it names can be
# replayed (bazel run //tests/fuzz:<name>_fuzzer -- <file>) and added to
# tests/fuzz/regressions/<name>_fuzzer/; see tests/fuzz/README.md.
#
#   tools/run_fuzzers.sh                          # every fuzzer, 60 s each
#   FUZZ_SECONDS=600 FUZZ_NICE=10 tools/run_fuzzers.sh
#   FUZZERS="wheel_fuzzer dag_fuzzer" tools/run_fuzzers.sh
#
# Environment: FUZZ_SECONDS (per fuzzer, default 60), FUZZERS (names, default
# all), FUZZ_JOBS (fuzzers run at once, default one per CPU), FUZZ_TIMEOUT
# (seconds one input may take, default 30), FUZZ_RSS_MB (default 2048),
# FUZZ_NICE (default 0), FUZZ_WORKDIR (scratch directory, default a new
# temporary one; kept if given).
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-30}
FUZZ_RSS_MB=${FUZZ_RSS_MB:-2048}
FUZZ_NICE=${FUZZ_NICE:-0}

if [ -n "${FUZZ_WORKDIR:-}" ]; then
  work="$FUZZ_WORKDIR"
  mkdir -p "$work"
  keep_work=1
else
  work="$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX")"
  keep_work=0
fi

# Every fuzzer target, unless FUZZERS names some.
if [ -n "${FUZZERS:-}" ]; then
  read -r -a names <<<"$FUZZERS"
else
  if ! query="$(bazel query --noshow_progress \
      'attr(name, "_fuzzer$", kind(cc_binary, //tests/fuzz:*))' 2>"$work/query.err")"; then
    cat "$work/query.err"
    echo "fuzzers: 0 passed, 1 failed"
    exit 1
  fi
  names=()
  for label in $(sort <<<"$query"); do names+=("${label##*:}"); done
fi
if [ ${#names[@]} -eq 0 ]; then
  echo "no fuzzers found"
  echo "fuzzers: 0 passed, 1 failed"
  exit 1
fi
targets=()
for name in "${names[@]}"; do targets+=("//tests/fuzz:$name"); done

echo "=== building ${#names[@]} fuzzers (--config=fuzz) ==="
build_start=$(date +%s)
if ! bazel build --config=fuzz "${targets[@]}"; then
  for name in "${names[@]}"; do echo "fuzz $name: FAIL (does not build)"; done
  echo "fuzzers: 0 passed, ${#names[@]} failed"
  [ "$keep_work" -eq 1 ] || rm -rf "$work"
  exit 1
fi
bin_dir="$(bazel info --config=fuzz bazel-bin 2>/dev/null)"
echo "=== build took $(( $(date +%s) - build_start )) s ==="

# Each fuzzer in its own directory, with a copy of its binary (a later build
# in this workspace must not swap it mid-run) and of its seeds.
run_one() {
  local name=$1
  local dir="$work/$name"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$bin_dir/tests/fuzz/$name" "$dir/$name"
  for src in "tests/fuzz/corpus/$name" "tests/fuzz/regressions/$name"; do
    [ -d "$src" ] && find "$src" -type f -exec cp {} "$dir/corpus/" \;
  done
  local flags=(
    "-max_total_time=$FUZZ_SECONDS"
    "-timeout=$FUZZ_TIMEOUT"
    "-rss_limit_mb=$FUZZ_RSS_MB"
    "-print_final_stats=1"
    "-artifact_prefix=$dir/artifacts/"
  )
  [ -f "tests/fuzz/$name.dict" ] && flags+=("-dict=tests/fuzz/$name.dict")
  local rc=0
  # TMPDIR: scratch files a fuzzer makes stay in the scratch directory, also
  # when a finding aborts it before it can clean up.
  TMPDIR="$dir" nice -n "$FUZZ_NICE" "$dir/$name" "${flags[@]}" "$dir/corpus" \
    >"$dir/log" 2>&1 || rc=$?
  # crash-/timeout-/oom-/leak- files are findings; slow-unit- files are not.
  local finding
  finding="$(find "$dir/artifacts" -type f ! -name 'slow-unit-*' | sort | head -n 1)"
  local execs rate cov ft
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -n 1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -n 1)"
  cov="$(grep -Eo 'cov: [0-9]+' "$dir/log" | tail -n 1 | cut -d' ' -f2)"
  ft="$(grep -Eo 'ft: [0-9]+' "$dir/log" | tail -n 1 | cut -d' ' -f2)"
  local corpus
  corpus="$(find "$dir/corpus" -type f | wc -l)"
  if [ "$rc" -eq 0 ] && [ -z "$finding" ]; then
    echo "fuzz $name: PASS (${execs:-?} execs, ${rate:-?} exec/s, cov ${cov:-?}, ft ${ft:-?}, corpus $corpus)" \
      >"$dir/result"
  else
    echo "fuzz $name: FAIL (${finding:-exit code $rc, see $dir/log})" >"$dir/result"
    # What went wrong, for the CI log.
    grep -E 'FUZZ_CHECK|ERROR: |SUMMARY: |Check failed|==[0-9]+==' "$dir/log" | head -n 20 \
      >"$dir/summary"
  fi
}

echo "=== fuzzing: ${FUZZ_SECONDS} s each, ${FUZZ_JOBS} at a time, in $work ==="
running=0
for name in "${names[@]}"; do
  run_one "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$FUZZ_JOBS" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

# Failure details first, then one line per fuzzer and the total, last.
passed=0
failed=0
for name in "${names[@]}"; do
  if [ -f "$work/$name/result" ] && grep -q ': PASS ' "$work/$name/result"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "--- $name: $work/$name/log"
    cat "$work/$name/summary" 2>/dev/null
  fi
done
if [ "$failed" -gt 0 ] || [ "$keep_work" -eq 1 ]; then
  echo "scratch directory kept: $work"
fi
for name in "${names[@]}"; do
  cat "$work/$name/result" 2>/dev/null || echo "fuzz $name: FAIL (no result; see $work/$name)"
done
[ "$failed" -gt 0 ] || [ "$keep_work" -eq 1 ] || rm -rf "$work"
echo "fuzzers: ${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
