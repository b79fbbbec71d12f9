#!/usr/bin/env bash
# tools/onnx_testdata.sh — prints the folder of the ONNX backend node test data of the onnx
# wheel pinned in .venv (newer than Debian's libonnx-testdata), setting .venv up first if needed.
# The wheels from onnx 1.20 on ship the test cases but not their data: it is generated once
# from them (tools/gen_onnx_node_tests.py, ten seconds) into .cache/onnx-testdata-VERSION-HASH.
#
#   polyinfer conformance "$(tools/onnx_testdata.sh)/node"
#
# Only the path goes to stdout; setup messages go to stderr.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${POLYINFER_VENV:-$root/.venv}"
"$root/tools/pyenv.sh" >&2

# The data a wheel still ships (up to onnx 1.19), found without importing onnx (a second).
data="$("$venv/bin/python" -c '
import importlib.util, os
spec = importlib.util.find_spec("onnx")
print(os.path.join(spec.submodule_search_locations[0], "backend", "test", "data"))')"
if [[ -d "$data/node" ]]; then
  echo "$data"
  exit 0
fi
version="$("$venv/bin/python" -c 'import onnx; print(onnx.__version__)')"
# The generator's hash in the name: data made by an older generator is not reused.
gen="$root/tools/gen_onnx_node_tests.py"
cache="$root/.cache/onnx-testdata-$version-$(sha256sum "$gen" | cut -c1-8)"
if [[ ! -f "$cache/complete" ]]; then
  echo "onnx_testdata: generating the node tests of onnx $version into $cache" >&2
  rm -rf "$cache"
  "$venv/bin/python" "$gen" "$cache" >&2
  touch "$cache/complete"
fi
echo "$cache"
