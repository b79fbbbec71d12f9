#!/usr/bin/env bash
# Checks the graph optimizer on real models (docs/optimizer.md):
#   1. `polyinfer optimize --level 1` writes standard ONNX: ONNX Runtime loads and runs it, and
#      its outputs match polyinfer's on the unoptimized model (level 0);
#   2. a session at the default level 3 (fusions, ai.polyinfer ops) matches ONNX Runtime on the
#      original model.
# Both within compare_ort.py's threshold (1e-4 relative to the output's largest magnitude).
# Models: torchvision ResNet-18 and MobileNetV2 (tools/export_torchvision.py, random weights) and
# a small transformer encoder layer (LayerNorm and GELU patterns as torch exports them at opset 13).
#   tools/check_optimize.sh [MODELS_DIR] [POLYINFER_BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/tmp/polyinfer-optimize}
pi=${2:-$root/build/polyinfer}
py=$root/.venv/bin/python
[ -x "$py" ] || py=/work/main/.venv/bin/python
mkdir -p "$dir"
for m in resnet18 mobilenet_v2; do
  [ -f "$dir/$m.onnx" ] || /usr/bin/python3 "$root/tools/export_torchvision.py" "$dir" --models $m
done
if [ ! -f "$dir/encoder.onnx" ]; then
  /usr/bin/python3 - "$dir" <<'PY'
import sys, numpy as np, torch
d = sys.argv[1]
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, activation="gelu",
                                         batch_first=True).eval()
x = torch.randn(2, 10, 64)
torch.onnx.export(layer, x, f"{d}/encoder.onnx", opset_version=13, input_names=["input"],
                  output_names=["output"], do_constant_folding=True)
np.save(f"{d}/encoder.input.npy", x.numpy())
PY
fi
status=0
for name in resnet18 mobilenet_v2 encoder; do
  onnx=$dir/$name.onnx
  feed="input=$dir/$name.input.npy"
  l0=$(mktemp -d) l3=$(mktemp -d)
  "$pi" optimize "$onnx" -o "$dir/$name.l1.onnx" --level 1
  "$pi" optimize "$onnx" -o "$dir/$name.l3.onnx" --level 3
  "$pi" run "$onnx" -i "$feed" -o "$l0" --level 0 >/dev/null
  "$pi" run "$onnx" -i "$feed" -o "$l3" --level 3 >/dev/null
  echo "$name: level-1 model in ONNX Runtime vs polyinfer level 0"
  "$py" "$root/tools/compare_ort.py" "$dir/$name.l1.onnx" "$l0" -i "$feed" || status=1
  echo "$name: polyinfer level 3 vs ONNX Runtime"
  "$py" "$root/tools/compare_ort.py" "$onnx" "$l3" -i "$feed" || status=1
  rm -rf "$l0" "$l3"
done
exit $status
