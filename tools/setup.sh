#!/usr/bin/env bash
# Installs exactly the Debian 12 packages this project builds and tests with,
# and nothing else. Idempotent: when every package is already present it
# touches nothing (no apt-get update, no network). Needs root or sudo.
#
# Why these packages: see third_party/BUILD, which maps each of them to the
# Bazel target project code depends on.
set -euo pipefail

PACKAGES=(
  # The build tool (Bazel 4.2.3, WORKSPACE mode, runs fully offline here).
  bazel-bootstrap
  # Compilers: g++ 12 is the default toolchain; clang 14 for --config=clang
  # (-Wthread-safety) and its runtime for the sanitizers/fuzzers under clang.
  g++
  clang-14
  libclang-rt-14-dev
  # Libraries, each wrapped as a target in third_party/.
  libabsl-dev
  libgoogle-glog-dev
  libgflags-dev
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  libboost-context-dev
  libprotobuf-dev
  protobuf-compiler
  # The transport between processes and hosts (Fast-DDS 2.9 and its CDR).
  libfastrtps-dev
  # MCAP chunk compression and checksums for recordings (cyber/record/mcap).
  libzstd-dev
  liblz4-dev
  zlib1g-dev
  # tools/test_summary.py reads Bazel's build event file.
  python3
  # The multi-host scenarios (tools/hosts/): namespaces and veth pairs,
  # link faults (iptables' statistic match), the discovery server
  # (`fastdds discovery`), a robot's key set (openssl), the capture that
  # looks for plaintext (tcpdump).
  iproute2
  iptables
  fastdds-tools
  openssl
  tcpdump
  # cyber_monitor's and cyber_recorder play's tests drive them in a real
  # terminal.
  tmux
  # cyber_bridge's test runs Foxglove's own WebSocket client
  # (@foxglove/ws-protocol, from npm: tools/npm/package.json) under Node;
  # the recordings are read back with Foxglove's MCAP library (@mcap/core).
  # Its npm comes with NodeSource's nodejs; with Debian's, also `npm`.
  nodejs
)

bash "$(dirname "$0")/install_missing_packages.sh" setup "${PACKAGES[@]}"

# A Bazel disk cache outside the clone, so a second clone (CI's fresh clone
# after a developer's run, or the next CI run) reuses every action already
# built on this machine instead of compiling ~300 targets in 5 configs again.
# It goes in the user's ~/.bazelrc, which Bazel reads for every workspace;
# an existing --disk_cache line there is left alone.
rc="${HOME}/.bazelrc"
if ! grep -qs -- '--disk_cache' "$rc"; then
  mkdir -p "${HOME}/.cache/cyber_timer"
  {
    echo "# Added by cyber_timer's tools/setup.sh: actions shared by every clone."
    echo "build --disk_cache=${HOME}/.cache/cyber_timer/bazel-disk-cache"
  } >> "$rc"
  echo "setup: Bazel disk cache at ${HOME}/.cache/cyber_timer/bazel-disk-cache (in $rc)" >&2
fi
# Bazel 4 never shrinks it: kept to a size here (prune_disk_cache.sh).
bash "$(dirname "$0")/prune_disk_cache.sh" "${HOME}/.cache/cyber_timer/bazel-disk-cache"

# Settings that need this clone's absolute path (Bazel 4 expands
# %workspace% only in imports), read by .bazelrc's try-import. Rewritten at
# every run, so a moved clone stays right.
root="$(cd "$(dirname "$0")/.." && pwd)"
{
  echo "# Written by tools/setup.sh for the clone at ${root}; not versioned."
  echo "test:tsan --test_env=TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${root}/tools/tsan_suppressions.txt"
  # Foxglove's client for cyber_bridge's test (installed below).
  echo "test --test_env=CYBER_NPM_MODULES=${root}/tools/npm/node_modules"
} > "${root}/.bazelrc.generated"

# The npm packages the tests run as real clients (tools/npm/package.json,
# exact versions in its package-lock.json), in tools/npm/node_modules (not
# versioned). Installed again only when package-lock.json changed since the
# last install (its hash is kept beside the modules), so a second run
# touches no network.
npm_dir="${root}/tools/npm"
lock_hash="$(sha256sum "${npm_dir}/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "${npm_dir}/node_modules/.cyber_lock_sha256" 2>/dev/null)" != "$lock_hash" ]; then
  if ! command -v npm >/dev/null; then
    echo "setup: npm not found (Debian's nodejs needs the npm package too): cyber_bridge's test will fail until tools/npm is installed" >&2
  else
    echo "setup: installing tools/npm's packages (npm ci)" >&2
    npm ci --prefix "$npm_dir" --ignore-scripts --no-audit --no-fund >&2
    echo "$lock_hash" > "${npm_dir}/node_modules/.cyber_lock_sha256"
  fi
fi
