#!/usr/bin/env bash
# install_missing_packages.sh LABEL PACKAGE...
# Installs those of the given Debian packages that are not installed yet, and
# does nothing (no apt-get update, no network) when all are. Needs root or
# sudo. LABEL names the caller in its one line of output. Used by setup.sh
# and setup_peers.sh, which only decide which packages.
set -euo pipefail
label="$1"
shift

missing=()
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "$label: installing missing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
