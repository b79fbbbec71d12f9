#!/usr/bin/env python3
"""Per-node overhead of polyinfer's executor against ONNX Runtime, on chains of tiny nodes.

Why: small recurrent and audio models (openWakeWord, Silero VAD, FSMN VAD) run hundreds of
nodes on tensors of a few dozen floats, so a run's time is mostly what the runtime spends
between kernels: binding inputs, allocating outputs, dispatch. A chain of N tiny elementwise
nodes isolates that cost: median latency / N is the per-node price of a runtime.

How: three models of N nodes (default 1000) on a float32 input x, built with onnx.helper and
saved in a temporary folder:

  add1     x: [1]      y = ((x + c1) * x + c2) * x ...   Add of a constant, Mul by the input
  add16    x: [1, 16]  the same on 16 floats
  mixed16  x: [1, 16]  Add of a constant, Relu, Mul by the input, in turn (three kernels)

Every other node multiplies by the graph input, so neither runtime can fold the chain into one
constant (a chain of constant Adds alone would be folded by ORT_ENABLE_ALL). ONNX Runtime runs
in this process (CPU provider, intra_op 1, inter_op 1, sequential) with ORT_ENABLE_ALL and
ORT_DISABLE_ALL; polyinfer runs `polyinfer bench MODEL --json --threads 1 --iterations K` in a
subprocess, once plain (latency median) and once with --profile, whose kernel_ms_per_run is
the kernels' own time: the rest of a run (mean latency less it) is the executor's bookkeeping,
including the profiler's two clock reads per node. The runtimes alternate for --rounds rounds
(who goes first alternates too) so that both see the same load; the medians of the rounds are
reported. Per-node figures are microseconds.

  .venv/bin/python bench/node_overhead.py [--polyinfer build/polyinfer] [--nodes 1000]
      [--iterations 2000] [--rounds 3] [--models add1 add16 mixed16]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = {"add1": [1], "add16": [1, 16], "mixed16": [1, 16]}


def chain_model(kind, n):
    """A chain of n nodes on input x (see the module docstring); a constant per Add."""
    shape = SHAPES[kind]
    cycle = ["Add", "Mul"] if kind != "mixed16" else ["Add", "Relu", "Mul"]
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        op, out = cycle[i % len(cycle)], f"t{i}" if i < n - 1 else "y"
        if op == "Add":
            c = np.full(shape, 0.5 + (i % 7) * 1e-3, np.float32)
            inits.append(helper.make_tensor(f"c{i}", TensorProto.FLOAT, shape, c.ravel()))
            nodes.append(helper.make_node("Add", [prev, f"c{i}"], [out]))
        elif op == "Mul":
            nodes.append(helper.make_node("Mul", [prev, "x"], [out]))
        else:
            nodes.append(helper.make_node(op, [prev], [out]))
        prev = out
    graph = helper.make_graph(
        nodes, f"chain_{kind}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def time_ort(path, x, level, iterations):
    """Median latency (ms) of ONNX Runtime in this process, one warm-up run."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = level
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {"x": x}
    sess.run(None, feed)
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        sess.run(None, feed)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def time_polyinfer(exe, path, iterations, profile):
    """Median latency (ms) from `polyinfer bench --json`; with profile, the mean latency less
    the kernels' mean time per run (profile.kernel_ms_per_run, over the same runs) instead:
    the executor's bookkeeping, preemptions on a loaded machine spread over both alike."""
    cmd = [exe, "bench", path, "--json", "--threads", "1", "--iterations", str(iterations)]
    if profile:
        cmd.append("--profile")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    if not profile:
        return j["latency_ms"]["median"]
    return j["latency_ms"]["mean"] - j["profile"]["kernel_ms_per_run"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--polyinfer", default=os.path.join(HERE, "..", "build", "polyinfer"))
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = ap.parse_args()
    import onnxruntime as ort
    levels = {"ORT all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
              "ORT none": ort.GraphOptimizationLevel.ORT_DISABLE_ALL}
    n, results = args.nodes, {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.models:
            path = os.path.join(tmp, f"chain_{kind}_{n}.onnx")
            onnx.save(chain_model(kind, n), path)
            x = np.random.default_rng(0).uniform(0.5, 1.0, SHAPES[kind]).astype(np.float32)
            s = {k: [] for k in ["polyinfer", "executor", *levels]}
            for r in range(args.rounds):
                def run_pi():
                    for key, profile in (("polyinfer", False), ("executor", True)):
                        s[key].append(time_polyinfer(args.polyinfer, path, args.iterations,
                                                     profile))

                def run_ort():
                    for name, level in levels.items():
                        s[name].append(time_ort(path, x, level, args.iterations))
                for f in ([run_pi, run_ort] if r % 2 == 0 else [run_ort, run_pi]):
                    f()
            results[kind] = {k: statistics.median(v) for k, v in s.items()}
    if args.json:
        print(json.dumps({"nodes": n, "results": results}, indent=1))
        return
    us = 1e3 / n
    print(f"{n}-node chains, 1 thread, {args.rounds} alternated rounds of {args.iterations} "
          "runs; us per node = median latency / nodes")
    print("executor: polyinfer's time outside the kernels (--profile: mean latency less the "
          "kernels' mean)")
    print(f"{'model':<9} {'polyinfer':>10} {'executor':>9} {'ORT all':>8} {'ORT none':>9} "
          f"{'pi/ORT all':>11}")
    for kind, r in results.items():
        print(f"{kind:<9} {r['polyinfer'] * us:>10.3f} {r['executor'] * us:>9.3f} "
              f"{r['ORT all'] * us:>8.3f} {r['ORT none'] * us:>9.3f} "
              f"{r['polyinfer'] / r['ORT all']:>11.2f}")


if __name__ == "__main__":
    main()
