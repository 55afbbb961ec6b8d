#!/usr/bin/env bash
# The README's second command: installs what is missing, then runs the whole
# test suite in the default config and under AddressSanitizer,
# UndefinedBehaviorSanitizer and ThreadSanitizer, the layering check
# (tools/check_layers.sh), a clang 14 build with
# -Wthread-safety as errors, a -c opt build of every target, every libFuzzer fuzzer for a bounded time
# (FUZZ_SECONDS each, default 60) and the timer soak for SOAK_DURATION
# (default 30s), the programs put on PATH by cyber/setup.bash (each answers
# --help), and a graph test built in a separate Bazel workspace that
# uses this repository through local_repository, and the multi-host
# scenarios (tools/hosts/scenarios.sh: hosts as network namespaces, as
# root; skipped with a message where they cannot be made). Ends with the plain line
# "N passed, N failed" (each test target in each config counts once; the
# layering check, the programs check, the clang build, the opt build, each fuzzer, the soak, the external workspace,
# each multi-host scenario and the
# /dev/shm check count as one check each) and exits non-zero if anything
# failed. The /dev/shm check: no Fast-DDS file or loan segment the run added is left (the
# transport tests kill peers with -9).
#
#   tools/run_tests.sh                     # everything
#   CONFIGS="default tsan" tools/run_tests.sh   # a subset
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

CONFIGS="${CONFIGS:-layers programs default asan ubsan tsan clang opt fuzz soak workspace hosts}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Every test target `bazel test //...` runs (manual ones excluded).
if ! bazel query --noshow_progress 'tests(//...) except attr(tags, "manual", //...)' \
    > "$work/expected" 2> "$work/query.err"; then
  cat "$work/query.err"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "test targets: $(wc -l < "$work/expected") per config; configs: $CONFIGS"

