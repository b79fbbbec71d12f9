#!/usr/bin/env bash
# How close `plan --target this` comes to what the runtime does: for each model, the predicted
# latency and activation arena beside `bench`'s median and planned arena, at THREADS threads.
#   tools/check_plan.sh [--threads N] [--duration S] MODEL...   (build/polyinfer, or $POLYINFER)
set -euo pipefail
pi=${POLYINFER:-$(cd "$(dirname "$0")/.." && pwd)/build/polyinfer}
threads=1
duration=8
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
done
printf "%-22s %12s %12s %7s %12s %12s %7s\n" model "predicted" "measured" ratio \
  "arena pred" "arena real" ratio
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in "$@"; do
  "$pi" plan "$m" --threads "$threads" --json >"$tmp/plan.json"
  "$pi" bench "$m" --threads "$threads" --duration "$duration" --json >"$tmp/bench.json" 2>/dev/null
  python3 - "$m" "$tmp/plan.json" "$tmp/bench.json" <<'PY'
import json, os, sys
name = os.path.basename(sys.argv[1]).removesuffix(".onnx")
p, b = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
pred = p["targets"][0]["seconds"] * 1e3
meas = b["latency_ms"]["median"]
ap, ar = p["activation_arena_bytes"] / 2**20, b["memory_arena_mb"]
print(f"{name:22s} {pred:9.2f} ms {meas:9.2f} ms {pred / meas:7.2f} "
      f"{ap:9.2f} MiB {ar:9.2f} MiB {ap / ar if ar else 0:7.3f}")
PY
done
