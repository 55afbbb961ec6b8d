#!/usr/bin/env bash
# The sensor-polling graph in two processes, run by cyber_launch from
# sensor_polling.launch (pollers.dag in one mainboard, fusion.dag in the
# other, which receives the pollers' messages over DDS):
#
#   bash examples/sensor_polling/run_two_processes.sh [SECONDS]
#   bash examples/sensor_polling/run_two_processes.sh --simulated [SECONDS]
#
# builds cyber_launch and the example's mainboard, runs the launch for
# SECONDS (default 10; 0: until Ctrl-C), or until Ctrl-C, then stops both
# (SIGINT, fusion first) and prints cyber_launch's summary with both
# processes' own tables. With --simulated, the two processes run in
# lockstep on one simulated time for SECONDS of it (default 60), as fast
# as they go (docs/lockstep.md): each process's summary ends with its
# trace digest, the same in every run. The same by hand:
#
#   bazel build //cyber/tools/cyber_launch //examples/sensor_polling:mainboard
#   bazel-bin/cyber/tools/cyber_launch/cyber_launch start \
#       examples/sensor_polling/sensor_polling.launch \
#       --mainboard=bazel-bin/examples/sensor_polling/mainboard \
#       [--clock=simulated --run_for=60s]
#
# Both join the DDS domain CYBER_DOMAIN_ID if it is set, else a random one
# that no process of this host uses, so they do not meet other mainboards
# (Cyber RT's default domain is 80). The per-process logs stay in the
# directory cyber_launch prints at the start.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=cyber/testing/fastdds_shm.sh
source "$here/../../cyber/testing/fastdds_shm.sh"
simulated=0
if [ "${1:-}" = "--simulated" ]; then
  simulated=1
  shift
fi
usage="usage: $0 [--simulated] [SECONDS]  (default 10, 0: until Ctrl-C; simulated: default 60, at least 1)"
seconds=${1:-$((simulated ? 60 : 10))}
case "$seconds" in '' | *[!0-9]*)
  echo "$usage" >&2
  exit 2
  ;;
esac
if [ "$simulated" -eq 1 ] && [ "$seconds" -eq 0 ]; then
  echo "$usage" >&2
  exit 2
fi
cd "$here/../.."
bazel build //cyber/tools/cyber_launch //examples/sensor_polling:mainboard
bin="$(bazel info bazel-bin 2>/dev/null)"
export CYBER_DOMAIN_ID=${CYBER_DOMAIN_ID:-$(fastdds_shm_free_domain)}
if [ "$simulated" -eq 1 ]; then
  exec "$bin/cyber/tools/cyber_launch/cyber_launch" start "$here/sensor_polling.launch" \
    --mainboard="$bin/examples/sensor_polling/mainboard" --clock=simulated --run_for="${seconds}s"
fi
# timeout sends cyber_launch SIGINT after SECONDS (0: never), the same
# stop as Ctrl-C, and exits with cyber_launch's status.
exec timeout --foreground --preserve-status -s INT "$seconds" \
  "$bin/cyber/tools/cyber_launch/cyber_launch" start "$here/sensor_polling.launch" \
  --mainboard="$bin/examples/sensor_polling/mainboard"
