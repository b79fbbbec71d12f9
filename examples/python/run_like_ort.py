#!/usr/bin/env python3
"""A program written for ONNX Runtime, unchanged but for its import: it runs models and saves
their outputs, so that the same program under both runtimes can be compared.

    python examples/python/run_like_ort.py --runtime onnxruntime ort.npz FOLDER...
    python examples/python/run_like_ort.py --runtime polyinfer ours.npz FOLDER...
        [--corpus bench/corpus]

Each FOLDER holds model.onnx and its inputs as in_<input name>.npy (the layout of tests/data/);
--corpus adds the real-model corpus that bench/fetch_corpus.py writes. Outputs are saved as
"<model>/<output name>": tensors as they are, sequences of maps (ZipMap) as one array of their
values in key order. tests/python/test_drop_in.py runs it both ways and compares.
"""

import argparse
import importlib
import json
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
    p.add_argument("folders", nargs="*")
    p.add_argument("--corpus", help="also every model of this bench/corpus folder "
                   "(its manifest.json: NAME.onnx and NAME.<input>.npy)")
    args = p.parse_args()
    ort = importlib.import_module(args.runtime)

    models = []  # (name, model path, {input name: .npy path})
    for folder in args.folders:
        name = os.path.basename(os.path.normpath(folder))
        models.append((name, os.path.join(folder, "model.onnx"),
                       lambda arg, f=folder: os.path.join(f, f"in_{arg}.npy")))
    if args.corpus:
        with open(os.path.join(args.corpus, "manifest.json")) as f:
            for m in json.load(f)["models"]:
                files = {i["name"]: os.path.join(args.corpus, i["file"]) for i in m["inputs"]}
                models.append((m["name"], os.path.join(args.corpus, m["onnx"]), files.get))

    saved = {}
    for name, path, input_file in models:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])
        feeds = {arg.name: np.load(input_file(arg.name), allow_pickle=True)
                 for arg in sess.get_inputs()}
        outputs = [o.name for o in sess.get_outputs()]
        for output, value in zip(outputs, sess.run(outputs, feeds)):
            saved[f"{name}/{output}"] = as_array(value)
    np.savez(args.out, **saved)


if __name__ == "__main__":
    main()
