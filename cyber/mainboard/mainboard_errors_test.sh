#!/usr/bin/env bash
# What a user of the mainboard binary sees when a graph is wrong:
#   - a bad graph or flag: one plain "mainboard: ..." line on stderr (no glog
#     preamble, no "Logging before InitGoogleLogging()"), its location once;
#   - no classes linked in at all: a hint about alwayslink;
#   - --strict_graph: graph warnings (a channel read and never written) are
#     an error, exit 1 with the warning listed; unread_outputs declares a
#     channel written on purpose for nobody, and strict mode then passes;
#   - --security=DIR: a missing directory or file is named (flag, directory,
#     file) before anything starts.
# Runs on --clock=simulated where a graph must run (no real time involved),
# and on the real clock for the strict start (it fails before running).
set -euo pipefail
plain="${TEST_SRCDIR}/${TEST_WORKSPACE}/cyber/mainboard/mainboard"
bin="${TEST_SRCDIR}/${TEST_WORKSPACE}/cyber/mainboard/mainboard_with_graph_check_components"
cd "$TEST_TMPDIR"
out=out.txt err=err.txt
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }

# Runs "$@", expecting exit status $1 (shifted off).
expect_status() {
  local want="$1" status=0
  shift
  "$@" >"$out" 2>"$err" || status=$?
  [ "$status" -eq "$want" ] || fail "$* exited $status, expected $want"
}
# stderr is exactly one line: "mainboard: " followed by $1 (a fixed string),
# with no glog output before or after it.
expect_one_plain_line() {
  [ "$(wc -l <"$err")" -eq 1 ] || fail "stderr is not one line"
  grep -qF "mainboard: $1" "$err" || fail "stderr is not 'mainboard: $1'"
  [ "$(head -c 11 "$err")" = "mainboard: " ] || fail "stderr does not start with 'mainboard: '"
}
# The location $1 appears once in the error line containing $2.
expect_location_once() {
  local line
  line="$(grep -F -- "$2" "$err")" || fail "no error line with '$2'"
  [ "$(grep -c . <<<"$line")" -eq 1 ] || fail "the error '$2' is printed more than once"
  [ "${line:0:11}" = "mainboard: " ] || fail "the error line has a preamble: $line"
  [ "$(grep -oF -- "$1" <<<"$line" | wc -l)" -eq 1 ] || fail "location $1 printed more than once: $line"
}

# --- Bad graphs and flags: one plain line each -------------------------------
cat >zero.dag <<'DAG'
module_config {
  timer_components {
    class_name: "GraphCheckPublisher"
    config { name: "pub" interval: 0 }
  }
}
DAG
expect_status 1 "$bin" -d zero.dag --run_for=1s --status=never
expect_one_plain_line 'zero.dag:4:26: timer component "pub": interval 0 must be positive'
expect_location_once "zero.dag:" "interval 0 must"

expect_status 1 "$bin" -d missing.dag --run_for=1s --status=never
expect_one_plain_line 'missing.dag: cannot open dag file: No such file or directory'

cat >syntax.dag <<'DAG'
module_config {
  timer_components { class_name: "GraphCheckPublisher" config { nme: "pub" interval: 10 } }
}
DAG
expect_status 1 "$bin" -d syntax.dag --run_for=1s --status=never
expect_one_plain_line 'syntax.dag:2:68: syntax error: '
expect_location_once "syntax.dag:" "syntax error"

expect_status 2 "$bin" -d zero.dag --status=sometimes
expect_one_plain_line 'flag --status: "sometimes" is not auto, always or never'

# The plain mainboard links no component class: say why that usually is.
cat >unknown.dag <<'DAG'
module_config {
  timer_components { class_name: "GraphCheckPublisher" config { name: "pub" interval: 10 } }
}
DAG
expect_status 1 "$plain" -d unknown.dag --run_for=1s --status=never
expect_one_plain_line 'unknown.dag:2:3: class_name "GraphCheckPublisher": no such component class; no component classes are linked in: does the cc_library set alwayslink = True?'

