#!/usr/bin/env python3
"""Checks polyinfer's outputs for a model against ONNX Runtime's: the acceptance test for \
real models.

Why: ONNX Runtime is the reference implementation users compare us with. Given a model, the
input .npy files, and the folder that `polyinfer run MODEL -i NAME=FILE -o DIR` wrote (one
DIR/OUTPUT.npy per model output), this runs ONNX Runtime (CPU) on the same inputs and prints,
per output, the largest absolute difference divided by the largest magnitude of ONNX Runtime's
output. It exits 1 when any output is missing, differs in shape or dtype, or exceeds the
threshold (default 1e-4); integer, bool and string outputs must match exactly.

Run with the repo's venv (tools/pyenv.sh sets it up):
    .venv/bin/python tools/compare_ort.py MODEL.onnx DIR -i NAME=FILE.npy [-i ...]
    .venv/bin/python tools/compare_ort.py MODEL.onnx DIR -i FILE.npy      # single-input models
    .venv/bin/python tools/compare_ort.py MODEL.onnx --save-ort DIR -i ...  # only write ORT's

Exit status: 0 all outputs agree, 1 some output does not, 2 bad usage or input.
"""

import argparse
import os
import re
import sys

import numpy as np
import onnxruntime as ort

OPT_LEVELS = {
    "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


def die(msg):
    print(f"compare_ort: error: {msg}", file=sys.stderr)
    sys.exit(2)


def safe_name(name):
    """The file name an output is looked up under when its name is not a plain file name."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def parse_inputs(specs, session):
    names = [i.name for i in session.get_inputs()]
    feeds = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            if len(names) != 1:
                die(f"-i {spec}: the model has inputs {names}; write -i NAME=FILE")
            name, path = names[0], spec
        if name not in names:
            die(f"-i {spec}: the model has no input '{name}'; its inputs are {names}")
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            die(f"cannot read {path}: {e}")
    missing = [n for n in names if n not in feeds]
    if missing:
        die(f"no file given for input(s) {missing}; add -i NAME=FILE.npy")
    return feeds


def compare(name, ref, got, threshold):
    """Returns (ok, one-line report) for one output."""
    head = f"{name:24s} {str(ref.dtype):8s} {str(list(ref.shape)):18s}"
    if got.shape != ref.shape:
        return False, f"{head} FAIL shape {list(got.shape)}, expected {list(ref.shape)}"
    if got.dtype != ref.dtype:
        return False, f"{head} FAIL dtype {got.dtype}, expected {ref.dtype}"
    if ref.size == 0:
        return True, f"{head} ok (empty)"
    if not np.issubdtype(ref.dtype, np.floating):
        bad = int(np.count_nonzero(got != ref))
        if bad:
            return False, f"{head} FAIL {bad} of {ref.size} elements differ (exact match needed)"
        return True, f"{head} ok (exact)"

    r = ref.astype(np.float64)
    g = got.astype(np.float64)
    # NaN and infinities must sit at the same places; the rest is compared by magnitude.
    special = ~np.isfinite(r) | ~np.isfinite(g)
    mismatched = special & ~((np.isnan(r) & np.isnan(g)) | (r == g))
    if mismatched.any():
        return False, (f"{head} FAIL {int(mismatched.sum())} elements differ in NaN/inf "
                       f"(first at flat index {int(np.flatnonzero(mismatched)[0])})")
    finite = ~special
    if not finite.any():
        return True, f"{head} ok (all NaN/inf, matching)"
    diff = np.abs(g[finite] - r[finite])
    scale = float(np.abs(r[finite]).max())
    max_abs = float(diff.max())
    rel = max_abs / scale if scale > 0 else max_abs  # an all-zero reference: absolute error
    worst = int(np.flatnonzero(finite)[int(diff.argmax())])
    ok = rel <= threshold
    return ok, (f"{head} {'ok  ' if ok else 'FAIL'} rel {rel:.3e} (max abs err {max_abs:.3e}, "
                f"max |ref| {scale:.3e}, worst at flat index {worst})")


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Exit status: 0 all outputs agree, 1 some output does not, 2 bad usage or input.")
    ap.add_argument("model", help="the .onnx model")
    ap.add_argument("outputs", nargs="?",
                    help="folder of polyinfer's outputs, one OUTPUT_NAME.npy per model output")
    ap.add_argument("-i", "--input", action="append", default=[], metavar="NAME=FILE.npy",
                    help="an input of the model (repeat for each); NAME= may be left out when "
                         "the model has one input")
    ap.add_argument("--threshold", type=float, default=1e-4,
                    help="largest allowed max|got-ref| / max|ref| per float output (1e-4)")
    ap.add_argument("--ort-opt", choices=sorted(OPT_LEVELS), default="all",
                    help="ONNX Runtime graph optimization level (default all)")
    ap.add_argument("--save-ort", metavar="DIR",
                    help="also write ONNX Runtime's outputs as DIR/OUTPUT_NAME.npy")
    args = ap.parse_args()
    if args.outputs is None and args.save_ort is None:
        ap.error("give the folder of polyinfer's outputs, or --save-ort DIR")

    opts = ort.SessionOptions()
    opts.graph_optimization_level = OPT_LEVELS[args.ort_opt]
    try:
        session = ort.InferenceSession(args.model, opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # ORT raises its own exception types for every kind of bad model
        die(f"ONNX Runtime cannot load {args.model}: {e}")
    feeds = parse_inputs(args.input, session)
    out_names = [o.name for o in session.get_outputs()]
    try:
        results = session.run(out_names, feeds)
    except Exception as e:
        die(f"ONNX Runtime failed to run {args.model}: {e}")

    if args.save_ort:
        os.makedirs(args.save_ort, exist_ok=True)
        for name, value in zip(out_names, results):
            np.save(os.path.join(args.save_ort, safe_name(name) + ".npy"), np.asarray(value))
    if args.outputs is None:
        print(f"compare_ort: wrote {len(out_names)} ONNX Runtime outputs to {args.save_ort}")
        return 0

    failures = 0
    print(f"{os.path.basename(args.model)}: polyinfer ({args.outputs}) vs ONNX Runtime "
          f"{ort.__version__}, threshold {args.threshold:g}")
    for name, ref in zip(out_names, results):
        ref = np.asarray(ref)
        candidates = [os.path.join(args.outputs, n + ".npy")
                      for n in dict.fromkeys((name, safe_name(name)))
                      if "/" not in n and n not in (".", "..")]
        path = next((p for p in candidates if os.path.isfile(p)), None)
        if path is None:
            print(f"{name:24s} FAIL missing: none of {candidates or [safe_name(name)]} exists")
            failures += 1
            continue
        try:
            got = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            print(f"{name:24s} FAIL cannot read {path}: {e}")
            failures += 1
            continue
        ok, line = compare(name, ref, got, args.threshold)
        print(line)
        failures += not ok
    print(f"compare_ort: {len(out_names) - failures} of {len(out_names)} outputs agree"
          + ("" if not failures else f"; {failures} do not"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
