#!/usr/bin/env bash
# The main job: installs missing packages, builds the polyinfer library, CLI and example
# (release), then classifies the digits test split with the example CNN on the default CPU
# provider and prints accuracy, latency and where every node ran.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/setup.sh"
# Only what the demo runs: the library, the CLI and the example (the test command builds the
# rest in its own folder).
POLYINFER_TARGETS="polyinfer_cli example_classify" "$root/tools/build.sh" "$root/build"
d="$root/examples/digits"
exec "$root/build/example_classify" "$d/digits_cnn.onnx" "$d/test_x.npy" "$d/test_y.npy" "$@"
