#!/usr/bin/env bash
# ctest conformance_onnx_newer: the node tests of the onnx wheel pinned in tools/requirements.txt
# (opsets up to 28), generated once by tools/onnx_testdata.sh into .cache/. Like the Debian
# 1.12 folders: at least FLOOR must pass, and every failure must be listed with its reason in
# expected_failures_onnx_newer.txt. Exits 77 (ctest: skipped) only when the venv cannot be set
# up, which needs PyPI once; it says so.
#   tests/conformance/onnx_newer.sh POLYINFER_BINARY FLOOR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if ! data=$("$root/tools/onnx_testdata.sh"); then
  echo "skipped: tools/onnx_testdata.sh could not set up the pinned onnx wheel (PyPI unreachable?)"
  exit 77
fi
exec "$1" conformance "$data/node" --quiet --timeout 120 \
  --expect "$here/expected_failures_onnx_newer.txt" --min-passed "$2"