summary_args=()
extra_checks_passed=0
extra_checks_failed=0
# Fast-DDS's files in /dev/shm before the run: any other one left at the end
# is this run's (checked below).
fastdds_shm_files() {
  ls /dev/shm 2>/dev/null | grep -E '^(fastrtps_|sem\.fastrtps_|fast_datasharing_|cyber_loan\.)' | sort || true
}
fastdds_shm_files > "$work/shm.before"
for config in $CONFIGS; do
  start=$(date +%s)
  if [ "$config" = fuzz ]; then
    # Each fuzzer runs FUZZ_SECONDS from the seed corpus; a crash fails it.
    echo "=== fuzzers, ${FUZZ_SECONDS:-60} s each ==="
    FUZZ_JOBS="${FUZZ_JOBS:-2}" bash tools/run_fuzzers.sh | tee "$work/fuzz.out"
    line="$(grep -E '^fuzzers: [0-9]+ passed, [0-9]+ failed$' "$work/fuzz.out" | tail -1)"
    if [ -n "$line" ]; then
      extra_checks_passed=$((extra_checks_passed + $(sed -E 's/^fuzzers: ([0-9]+) passed.*/\1/' <<<"$line")))
      extra_checks_failed=$((extra_checks_failed + $(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$line")))
    else
      extra_checks_failed=$((extra_checks_failed + 1))
      echo "FAILED [fuzz] the fuzzers did not run"
    fi
  elif [ "$config" = soak ]; then
    # The bounded soak: real clock, churn from 4 threads, invariants checked.
    echo "=== soak, ${SOAK_DURATION:-30s} ==="
    if bash tools/run_soak.sh "${SOAK_DURATION:-30s}"; then
      extra_checks_passed=$((extra_checks_passed + 1))
    else
      extra_checks_failed=$((extra_checks_failed + 1))
      echo "FAILED [soak]"
    fi
  elif [ "$config" = workspace ]; then
    # Another team's workspace: cyber_graph_test of its own graph.
    echo "=== external workspace ==="
    if bash tools/test_external_workspace.sh; then
      extra_checks_passed=$((extra_checks_passed + 1))
    else
      extra_checks_failed=$((extra_checks_failed + 1))
      echo "FAILED [workspace] tools/test_external_workspace.sh"
    fi
  elif [ "$config" = hosts ]; then
    # Several computers as network namespaces (tools/hosts/scenarios.sh):
    # root, outside Bazel's sandbox; each scenario one check. Where
    # namespaces cannot be made it says why and counts nothing.
    echo "=== hosts ==="
    bash tools/hosts/scenarios.sh | tee "$work/hosts.out"
    line="$(grep -E '^hosts: [0-9]+ passed, [0-9]+ failed$' "$work/hosts.out" | tail -1)"
    if [ -n "$line" ]; then
      extra_checks_passed=$((extra_checks_passed + $(sed -E 's/^hosts: ([0-9]+) passed.*/\1/' <<<"$line")))
      extra_checks_failed=$((extra_checks_failed + $(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$line")))
    else
      extra_checks_failed=$((extra_checks_failed + 1))
      echo "FAILED [hosts] the scenarios did not run"
    fi
  elif [ "$config" = programs ]; then
    # README's "programs on PATH" command: source cyber/setup.bash in a
    # fresh shell, then every program it put on PATH answers --help with
    # its usage (gflags' programs exit 1 after --help, ours 0).
    echo "=== programs on PATH (cyber/setup.bash) ==="
    if bash -c 'source cyber/setup.bash || exit 1
        n=0
        for p in .cyber/bin/*; do
          name=$(basename "$p")
          [ "$(command -v "$name")" = "$PWD/.cyber/bin/$name" ] || { echo "$name is not the one on PATH"; exit 1; }
          out=$("$name" --help 2>&1); rc=$?
          if [ $rc -gt 1 ] || ! grep -qi "usage" <<<"$out"; then
            echo "$name --help: exit $rc, no usage:"; head -5 <<<"$out"; exit 1
          fi
          n=$((n + 1))
        done
        echo "$n programs answer --help"; [ $n -ge 2 ]'; then
      extra_checks_passed=$((extra_checks_passed + 1))
    else
      extra_checks_failed=$((extra_checks_failed + 1))
      echo "FAILED [programs] source cyber/setup.bash; PROGRAM --help"
    fi
  elif [ "$config" = layers ]; then
    # Dependencies run down tools/layers.txt; the lower layers link no
    # Fast-DDS (tools/check_layers.sh).
    echo "=== layers ==="
    if bash tools/check_layers.sh; then
      extra_checks_passed=$((extra_checks_passed + 1))
    else
      extra_checks_failed=$((extra_checks_failed + 1))
      echo "FAILED [layers] tools/check_layers.sh"
    fi
  elif [ "$config" = opt ]; then
    # Optimised builds warn where -O0 cannot see (array bounds after
    # inlining, in position-independent code): build every target so.
    # (--config=opt is -c opt with the same outputs.)
    echo "=== -c opt build ==="
    if bazel build -c opt //... ; then
      extra_checks_passed=$((extra_checks_passed + 1))
    else
      extra_checks_failed=$((extra_checks_failed + 1))
      echo "FAILED [opt] bazel build -c opt //..."
    fi
  elif [ "$config" = clang ]; then
    # Thread-safety analysis is a compile-time check: build everything.
    echo "=== clang -Wthread-safety build ==="
    if bazel build --config=clang //... ; then
      extra_checks_passed=$((extra_checks_passed + 1))
    else
      extra_checks_failed=$((extra_checks_failed + 1))
      echo "FAILED [clang] thread-safety build"
    fi
  else
    echo "=== bazel test, config: $config ==="
    flags=()
    [ "$config" != default ] && flags+=("--config=$config")
    bazel test "${flags[@]}" --build_event_json_file="$work/$config.json" \
      --keep_going //...
    summary_args+=("$config=$work/$config.json")
  fi
  echo "=== $config took $(( $(date +%s) - start )) s ==="
done

# Nothing of ours left in /dev/shm: the tests that kill a peer with -9 rely
# on the next start's cleanup, and every other process leaves the domain
# cleanly. The cleanup tool runs once more (it removes only files whose
# owners are dead), then any Fast-DDS file the run added is a failed check.
echo "=== /dev/shm after the tests ==="
# (Its exit status says whether it met files it may not judge, e.g. another
# user's; that is not this run's business.)
bazel run --noshow_progress //cyber/tools/shm_clean >"$work/shm_clean.out" 2>&1 || true
fastdds_shm_files > "$work/shm.after"
left="$(comm -13 "$work/shm.before" "$work/shm.after")"
if [ -z "$left" ]; then
  echo "PASSED [shm] no Fast-DDS file left in /dev/shm"
  extra_checks_passed=$((extra_checks_passed + 1))
else
  echo "FAILED [shm] left in /dev/shm by this run:"
  sed 's/^/  /' <<<"$left"
  tail -n 20 "$work/shm_clean.out"
  extra_checks_failed=$((extra_checks_failed + 1))
fi

if [ ${#summary_args[@]} -gt 0 ]; then
  result="$(/usr/bin/python3 tools/test_summary.py "$work/expected" "${summary_args[@]}")"
else
  result="0 passed, 0 failed"
fi
# Fold the build-only checks into the final count.
grep -v '^[0-9]* passed, [0-9]* failed$' <<<"$result" || true
passed=$(( $(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' <<<"$result") + extra_checks_passed ))
failed=$(( $(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' <<<"$result") + extra_checks_failed ))
# Under CI, leave no process behind: this clone's Bazel server (it would
# idle for hours) goes now. A developer's run keeps it warm.
if [ "${CI:-}" = true ]; then
  bazel shutdown >/dev/null 2>&1 || true
fi
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
