#!/usr/bin/env bash
# Acceptance check on real models: exports torchvision models (random weights, torch 1.13 from
# Debian; needs python3-torchvision), runs each through `polyinfer run`, and compares the outputs
# with ONNX Runtime's (max abs error relative to the output's max magnitude, threshold 1e-4).
#   tools/check_torchvision.sh [MODELS_DIR] [POLYINFER_BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/tmp/polyinfer-torchvision}
pi=${2:-$root/build/polyinfer}
[ -f "$dir/manifest.json" ] || /usr/bin/python3 "$root/tools/export_torchvision.py" "$dir"
"$root/tools/pyenv.sh"
status=0
for onnx in "$dir"/*.onnx; do
  name=$(basename "$onnx" .onnx)
  out=$(mktemp -d)
  input_name=$("$root/.venv/bin/python" -c \
    "import onnx,sys; print(onnx.load(sys.argv[1]).graph.input[0].name)" "$onnx")
  "$pi" run "$onnx" -i "$input_name=$dir/$name.input.npy" -o "$out" |
    grep -E '^latency|^placement' | tr '\n' ' '
  echo
  if ! "$root/.venv/bin/python" "$root/tools/compare_ort.py" "$onnx" "$out" \
      -i "$input_name=$dir/$name.input.npy"; then
    status=1
  fi
  rm -rf "$out"
done
exit $status