# A type mismatch fails in Start(), at the reader's line: located once (the
# component's own line is not added in front of it).
cat >mismatch.dag <<'DAG'
module_config {
  timer_components { class_name: "GraphCheckPublisher" config { name: "pub" interval: 10 } }
  components {
    class_name: "GraphCheckOtherType"
    config {
      name: "other"
      readers { channel: "/graph_check/sample" }
    }
  }
}
DAG
expect_status 1 "$bin" -d mismatch.dag --run_for=1s --status=never
expect_location_once "mismatch.dag:" 'channel "/graph_check/sample" carries'
grep -qF 'mainboard: mismatch.dag:7:7: node "other": channel "/graph_check/sample" carries' "$err" \
  || fail "the mismatch is not located at the reader"
! grep -q "Logging before InitGoogleLogging" "$err" || fail "glog's pre-init warning is printed"

# --- Strict graphs -----------------------------------------------------------
cat >typo.dag <<'DAG'
module_config {
  timer_components { class_name: "GraphCheckPublisher" config { name: "pub" interval: 10 } }
  components {
    class_name: "GraphCheckSubscriber"
    config { name: "sub" readers { channel: "/graph_check/sampel" } }
  }
}
DAG
warning='channel "/graph_check/sampel" (cyber::graph_check::GraphCheckSample) is read by component "sub" (typo.dag:3:3) but written by no one'
# Not strict: runs, and the warning is in the summary.
expect_status 0 "$bin" -d typo.dag --clock=simulated --run_for=1s
grep -qF -- "$warning" "$out" || fail "the typo is not in the summary's warnings"
# Strict, on either clock: exit 1 with the warning, nothing run or printed.
for clock in simulated steady; do
  expect_status 1 "$bin" -d typo.dag --clock="$clock" --run_for=1s --status=never --strict_graph
  grep -qF "mainboard: strict graph: 2 graph warnings are errors in strict mode:" "$err" \
    || fail "--strict_graph --clock=$clock: no strict graph error"
  grep -qF -- "  $warning" "$err" || fail "--strict_graph --clock=$clock: the warning is not listed"
  grep -qF -- '  channel "/graph_check/sample" (cyber::graph_check::GraphCheckSample) is written by component "pub"' "$err" \
    || fail "--strict_graph --clock=$clock: the unread channel is not listed"
  [ "$(grep -cF -- "$warning" "$err")" -eq 1 ] || fail "--clock=$clock: the warning is printed more than once"
  [ ! -s "$out" ] || fail "--clock=$clock: a summary was printed for a refused graph"
done

# An alarm output nobody reads, declared: strict mode passes.
cat >alarm.dag <<'DAG'
module_config {
  timer_components {
    class_name: "GraphCheckPublisher"
    config { name: "pub" interval: 10 unread_outputs: "/graph_check/sample" }
  }
}
DAG
expect_status 0 "$bin" -d alarm.dag --clock=simulated --run_for=1s --strict_graph
! grep -q "^warnings:" "$out" || fail "a declared unread output is still a warning"
grep -qE '^pub +GraphCheckPublisher +100 ' "$out" || fail "the publisher did not run 100 times"

# --security=DIR is checked when the flags are parsed: a process asked to
# be secure never starts insecure. The error names the flag, the
# directory and the file.
expect_status 1 "$bin" -d alarm.dag --run_for=1s --status=never --security=no_keys
grep -qF 'flag --security: "no_keys": no such directory' "$err" ||
  fail "--security=no_keys: the missing directory is not named"
[ ! -s "$out" ] || fail "--security=no_keys: something ran"
mkdir -p keys
for f in identity_ca.cert.pem cert.pem permissions_ca.cert.pem; do
  printf -- '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' >"keys/$f"
done
printf -- '-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\n' >keys/key.pem
printf 'MIME-Version: 1.0\n' >keys/governance.p7s
expect_status 1 "$bin" -d alarm.dag --run_for=1s --status=never --security=keys
grep -qF 'flag --security: "keys": file "permissions.p7s"' "$err" ||
  fail "--security=keys: the missing permissions.p7s is not named"
grep -qF 'is missing' "$err" || fail "--security=keys: does not say the file is missing"
echo PASS
