#!/usr/bin/env bash
# Installs the Debian 12 packages that the peer benchmarks of tests/peers
# need to compare our timer with other implementations (peer_timer_benchmark,
# timer_level_benchmark, dispatch_peer_benchmark), and nothing else. Same rules as tools/setup.sh: idempotent (when everything is
# present it touches nothing: no apt-get update, no network), needs root or
# sudo. The peers target is tagged "manual", so `bazel build //...` and
# `bazel test //...` never need these packages; CI does not install them.
set -euo pipefail

PACKAGES=(
  # libuv: uv_loop_t / uv_timer_t (links -luv).
  libuv1-dev
  # libevent: event_base / evtimer_* (links -levent).
  libevent-dev
  # Boost.Fiber: the fiber executor of dispatch_peer_benchmark (links
  # -lboost_fiber).
  libboost-fiber-dev
)

# Boost.Asio is header-only and comes with the Boost dev packages that
# tools/setup.sh already installs (libboost-context-dev pulls in the Boost
# headers). Boost.System has been header-only since Boost 1.69, so the
# benchmark does not link libboost_system; only if the header is missing is
# a package added here.
if [ ! -f /usr/include/boost/asio.hpp ]; then
  PACKAGES+=(libboost-system-dev)
fi

exec bash "$(dirname "$0")/install_missing_packages.sh" setup_peers "${PACKAGES[@]}"
