#!/usr/bin/env bash
# Proves that a robot team can use this repository from its own Bazel
# workspace: makes a minimal workspace (examples/external_workspace: a GPS
# poller, a watchdog, their protobuf messages generated with cyber_timer's
# cc_proto, their .dag and a cyber_graph_test), points it at this
# checkout with local_repository, and builds and runs its test. Offline, like
# everything here. Prints "external workspace: PASS" or "... FAIL".
#
#   bash tools/test_external_workspace.sh
#
# The workspace lives at a fixed path (EXTERNAL_WS, default
# /tmp/cyber_timer_external_ws) so that a second run reuses its Bazel cache;
# its Bazel server is shut down at the end.
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
ws="${EXTERNAL_WS:-/tmp/cyber_timer_external_ws}"
src="$repo/examples/external_workspace"

rm -rf "$ws/gps"
mkdir -p "$ws/gps"
sed "s|@CYBER_TIMER@|$repo|g" "$src/WORKSPACE.template" > "$ws/WORKSPACE"
cp "$src/bazelrc.template" "$ws/.bazelrc"
touch "$ws/BUILD"
cp "$src/gps/BUILD.template" "$ws/gps/BUILD"
cp "$src"/gps/*.cc "$src"/gps/*.h "$src"/gps/*.dag "$src"/gps/*.proto "$ws/gps/"

cd "$ws"
status=0
bazel test //gps:gps_watchdog_test || status=$?
# The declared surface: an internal target (the wheel's front end) must not
# be reachable from another workspace.
mkdir -p "$ws/probe"
cat > "$ws/probe/BUILD" <<'PROBE'
cc_library(name = "internal_probe", deps = ["@cyber_timer//timer:timer_system_core"])
PROBE
if bazel build //probe:internal_probe > "$ws/probe.log" 2>&1; then
  echo "external workspace: an internal target (//timer:timer_system_core) is visible"
  status=1
elif ! grep -q "is not visible" "$ws/probe.log"; then
  cat "$ws/probe.log"
  echo "external workspace: the probe failed, but not on visibility"
  status=1
fi
rm -rf "$ws/probe"
bazel shutdown >/dev/null 2>&1 || true
if [ "$status" -eq 0 ]; then
  echo "external workspace: PASS"
else
  echo "external workspace: FAIL (bazel test exited $status in $ws)"
fi
exit "$status"
