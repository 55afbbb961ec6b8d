#!/usr/bin/env bash
# The sensor-polling graph in two processes, run by cyber_launch from
# sensor_polling.launch (pollers.dag in one mainboard, fusion.dag in the
# other, which receives the pollers' messages over DDS):
#
#   bash examples/sensor_polling/run_two_processes.sh [SECONDS]
#
# builds cyber_launch and the example's mainboard, runs the launch for
# SECONDS (default 10; 0: until Ctrl-C), or until Ctrl-C, then stops both
# (SIGINT, fusion first) and prints cyber_launch's summary with both
# processes' own tables. The same by hand:
#
#   bazel build //cyber/tools/cyber_launch //examples/sensor_polling:mainboard
#   bazel-bin/cyber/tools/cyber_launch/cyber_launch start \
#       examples/sensor_polling/sensor_polling.launch \
#       --mainboard=bazel-bin/examples/sensor_polling/mainboard
#
# Both join the DDS domain CYBER_DOMAIN_ID if it is set, else a random one
# that no process of this host uses, so they do not meet other mainboards
# (Cyber RT's default domain is 80). The per-process logs stay in the
# directory cyber_launch prints at the start.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=cyber/testing/fastdds_shm.sh
source "$here/../../cyber/testing/fastdds_shm.sh"
seconds=${1:-10}
case "$seconds" in '' | *[!0-9]*)
  echo "usage: $0 [SECONDS]  (default 10; 0: until Ctrl-C)" >&2
  exit 2
  ;;
esac
cd "$here/../.."
bazel build //cyber/tools/cyber_launch //examples/sensor_polling:mainboard
bin="$(bazel info bazel-bin 2>/dev/null)"
export CYBER_DOMAIN_ID=${CYBER_DOMAIN_ID:-$(fastdds_shm_free_domain)}
# timeout sends cyber_launch SIGINT after SECONDS (0: never), the same
# stop as Ctrl-C, and exits with cyber_launch's status.
exec timeout --foreground --preserve-status -s INT "$seconds" \
  "$bin/cyber/tools/cyber_launch/cyber_launch" start "$here/sensor_polling.launch" \
  --mainboard="$bin/examples/sensor_polling/mainboard"
