#!/usr/bin/env bash
# Configures and builds polyinfer: tools/build.sh [DIR] [cmake options...]
# Default DIR: build/ (release with debug info). Quiet on success; the log's tail on failure.
# POLYINFER_JOBS=N caps ninja's parallel jobs (its default is the core count plus two), for
# machines shared with other builds. POLYINFER_TARGETS="a b" builds only those targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}
shift || true
mkdir -p "$dir"
if ! { cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" &&
       ninja -C "$dir" ${POLYINFER_JOBS:+-j "$POLYINFER_JOBS"} ${POLYINFER_TARGETS:-}; } \
     >"$dir/build.log" 2>&1; then
  tail -n 60 "$dir/build.log" >&2
  echo "build failed; full log: $dir/build.log" >&2
  exit 1
fi
