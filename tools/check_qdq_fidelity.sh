#!/usr/bin/env bash
# QDQ fidelity (issue 42): polyinfer's int8 fusions keep a QDQ model's semantics to within
# rounding. Quantizes bench/models/resnet50.onnx with ONNX Runtime's quantize_static (QDQ,
# per-channel int8 weights, uint8 activations; tools/quantize_ort.py) unless MODEL is given, runs
# it literally (ONNX Runtime with graph optimizations disabled: DequantizeLinear, float Conv,
# QuantizeLinear) and prints the cosine and largest difference to that of
#   - ONNX Runtime with its own fusions (for scale);
#   - polyinfer at levels 1, 2 and 3, with oneDNN's instruction set as this CPU has it and capped
#     at AVX2 and at AVX-512 without VNNI (ONEDNN_MAX_CPU_ISA): there oneDNN's own int8 products
#     saturate, and the int8 kernels must take their exact form (docs/kernels.md, onednn_int8);
#   - for contrast, level 2 capped at AVX2 with `cpu:onednn_int8=on` (the saturating products).
# Fails when a default configuration is below cosine 0.995.
#   tools/check_qdq_fidelity.sh [MODEL INPUT.npy] [OUT_DIR] [POLYINFER_BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${3:-/tmp/polyinfer-qdq-fidelity}
pi=${4:-$root/build/polyinfer}
py=$root/.venv/bin/python
[ -x "$py" ] || py=/work/main/.venv/bin/python
mkdir -p "$out"
if [ $# -ge 2 ]; then
  model=$1
  input=$2
else
  model=$out/resnet50_qdq_uint8.onnx
  input=$root/bench/models/resnet50.input.npy
  [ -f "$model" ] || "$py" "$root/tools/quantize_ort.py" "$root/bench/models/resnet50.onnx" \
    "$model" --input "$input" --activation uint8
fi
"$py" - "$model" "$input" "$pi" "$out" <<'PY'
import os, shutil, subprocess, sys

import numpy as np
import onnx
import onnxruntime as ort

model, inp, pi, out = sys.argv[1:5]
x = np.load(inp)
name = [i.name for i in onnx.load(model, load_external_data=False).graph.input][0]


def ort_run(level):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: x})[0].ravel().astype(np.float64)


literal = ort_run(ort.GraphOptimizationLevel.ORT_DISABLE_ALL)


def report(what, y, floor=None):
    cos = float(y @ literal / np.linalg.norm(y) / np.linalg.norm(literal))
    ok = floor is None or cos >= floor
    print(f"{what:58s} cosine {cos:.6f}  max |diff| {np.abs(y - literal).max():.4g}"
          + ("" if ok else f"   FAIL: below {floor}"))
    return ok


def polyinfer(level, isa, providers="cpu"):
    d = os.path.join(out, f"out_{level}_{isa or 'native'}_{providers.replace(':', '_')}")
    shutil.rmtree(d, ignore_errors=True)
    env = dict(os.environ)
    env.pop("ONEDNN_MAX_CPU_ISA", None)
    if isa:
        env["ONEDNN_MAX_CPU_ISA"] = isa
    subprocess.run([pi, "run", model, "-i", f"{name}={inp}", "-o", d, "--level", str(level),
                    "--threads", "1", "--providers", providers], check=True, env=env,
                   capture_output=True)
    return np.load(os.path.join(d, os.listdir(d)[0])).ravel().astype(np.float64)


print(f"{model}: against ONNX Runtime without graph optimizations (the literal QDQ graph)")
ok = True
report("ONNX Runtime, all optimizations", ort_run(ort.GraphOptimizationLevel.ORT_ENABLE_ALL))
for isa in ["", "AVX2", "AVX512_CORE"]:
    for level in [1, 2, 3]:
        ok &= report(f"polyinfer level {level}, oneDNN ISA {isa or 'native'}",
                     polyinfer(level, isa), 0.995)
report("polyinfer level 2, AVX2, cpu:onednn_int8=on (saturating)",
       polyinfer(2, "AVX2", "cpu:onednn_int8=on"))
sys.exit(0 if ok else 1)
PY
