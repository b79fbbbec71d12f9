#!/usr/bin/env python3
"""Per-call cost of `run` through Python: polyinfer's package against onnxruntime's, side by side.

Why: a Python caller pays the binding on every call (converting the feed dict, checking dtypes,
wrapping outputs as numpy arrays) before and after the kernels. On a tiny model that is most of
a call; issue 38 asks it to be no more than ONNX Runtime's.

How: both sessions live in this process (intra_op 1, ORT_ENABLE_ALL, CPU); for each model the
two runtimes alternate for --rounds rounds of --iterations calls (who goes first alternates), and
the median call time of each round is kept; the medians of the rounds are reported, with their
ratio. Models:

  one_node  y = x + 1 on a [1, 16] float32 (onnx.helper): the binding's cost and little else
  digits    examples/digits/digits_cnn.onnx on one 8x8 image: a small real model
  big_input y = ReduceSum(x) on a 100 MB float32 input: a copy of the input would show in the
            call time and in the peak RSS growth of the first run (printed; polyinfer runs
            first, so ONNX Runtime's figure is only what it adds above that mark)

  PYTHONPATH=build/python .venv/bin/python bench/python_overhead.py [--iterations 2000]
      [--rounds 5]
"""

import argparse
import os
import resource
import statistics
import time

import numpy as np
import onnxruntime
from onnx import TensorProto, helper

import polyinfer

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "m", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


def models():
    f = TensorProto.FLOAT
    one = model([helper.make_node("Add", ["x", "c"], ["y"])],
                [helper.make_tensor_value_info("x", f, [1, 16])],
                [helper.make_tensor_value_info("y", f, [1, 16])],
                [helper.make_tensor("c", f, [], [1.0])])
    with open(os.path.join(ROOT, "examples", "digits", "digits_cnn.onnx"), "rb") as fh:
        digits = fh.read()
    n = 25 * 1024 * 1024  # 100 MB of float32
    big = model([helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0)],
                [helper.make_tensor_value_info("x", f, [n])],
                [helper.make_tensor_value_info("y", f, [])])
    rng = np.random.default_rng(0)
    return [
        ("one_node", one, {"x": rng.standard_normal((1, 16), dtype=np.float32)}),
        ("digits", digits, {"pixels": rng.random((1, 1, 8, 8), dtype=np.float32)}),
        ("big_input", big, {"x": np.ones(n, np.float32)}),
    ]


def median_call_us(sess, feeds, iterations):
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iterations", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()

    print(f"{'model':<10} {'polyinfer us':>13} {'onnxruntime us':>15} {'ratio':>7}")
    for name, data, feeds in models():
        so = onnxruntime.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        ort = onnxruntime.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        po = polyinfer.SessionOptions()
        po.intra_op_num_threads = 1
        ours = polyinfer.InferenceSession(data, po, providers=["CPUExecutionProvider"])
        iterations = args.iterations if name != "big_input" else max(args.iterations // 100, 5)
        growth = []
        for s in (ours, ort):  # warm-up; the high-water mark shows what a first run allocates
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            s.run(None, feeds)
            growth.append((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
        mine, theirs = [], []
        for r in range(args.rounds):
            order = [(ours, mine), (ort, theirs)]
            for s, out in (order if r % 2 == 0 else order[::-1]):
                out.append(median_call_us(s, feeds, iterations))
        a, b = statistics.median(mine), statistics.median(theirs)
        print(f"{name:<10} {a:13.2f} {b:15.2f} {a / b:7.2f}   peak RSS growth in the first "
              f"run: polyinfer {growth[0]:.0f} MB, onnxruntime {growth[1]:.0f} MB")


if __name__ == "__main__":
    main()
