#!/usr/bin/env bash
# tools/onnx_testdata.sh — prints the folder of the ONNX backend test data that the pinned onnx
# wheel in .venv ships (newer than Debian's libonnx-testdata), setting .venv up first if needed.
#
#   polyinfer conformance "$(tools/onnx_testdata.sh)/node"
#
# Its subfolders: node (one folder per operator test), light, pytorch-converted,
# pytorch-operator, real, simple. Only the path goes to stdout; setup messages go to stderr.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${POLYINFER_VENV:-$root/.venv}"
"$root/tools/pyenv.sh" >&2

# Find the onnx package without importing it (which takes a second).
data="$("$venv/bin/python" -c '
import importlib.util, os
spec = importlib.util.find_spec("onnx")
print(os.path.join(spec.submodule_search_locations[0], "backend", "test", "data"))')"
if [[ ! -d "$data/node" ]]; then
  echo "onnx_testdata: error: $data/node does not exist: the onnx wheel pinned in" \
       "tools/requirements.txt does not ship the backend test data (onnx 1.23 and later" \
       "do not); pin onnx 1.22 or older" >&2
  exit 1
fi
echo "$data"
