#!/usr/bin/env bash
# The README's first command: installs what is missing, then runs the main
# job: the sensor-polling graph (IMU 100 Hz, lidar 10 Hz, fusion, 1 Hz health
# monitor) through mainboard, with its live status line, for 10 s (Ctrl-C
# stops it earlier). Extra arguments go to mainboard, e.g. --run_for=0s to
# run until Ctrl-C, or --status=never.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--run_for=10s)
exec bazel run //examples/sensor_polling:mainboard -- \
  -d "$PWD/examples/sensor_polling/sensor_polling.dag" "${args[@]}"
