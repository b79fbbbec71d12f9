#!/usr/bin/env bash
# The tracked figure on newer ONNX backend test data (the pinned onnx wheel's node tests, opsets up
# to 28, generated once by tools/onnx_testdata.sh): runs them and prints the totals. No floor
# yet, so it never fails the suite; the totals go into README.md by hand.
# Usage: tools/conformance_newer.sh POLYINFER_BINARY
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pi=${1:-$root/build/polyinfer}
if ! data=$("$root/tools/onnx_testdata.sh" 2>/dev/null); then
  echo "newer ONNX test data: not available (tools/pyenv.sh could not set up the venv); skipped"
  exit 0
fi
out=$(mktemp)
"$pi" conformance "$data/node" --quiet --timeout 60 >"$out" 2>&1
echo "newer ONNX test data (\
$("$root/.venv/bin/python" -c 'import onnx; print("onnx", onnx.__version__)')): $(tail -n 1 "$out")"
rm -f "$out"
exit 0
