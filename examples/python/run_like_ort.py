#!/usr/bin/env python3
"""A program written for ONNX Runtime, unchanged but for its import: it runs models and saves
their outputs, so that the same program under both runtimes can be compared.

    python examples/python/run_like_ort.py --runtime onnxruntime ort.npz FOLDER...
    python examples/python/run_like_ort.py --runtime polyinfer ours.npz FOLDER...

Each FOLDER holds model.onnx and its inputs as in_<input name>.npy (the layout of tests/data/
and of bench/corpus via --corpus). Outputs are saved as "<folder>/<output name>": tensors as
they are, sequences of maps (ZipMap) as one array of their values in key order.
tests/python/test_drop_in.py runs it both ways and compares.
"""

import argparse
import importlib
import os

import numpy as np


def as_array(value):
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return np.array([[m[k] for k in sorted(m)] for m in value])
        return np.array(value)
    return np.asarray(value)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runtime", choices=["onnxruntime", "polyinfer"], required=True)
    p.add_argument("out")
    p.add_argument("folders", nargs="+")
    args = p.parse_args()
    ort = importlib.import_module(args.runtime)

    saved = {}
    for folder in args.folders:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(os.path.join(folder, "model.onnx"), sess_options=so,
                                    providers=["CPUExecutionProvider"])
        feeds = {}
        for arg in sess.get_inputs():
            feeds[arg.name] = np.load(os.path.join(folder, f"in_{arg.name}.npy"),
                                      allow_pickle=True)
        names = [o.name for o in sess.get_outputs()]
        for name, value in zip(names, sess.run(names, feeds)):
            saved[f"{os.path.basename(os.path.normpath(folder))}/{name}"] = as_array(value)
    np.savez(args.out, **saved)


if __name__ == "__main__":
    main()
