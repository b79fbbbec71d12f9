#!/usr/bin/env python3
"""Tree ensembles (ai.onnx.ml TreeEnsembleClassifier / TreeEnsembleRegressor) against ONNX Runtime.

Why: issue 42's target is polyinfer at or below ONNX Runtime's latency (ratio <= 1.0) on the
scikit-learn tree models, both for one row at a time (serving) and for batches (scoring).
For every model in tests/data/sklearn/ that holds a TreeEnsemble node, and each batch size
(default 1 and 1000), this makes a seeded input like the model's stored one (each float column
drawn from a normal of that column's mean and spread, NaNs at its rate of NaNs, strings drawn
from the values it holds; saved as .npy), then alternates the two runtimes for --rounds rounds,
who goes first alternating too, at 1 thread:

  * polyinfer: `polyinfer bench MODEL --threads 1 --json --iterations N -i NAME=FILE.npy`
    (a subprocess per round: session creation, one warm-up run, N timed runs; only runs timed);
  * ONNX Runtime, in this process: one session per model and batch (CPU EP,
    intra_op_num_threads=1, inter_op_num_threads=1, sequential, ORT_ENABLE_ALL), one warm-up
    run, then N runs each timed around session.run alone.

N is the same for both, picked so that one round of ORT takes about --round-seconds. Medians
pool all rounds' samples; the ratio is polyinfer's median over ORT's. ORT's session.run carries
Python's per-call cost (binding the numpy input, making numpy outputs), which a batch of one
row mostly is: the "ORT floor" column is session.run of Identity nodes on the same inputs,
timed in the same rounds, and polyinfer/(ORT - floor) a pessimistic bound on the ratio (the
floor holds ORT's own per-run cost too).
Then, once per model (at the largest batch), `polyinfer run -o` against ORT's outputs: labels
must be equal, probabilities and scores within --tol (regression values: relative to the
largest); it exits 1 when one is not.

    .venv/bin/python bench/trees_vs_ort.py [--polyinfer build/polyinfer] [--batches 1 1000]
        [--models rf_classifier gb_binary] [--rounds 5] [--readme bench/README.md]

or `bench/run.sh --trees [ARGS]` (builds build-release/ first; POLYINFER_BUILD=build to use
build/). With --readme, the section between "<!-- trees -->" and "<!-- /trees -->" of that
README is rewritten with the table.
"""

import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import onnx
import onnx.numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def die(msg):
    print(f"trees_vs_ort: error: {msg}", file=sys.stderr)
    sys.exit(2)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def tree_models(data_dir, only):
    """(name, model path, stored inputs {name: array}) for each folder with a TreeEnsemble node."""
    found = []
    for name in sorted(os.listdir(data_dir)):
        path = os.path.join(data_dir, name, "model.onnx")
        if not os.path.exists(path) or (only and name not in only):
            continue
        m = onnx.load(path)
        if not any(n.domain == "ai.onnx.ml" and n.op_type.startswith("TreeEnsemble")
                   for n in m.graph.node):
            continue
        stored = {}
        for i in m.graph.input:
            f = os.path.join(data_dir, name, f"in_{i.name}.npy")
            if not os.path.exists(f):
                die(f"{name}: no stored input {f} to take the input's width and values from")
            stored[i.name] = np.load(f)
        found.append((name, path, stored))
    if only:
        missing = set(only) - {n for n, _, _ in found}
        if missing:
            die(f"not tree-ensemble models in {data_dir}: {sorted(missing)}")
    return found


