#!/usr/bin/env python3
"""Quantizes a float model with ONNX Runtime's quantize_static into standard QDQ form.

Why: the int8 path (src/opt/qdq_fusion.cpp, src/providers/cpu/onednn/qlinear.cpp) is measured on
models quantized by a tool users already trust, independently of polyinfer's own `quantize`
command. QDQ, per-channel int8 weights (axis 0), int32 bias DQ with scale sx*sw and zero point 0.

    .venv/bin/python tools/quantize_ort.py MODEL.onnx OUT.onnx [--samples 16] [--input X.npy]
        [--activation int8|uint8] [--per-tensor]

Calibration: --samples batches of N(0, 1) noise (seeded), plus X.npy when given (it is also
used for the input shape; otherwise dynamic dimensions become 1).
"""

import argparse

import numpy as np
import onnx
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)


class Reader(CalibrationDataReader):
    def __init__(self, feeds):
        self.it = iter(feeds)

    def get_next(self):
        return next(self.it, None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--input", help=".npy input used for calibration and its shape")
    ap.add_argument("--activation", choices=["int8", "uint8"], default="int8")
    ap.add_argument("--per-tensor", action="store_true")
    a = ap.parse_args()
    m = onnx.load(a.model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inp = [i for i in m.graph.input if i.name not in inits][0]
    rng = np.random.default_rng(0)
    if a.input:
        x0 = np.load(a.input).astype(np.float32)
        shape = x0.shape
    else:
        x0 = None
        shape = tuple(d.dim_value if d.dim_value > 0 else 1
                      for d in inp.type.tensor_type.shape.dim)
    feeds = [{inp.name: rng.standard_normal(shape).astype(np.float32)} for _ in range(a.samples)]
    if x0 is not None:
        feeds.append({inp.name: x0})
    act = QuantType.QInt8 if a.activation == "int8" else QuantType.QUInt8
    quantize_static(a.model, a.out, Reader(feeds), quant_format=QuantFormat.QDQ,
                    per_channel=not a.per_tensor, activation_type=act,
                    weight_type=QuantType.QInt8)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
