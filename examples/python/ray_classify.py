#!/usr/bin/env python3
"""Scale-out through Ray Data: the digits test split classified by a pool of Ray actors, each
holding one polyinfer session, fed batches by `map_batches`. Starts a local Ray of its own and
stops it at the end.

    .venv-ray/bin/python examples/python/ray_classify.py [--actors 2] [--batch-size 32]
        [--threads 1] [--limit N] [--json]

(.venv-ray: POLYINFER_VENV=.venv-ray POLYINFER_REQUIREMENTS=examples/python/requirements-ray.txt
tools/pyenv.sh; polyinfer from the build tree with PYTHONPATH=build/python, or pip-installed.)
Prints the accuracy, the rows each actor classified and the provider every node ran on;
--json prints the same as one JSON object (tests/python/test_ray_example.py reads it).
"""

import argparse
import collections
import json
import logging
import os
import sys
import time

import numpy as np
import ray

import polyinfer

DIGITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "digits")


class Classifier:
    """One Ray actor: a session made once, then a batch of images per call."""

    def __init__(self, model_path, threads):
        options = polyinfer.SessionOptions()
        options.intra_op_num_threads = threads
        self.session = polyinfer.InferenceSession(model_path, options,
                                                  providers=["CPUExecutionProvider"])
        self.input = self.session.get_inputs()[0].name
        self.providers = sorted({n["provider"] for n in self.session.placement["nodes"]})

    def __call__(self, batch):
        (logits,) = self.session.run(None, {self.input: batch["pixels"].astype(np.float32)})
        rows = len(batch["index"])
        return {"index": batch["index"], "label": logits.argmax(axis=1),
                "actor": np.full(rows, os.getpid()),
                "providers": np.array([",".join(self.providers)] * rows)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--actors", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=1, help="intra-op threads per session")
    p.add_argument("--limit", type=int, default=0, help="only the first N images (0: all 450)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()

    x = np.load(os.path.join(DIGITS, "test_x.npy"))
    y = np.load(os.path.join(DIGITS, "test_y.npy"))
    if args.limit:
        x, y = x[:args.limit], y[:args.limit]
    started = time.time()
    # The workers inherit this process's environment (PYTHONPATH included), so they import the
    # same polyinfer.
    ray.init(num_cpus=max(2, args.actors * args.threads), include_dashboard=False,
             logging_level="ERROR", log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    try:
        ds = ray.data.from_items([{"index": i, "pixels": x[i]} for i in range(len(x))])
        model = os.path.join(DIGITS, "digits_cnn.onnx")
        out = ds.map_batches(Classifier, fn_constructor_args=(model, args.threads),
                             batch_size=args.batch_size, batch_format="numpy",
                             concurrency=args.actors, num_cpus=args.threads).take_all()
    finally:
        ray.shutdown()
    labels = np.empty(len(x), np.int64)
    for row in out:
        labels[row["index"]] = row["label"]
    result = {
        "images": len(x),
        "rows_returned": len(out),
        "correct": int((labels == y).sum()),
        "accuracy": float((labels == y).mean()),
        "rows_per_actor": dict(collections.Counter(str(r["actor"]) for r in out)),
        "providers": sorted({str(r["providers"]) for r in out}),
        "labels": labels.tolist(),
        "seconds": round(time.time() - started, 1),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['correct']} of {len(x)} digits right ({result['accuracy']:.4f}) in "
              f"{result['seconds']} s; rows per actor: {result['rows_per_actor']}; "
              f"nodes ran on: {', '.join(result['providers'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
