#!/usr/bin/env bash
# Checks the int8 path on real models (docs/optimizer.md, "Int8 (QDQ) models"): quantizes
# bench/models/resnet50.onnx with ONNX Runtime's quantize_static (QDQ, per-channel int8 weights;
# int8 and uint8 activations; tools/quantize_ort.py) and, when present, bert_base.onnx with
# quantize_dynamic, then `polyinfer compare FP32 INT8 --time --threads 1`: cosine to fp32 and both
# latencies side by side. The acceptance target (issue 5): ResNet-50 int8 at <= 0.4x of fp32's
# latency, cosine >= 0.99. Fails when a cosine is below 0.99.
#   tools/check_int8.sh [MODELS_DIR] [OUT_DIR] [POLYINFER_BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
models=${1:-$root/bench/models}
out=${2:-/tmp/polyinfer-int8}
pi=${3:-$root/build/polyinfer}
py=$root/.venv/bin/python
[ -x "$py" ] || py=/work/main/.venv/bin/python
mkdir -p "$out"
status=0
check() {  # FP32 INT8 INPUT
  local report
  report=$("$pi" compare "$1" "$2" -i "input=$3" --threads 1 --time --iterations 30)
  echo "$report"
  local cos
  cos=$(echo "$report" | awk '$1 == "output" && NF >= 5 {print $4}')
  if ! awk -v c="$cos" 'BEGIN { exit !(c >= 0.99) }'; then
    echo "FAIL: cosine $cos < 0.99 for $2"
    status=1
  fi
}
for act in int8 uint8; do
  q=$out/resnet50_qdq_$act.onnx
  [ -f "$q" ] || "$py" "$root/tools/quantize_ort.py" "$models/resnet50.onnx" "$q" \
    --input "$models/resnet50.input.npy" --activation $act
  check "$models/resnet50.onnx" "$q" "$models/resnet50.input.npy"
done
if [ -f "$models/bert_base.onnx" ]; then
  q=$out/bert_base_dynamic.onnx
  [ -f "$q" ] || "$py" - "$models/bert_base.onnx" "$q" <<'PY'
import sys
from onnxruntime.quantization import QuantType, quantize_dynamic
quantize_dynamic(sys.argv[1], sys.argv[2], weight_type=QuantType.QInt8)
PY
  check "$models/bert_base.onnx" "$q" "$models/bert_base.input.npy"
fi
exit $status