def make_inputs(stored, batch, seed):
    """Seeded inputs of `batch` rows, column by column like the stored ones."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, ref in stored.items():
        if ref.dtype.kind in "US":
            out[name] = rng.choice(np.unique(ref), size=(batch,) + ref.shape[1:])
            continue
        ref2 = ref.reshape(len(ref), -1).astype(np.float64)
        cols = []
        for c in ref2.T:
            ok = c[np.isfinite(c)]
            mean, std = (float(ok.mean()), float(ok.std()) or 1.0) if len(ok) else (0.0, 1.0)
            col = rng.normal(mean, std, batch)
            col[rng.random(batch) < np.isnan(c).mean()] = np.nan
            cols.append(col)
        out[name] = np.stack(cols, 1).reshape((batch,) + ref.shape[1:]).astype(ref.dtype)
    return out


def ort_session(model):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def ort_samples(sess, feeds, n):
    run, clock, samples = sess.run, time.perf_counter, []
    for _ in range(n):
        t0 = clock()
        run(None, feeds)
        samples.append((clock() - t0) * 1e3)
    return samples


def floor_session(model):
    """An ORT session of Identity nodes on the model's inputs: what session.run costs with no work
    (Python's binding of the inputs and outputs, ORT's per-run overhead)."""
    m = onnx.load(model)
    nodes, outs = [], []
    for i in m.graph.input:
        nodes.append(onnx.helper.make_node("Identity", [i.name], [i.name + "_out"]))
        o = onnx.ValueInfoProto()
        o.CopyFrom(i)
        o.name = i.name + "_out"
        outs.append(o)
    g = onnx.helper.make_graph(nodes, "floor", list(m.graph.input), outs)
    f = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 17)])
    f.ir_version = 8
    return ort_session(f.SerializeToString())


def polyinfer_samples(pi, model, files, n):
    cmd = [pi, "bench", model, "--threads", "1", "--json", "--iterations", str(n)]
    for name, f in files.items():
        cmd += ["-i", f"{name}={f}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    r = json.loads(p.stdout)
    return r["samples_ms"], r["latency_ms"]["median"]


def save_inputs(inputs, folder):
    os.makedirs(folder, exist_ok=True)
    files = {}
    for name, a in inputs.items():
        files[name] = os.path.join(folder, f"{name}.npy")
        np.save(files[name], a)
    return files


def load_output(path):
    """A polyinfer output file: .npy, or a SequenceProto (.pb) of maps as a list of dicts."""
    if path.endswith(".npy"):
        return np.load(path)
    seq = onnx.SequenceProto()
    with open(path, "rb") as f:
        seq.ParseFromString(f.read())
    return onnx.numpy_helper.to_list(seq)


def as_array(v):
    """ORT's or polyinfer's output as an array; a list of maps as rows of values by key."""
    if isinstance(v, list) and v and isinstance(v[0], dict):
        keys = sorted(v[0])
        return np.array([[float(d[k]) for k in keys] for d in v])
    return np.asarray(v)


def agreement(pi, model, sess, feeds, files, out_dir, tol):
    """[(output, what, figure, ok)] of polyinfer run against ORT on the same inputs."""
    cmd = [pi, "run", model, "--threads", "1", "-o", out_dir]
    for name, f in files.items():
        cmd += ["-i", f"{name}={f}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    ref = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    rows = []
    for name, want in ref.items():
        path = next((os.path.join(out_dir, name + e) for e in (".npy", ".pb")
                     if os.path.exists(os.path.join(out_dir, name + e))), None)
        if path is None:
            rows.append((name, "missing", "-", False))
            continue
        got, want = as_array(load_output(path)), as_array(want)
        if got.shape != want.shape and got.size == want.size:
            got = got.reshape(want.shape)  # a [N] label against ORT's [N] or [N,1]
        if got.shape != want.shape:
            rows.append((name, f"shape {got.shape} vs {want.shape}", "-", False))
        elif want.dtype.kind in "iuUSOb":
            bad = int(np.sum(got.astype(str) != want.astype(str)) if want.dtype.kind in "USO"
                      else np.sum(got != want))
            rows.append((name, "labels differing", f"{bad}/{want.size}", bad == 0))
        else:
            got, want = got.astype(np.float64), want.astype(np.float64)
            diff = float(np.max(np.abs(got - want), initial=0.0))
            # Probabilities and scores: absolute; regression values: relative to the largest.
            probs = want.ndim == 2 and want.shape[1] > 1 or name.startswith(("prob", "output_p"))
            scale = 1.0 if probs else max(float(np.max(np.abs(want), initial=0.0)), 1.0)
            what = "max abs diff" if probs else "max abs diff (rel)"
            fig = f"{diff:.1e}" if probs else f"{diff:.1e} ({diff / scale:.0e})"
            rows.append((name, what, fig, diff / scale <= tol))
    return rows


def geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return next((l.split(":", 1)[1].strip() for l in out.splitlines()
                     if l.split(":")[0].strip() == "Model name"), "?")
    except OSError:
        return "?"


def write_readme(path, text):
    with open(path) as f:
        doc = f.read()
    start, end = "<!-- trees -->", "<!-- /trees -->"
    if start not in doc or end not in doc:
        die(f"{path} has no '{start}' ... '{end}' section to rewrite")
    a, b = doc.index(start) + len(start), doc.index(end)
    with open(path, "w") as f:
        f.write(doc[:a] + "\n" + text + "\n" + doc[b:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--polyinfer", default=os.path.join(ROOT, "build", "polyinfer"))
    ap.add_argument("--data", default=os.path.join(ROOT, "tests", "data", "sklearn"))
    ap.add_argument("--models", nargs="+", default=None,
                    help="default: every folder of --data with a TreeEnsemble node")
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 1000])
    ap.add_argument("--rounds", type=int, default=5, help="alternations per runtime (default 5)")
    ap.add_argument("--round-seconds", type=float, default=0.3,
                    help="about this long per runtime per round (sets N; default 0.3)")
    ap.add_argument("--min-iterations", type=int, default=20)
    ap.add_argument("--max-iterations", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tol", type=float, default=1e-5,
                    help="output agreement: probabilities absolute, regression values relative")
    ap.add_argument("--readme", default=None, help="rewrite this README's trees section")
    args = ap.parse_args()
    if args.rounds < 1 or any(b < 1 for b in args.batches):
        die("--rounds and --batches must be positive")
    if not os.access(args.polyinfer, os.X_OK):
        die(f"no polyinfer binary at {args.polyinfer}; build it (bench/run.sh --trees does)")
    import onnxruntime

    models = tree_models(args.data, args.models)
    if not models:
        die(f"no tree-ensemble models in {args.data}")
    t_start, load0 = time.time(), os.getloadavg()[0]
    rows, checks = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, stored in models:
            for batch in args.batches:
                inputs = make_inputs(stored, batch, args.seed)
                files = save_inputs(inputs, os.path.join(tmp, name, str(batch)))
                sess, floor = ort_session(model), floor_session(model)
                sess.run(None, inputs)  # warm-up
                floor.run(None, inputs)
                est = statistics.median(ort_samples(sess, inputs, 20))
                n = int(min(max(args.round_seconds * 1e3 / max(est, 1e-4),
                                args.min_iterations), args.max_iterations))
                pi_all, ort_all, floor_all = [], [], []
                for r in range(args.rounds):
                    log(f"  {name} batch={batch} round {r + 1}/{args.rounds} ({n} runs each)")
                    for who in (("ort", "pi") if r % 2 == 0 else ("pi", "ort")):
                        if who == "ort":
                            ort_all += ort_samples(sess, inputs, n)
                            floor_all += ort_samples(floor, inputs, n)
                        else:
                            pi_all += polyinfer_samples(args.polyinfer, model, files, n)[0]
                p_med, o_med = statistics.median(pi_all), statistics.median(ort_all)
                f_med = statistics.median(floor_all)
                rows.append({"model": name, "batch": batch, "pi_ms": p_med, "ort_ms": o_med,
                             "ratio": p_med / o_med, "floor_ms": f_med, "runs": n,
                             "net_ratio": p_med / (o_med - f_med) if o_med > f_med else None})
                if batch == max(args.batches):
                    out_dir = os.path.join(tmp, name, "pi_out")
                    checks.append((name, agreement(args.polyinfer, model, sess, inputs, files,
                                                   out_dir, args.tol)))

    lines = ["| model | batch | polyinfer ms | ORT ms | polyinfer/ORT | ORT floor ms "
             "| polyinfer/(ORT - floor) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        net = "-" if r["net_ratio"] is None else f"{r['net_ratio']:.2f}x"
        lines.append(f"| {r['model']} | {r['batch']} | {r['pi_ms']:.4f} | {r['ort_ms']:.4f} | "
                     f"{r['ratio']:.2f}x | {r['floor_ms']:.4f} | {net} |")
    gm = geomean([r["ratio"] for r in rows])
    per_batch = ", ".join(f"batch {b} {geomean([r['ratio'] for r in rows if r['batch'] == b]):.2f}"
                          for b in args.batches)
    lines.append(f"\nGeometric mean polyinfer/ORT: {gm:.2f} ({per_batch}).")
    slow = [f"{r['model']} (batch {r['batch']}, {r['ratio']:.2f}x)" for r in rows
            if r["ratio"] > 1.0]
    lines.append(textwrap.fill("Above 1.0: " + (", ".join(slow) if slow else "none") + ".", 100))
    lines.append("\n| model | output | check | result | ok |\n|---|---|---|---|---|")
    for name, outs in checks:
        for out, what, fig, ok in outs:
            lines.append(f"| {name} | {out} | {what} | {fig} | {'yes' if ok else 'NO'} |")
    rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip() or "?"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = "/".join(f"{x:.1f}" for x in (load0, os.getloadavg()[0]))
    notes = textwrap.fill(
        f"Machine: {cpu_model()}, {os.cpu_count()} CPUs, load average {load} at the start/end. "
        f"polyinfer {rev} ({args.polyinfer}), onnxruntime {onnxruntime.__version__}; {when}; "
        f"1 thread; {args.rounds} alternating rounds of N runs per runtime (N for about "
        f"{args.round_seconds:g} s of ORT), medians of all samples; agreement at batch "
        f"{max(args.batches)}, tolerance {args.tol:g}. ORT floor: session.run of Identity "
        f"nodes on the same inputs, timed in the same rounds (Python's binding and ORT's "
        f"per-run cost), so polyinfer/(ORT - floor) is a pessimistic bound. Whole run "
        f"{time.time() - t_start:.0f} s.", 100)
    text = "\n".join(lines)
    print(text)
    print()
    print(notes)
    if args.readme:
        write_readme(args.readme, text + "\n\n" + notes)
    if not all(ok for _, outs in checks for *_, ok in outs):
        sys.exit(1)


if __name__ == "__main__":
    main()
