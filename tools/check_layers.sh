#!/usr/bin/env bash
# Fails when a library depends up the layers of tools/layers.txt (or across
# one layer), and when a binary that should not load Fast-DDS links it.
# tools/run_tests.sh runs it as the "layers" check.
#
#   bash tools/check_layers.sh
set -uo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0

# 1. Every library's edges run down the layers. Tests and binaries are
#    leaves (nothing depends on them), so they close no cycle.
if ! bazel query --noshow_progress --output=graph --nograph:factored \
    'deps(kind("cc_library|alias|proto_library|filegroup|genrule", //...), 1)' \
    > "$work/graph" 2> "$work/query.err"; then
  cat "$work/query.err"
  echo "check_layers: the query failed"
  exit 1
fi
python3 tools/check_layers.py tools/layers.txt < "$work/graph" || status=1

# 2. The lower layers link no transport: nothing in timer/, scheduler/,
#    cyber/common, cyber/time (tests included) reaches Fast-DDS, nor do the
#    user labels of a plain Timer, cyber::Async and Cyber RT's scheduler.
if ! bazel query --noshow_progress \
    'somepath(//timer/... + //scheduler/... + //cyber/common/... + //cyber/time/... + //cyber/runtime:process + //cyber/task, //third_party:fastdds)' \
    > "$work/fastdds" 2> "$work/query2.err"; then
  cat "$work/query2.err"
  echo "check_layers: the Fast-DDS query failed"
  exit 1
fi
if [ -s "$work/fastdds" ]; then
  echo "check_layers: a lower layer links Fast-DDS, through:"
  sed 's/^/  /' "$work/fastdds"
  status=1
else
  echo "check_layers: timer/, scheduler/, cyber/common, cyber/time, the process runtime and cyber/task link no Fast-DDS"
fi
exit $status
