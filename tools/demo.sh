#!/usr/bin/env bash
# The main job: installs missing packages, builds polyinfer (release), then classifies the digits
# test split with the example CNN on the default CPU provider and prints accuracy, latency and
# where every node ran.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/setup.sh"
"$root/tools/build.sh" "$root/build"
d="$root/examples/digits"
exec "$root/build/example_classify" "$d/digits_cnn.onnx" "$d/test_x.npy" "$d/test_y.npy" "$@"
