#!/usr/bin/env bash
# The README's first command: installs what is missing, then runs the main
# example. Extra arguments go to the example (e.g. --period=10ms --cycles=50).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
exec bazel run //examples/hello_timer -- "$@"
