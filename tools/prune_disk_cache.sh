#!/usr/bin/env bash
# Keeps the Bazel disk cache that tools/setup.sh configures within a size.
# Bazel 4 never removes anything from a disk cache, and every build of
# every clone adds to it: on this machine it had grown to 52 GiB and filled
# the disk in the middle of a CI run. So, when it holds more than MAX_GIB,
# or the disk has less than 10 GiB free, the files least recently used
# (by access time; the disk is mounted relatime, which updates it at least
# once a day of use) go until it holds KEEP_GIB. It is only a cache: what
# goes is rebuilt when needed.
#
#   bash tools/prune_disk_cache.sh DIR [MAX_GIB [KEEP_GIB]]   # 30 and 20
#
# setup.sh runs it before its builds. A Bazel server of another clone using
# DIR meanwhile loses nothing but hits: a file gone is a miss, and Bazel
# writes each entry whole (to a temporary file, then renamed).
set -euo pipefail
dir=$1
max_gib=${2:-30}
keep_gib=${3:-20}
[ -d "$dir" ] || exit 0
gib=$((1024 * 1024))  # in KiB
used_kb=$(du -sk "$dir" | cut -f1)
free_kb=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
if [ "$used_kb" -le $((max_gib * gib)) ] && [ "$free_kb" -ge $((10 * gib)) ]; then
  exit 0
fi
target_kb=$((keep_gib * gib))
# Short of free space, keep less: what the disk needs to have 10 GiB free.
if [ "$free_kb" -lt $((10 * gib)) ]; then
  short_kb=$((10 * gib - free_kb))
  if [ $((used_kb - short_kb)) -lt "$target_kb" ]; then target_kb=$((used_kb - short_kb)); fi
  if [ "$target_kb" -lt 0 ]; then target_kb=0; fi
fi
over_kb=$((used_kb - target_kb))
if [ "$over_kb" -gt 0 ]; then
  find "$dir" -type f -printf '%A@ %k %p\n' | sort -n |
    awk -v over="$over_kb" '{ if (freed >= over) exit; print $3; freed += $2 }' |
    xargs -r -d '\n' rm -f || true  # awk's early exit ends find and sort with SIGPIPE
fi
echo "setup: Bazel disk cache $dir held $((used_kb / gib)) GiB (at most $max_gib; $((free_kb / gib)) GiB free on its disk): the least recently used went, it holds $(du -sh "$dir" | cut -f1) now" >&2
