#!/usr/bin/env python3
"""polyinfer, ONNX Runtime and OpenVINO side by side on the real-model corpus (bench/corpus.json).

Why: the models third-party packages ship are what users run, and ONNX Runtime and OpenVINO are
what they would otherwise run them with. For each model and thread count this measures, in
alternated rounds (who goes first rotates, so drifts in machine load hit all three alike):

  * ONNX Runtime: CPU EP, intra_op_num_threads=N, inter_op=1, sequential, ORT_ENABLE_ALL;
  * OpenVINO: CPU, INFERENCE_PRECISION_HINT f32, PERFORMANCE_HINT LATENCY, NUM_STREAMS 1,
    INFERENCE_NUM_THREADS N, the model reshaped to the static input shapes fed (what its docs
    recommend; a model that will not reshape runs with its dynamic shapes);
  * polyinfer: `polyinfer bench MODEL --json --threads N`.
Each runtime runs in a fresh process per round. ONNX Runtime and OpenVINO are workers of this
same script: ORT under this interpreter (the repo's .venv), OpenVINO under --ov-python, a venv of
its own (bench/requirements-openvino.txt; bench/run.sh --corpus makes it) so that its pins never
touch tools/requirements.txt.

Then, once per model: the outputs of `polyinfer run` and OpenVINO against ONNX Runtime's (max
|diff| over max |ORT|, the worst output), ONNX Runtime's own optimized-vs-unoptimized disagreement
(the issue's tolerance is twice that where it exceeds 1e-4), and a `bench --profile` at 1 thread:
the share of kernel time in reference kernels (impl "reference...") and in the layout Transposes
the optimizer inserted (`bench --json`'s reference_share and layout_share: nodes of origin
"channels-last"), the control flow's own (If/Loop/Scan outside their bodies' kernels:
control_flow_share), and the top operators.

It prints a markdown table with polyinfer/ORT and polyinfer/OpenVINO ratios of median latency and
their geometric means per thread count, and the errors of any runtime that cannot load or run a
model (a failure is a row, not a crash). Usually run by `bench/run.sh --corpus`:

    .venv/bin/python bench/compare_corpus.py --polyinfer build/polyinfer \
        --ov-python .venv-openvino/bin/python [--models magika silero_vad] [--threads 1 2]
    .venv/bin/python bench/compare_corpus.py --check ...   # agreement and profile only, no timing

Inputs and models come from bench/corpus/ (bench/fetch_corpus.py writes them).
"""

import argparse
import datetime
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUNTIMES = ("ort", "ov", "pi")


# Operators whose profile rows are their bodies' bookkeeping (bench --json control_flow_share).
CONTROL_FLOW = ("If", "Loop", "Scan", "SequenceMap")

def die(msg):
    print(f"compare_corpus: error: {msg}", file=sys.stderr)
    sys.exit(2)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def safe_file_name(name):
    """The file name `polyinfer run -o` gives an output (src/cli/run.cpp safe_file_name)."""
    s = "".join(c if (c.isascii() and c.isalnum()) or c in "-." else "_" for c in name)
    return "_" + s if not s or s[0] == "." else s


def first_line(text, limit=300):
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    # The last "error" line is usually the one that says what went wrong.
    pick = next((l for l in reversed(lines) if "rror" in l), lines[-1] if lines else "")
    return pick[:limit]


# --- Workers: ONNX Runtime and OpenVINO, each in its own process. ---

def load_feeds(spec):
    return {i["name"]: np.load(os.path.join(spec["dir"], i["file"])) for i in spec["inputs"]}


def timed_loop(run, duration, min_iterations):
    samples = []
    start = time.perf_counter()
    while len(samples) < min_iterations or time.perf_counter() - start < duration:
        t0 = time.perf_counter()
        run()
        samples.append((time.perf_counter() - t0) * 1e3)
    return samples


def save_outputs(save_dir, names, arrays):
    os.makedirs(save_dir, exist_ok=True)
    for n, a in zip(names, arrays):
        np.save(os.path.join(save_dir, safe_file_name(n) + ".npy"), np.asarray(a))


def ort_worker(args, spec):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads_n
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_DISABLE_ALL if args.unoptimized
                                   else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    so.log_severity_level = 3  # Paddle exports warn about output shapes on every run
    feeds = load_feeds(spec)
    t0 = time.perf_counter()
    sess = ort.InferenceSession(spec["model"], so, providers=["CPUExecutionProvider"])
    create_ms = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    outs = sess.run(None, feeds)
    first_ms = (time.perf_counter() - t0) * 1e3
    if args.save_outputs:
        save_outputs(args.save_outputs, [o.name for o in sess.get_outputs()], outs)
    samples = timed_loop(lambda: sess.run(None, feeds), args.duration, args.min_iterations)
    return {"session_create_ms": create_ms, "first_run_ms": first_ms, "samples_ms": samples,
            "version": ort.__version__}


def ov_worker(args, spec):
    import openvino as ov

    feeds = load_feeds(spec)
    core = ov.Core()
    t0 = time.perf_counter()
    model = core.read_model(spec["model"])
    note = ""
    try:
        model.reshape({name: ov.PartialShape(list(a.shape)) for name, a in feeds.items()})
    except Exception as e:  # noqa: BLE001 (any reshape failure: run with dynamic shapes)
        note = f"kept dynamic shapes ({first_line(str(e), 120)})"
    config = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY",
              "NUM_STREAMS": "1", "INFERENCE_NUM_THREADS": str(args.threads_n)}
    compiled = core.compile_model(model, "CPU", config)
    request = compiled.create_infer_request()
    create_ms = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    result = request.infer(feeds)
    first_ms = (time.perf_counter() - t0) * 1e3
    if args.save_outputs:
        # A port may carry several tensor names; save under each, so that the ONNX output name
        # ORT saves under is among them.
        names, arrays = [], []
        for i, port in enumerate(compiled.outputs):
            for n in sorted(port.get_names()) or [f"output{i}"]:
                names.append(n)
                arrays.append(result[port])
        save_outputs(args.save_outputs, names, arrays)
    samples = timed_loop(lambda: request.infer(feeds), args.duration, args.min_iterations)
    return {"session_create_ms": create_ms, "first_run_ms": first_ms, "samples_ms": samples,
            "version": ov.get_version(), "note": note}


def worker_main(args):
    with open(args.spec) as f:
        spec = json.load(f)
    try:
        r = (ort_worker if args.worker == "ort" else ov_worker)(args, spec)
        r["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    except Exception as e:  # noqa: BLE001 (the parent reports any failure as the row's error)
        r = {"error": f"{type(e).__name__}: {first_line(str(e)) or repr(e)}"}
    json.dump(r, sys.stdout)


# --- The parent. ---

def run_json(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:g} s"}
    if p.returncode != 0:
        return {"error": f"exit {p.returncode}: {first_line(p.stderr or p.stdout)}"}
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"error": f"no JSON on stdout: {first_line(p.stderr or p.stdout)}"}


class Model:
    def __init__(self, entry, manifest_entry, corpus_dir, tmp):
        self.name = entry["name"]
        self.kind = entry["kind"]
        self.path = os.path.join(corpus_dir, manifest_entry["onnx"])
        self.inputs = manifest_entry["inputs"]
        self.spec = os.path.join(tmp, self.name + ".spec.json")
        with open(self.spec, "w") as f:
            json.dump({"model": self.path, "dir": corpus_dir, "inputs": self.inputs}, f)
        self.pi_inputs = []
        for i in self.inputs:
            self.pi_inputs += ["-i", f"{i['name']}={os.path.join(corpus_dir, i['file'])}"]


def worker_round(args, who, m, threads, save=None, unoptimized=False):
    python = sys.executable if who == "ort" else args.ov_python
    cmd = [python, os.path.abspath(__file__), "--worker", who, "--spec", m.spec,
           "--threads-n", str(threads), "--duration", str(args.duration),
           "--min-iterations", str(args.min_iterations)]
    if save:
        cmd += ["--save-outputs", save]
    if unoptimized:
        cmd += ["--unoptimized"]
    return run_json(cmd, args.timeout)


def pi_round(args, m, threads, profile=False):
    cmd = [args.polyinfer, "bench", m.path, "--json", "--threads", str(threads), "--warmup", "1",
           "--duration", str(args.duration)] + m.pi_inputs
    if profile:
        cmd += ["--profile"]
    return run_json(cmd, args.timeout)


def pi_run(args, m, out_dir):
    cmd = [args.polyinfer, "run", m.path, "-o", out_dir] + m.pi_inputs
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {args.timeout:g} s"
    return None if p.returncode == 0 else f"exit {p.returncode}: {first_line(p.stderr)}"


def max_rel_diff(ref_dir, other_dir):
    """Worst output's max |a - b| / max |ref|; (value, output name, note)."""
    worst, worst_name, notes = 0.0, "", []
    for f in sorted(os.listdir(ref_dir)):
        ref = np.load(os.path.join(ref_dir, f))
        path = os.path.join(other_dir, f)
        if not os.path.exists(path):
            notes.append(f"no output {f[:-4]}")
            continue
        got = np.load(path)
        if got.size != ref.size:
            notes.append(f"{f[:-4]}: shape {list(got.shape)} vs ORT {list(ref.shape)}")
            worst, worst_name = math.inf, f[:-4]
            continue
        got = got.reshape(ref.shape)  # a [1]-vs-[] difference is not a disagreement
        if ref.dtype.kind not in "fc":
            bad = int(np.count_nonzero(got != ref))
            if bad:
                notes.append(f"{f[:-4]}: {bad} of {ref.size} values differ")
                worst, worst_name = math.inf, f[:-4]
            continue
        r, g = ref.astype(np.float64), got.astype(np.float64)
        if not np.array_equal(np.isnan(r), np.isnan(g)):
            notes.append(f"{f[:-4]}: NaNs differ")
            worst, worst_name = math.inf, f[:-4]
            continue
        ok = ~np.isnan(r)
        if not ok.any():
            continue
        d = float(np.max(np.abs(r[ok] - g[ok]))) / max(float(np.max(np.abs(r[ok]))), 1e-30)
        if d > worst:
            worst, worst_name = d, f[:-4]
    return worst, worst_name, "; ".join(notes)


def profile_summary(bench_json, top=4):
    prof = bench_json["profile"]
    nodes = prof["nodes"]
    total = sum(n["total_ms"] for n in nodes) or 1e-30
    ref_ops = {}
    for n in nodes:
        if n["impl"].startswith("reference") and n["op"] not in CONTROL_FLOW:
            ref_ops[n["op"]] = ref_ops.get(n["op"], 0.0) + n["total_ms"]
    ops = sorted(bench_json["profile"]["ops"], key=lambda o: -o["share"])[:top]
    return {
        "reference_share": prof["reference_share"], "layout_transpose_share": prof["layout_share"],
        "control_flow_share": prof.get("control_flow_share", 0.0),
        "layout_transposes": prof["layout_nodes"],
        "reference_ops": {k: v / total for k, v in sorted(ref_ops.items(), key=lambda kv: -kv[1])},
        "top_ops": [{"op": o["op"], "share": o["share"], "impls": o["impls"]} for o in ops],
    }


def check_model(args, m, tmp):
    """Agreement and profile: one ORT (optimized and not), OpenVINO and polyinfer run each."""
    res = {}
    d = {k: os.path.join(tmp, m.name + "." + k) for k in ("ort", "ort0", "ov", "pi")}
    for k in d.values():
        shutil.rmtree(k, ignore_errors=True)
    quick = argparse.Namespace(**{**vars(args), "duration": 0.0, "min_iterations": 1})
    o = worker_round(quick, "ort", m, 1, save=d["ort"])
    res["ort_error"] = o.get("error")
    if not o.get("error"):
        o0 = worker_round(quick, "ort", m, 1, save=d["ort0"], unoptimized=True)
        if not o0.get("error"):
            res["ort_self_diff"] = max_rel_diff(d["ort"], d["ort0"])[0]
    if args.ov_python:
        v = worker_round(quick, "ov", m, 1, save=d["ov"])
        res["ov_error"] = v.get("error")
        res["ov_note"] = v.get("note", "")
        if not v.get("error") and not o.get("error"):
            res["ov_diff"], _, res["ov_diff_note"] = max_rel_diff(d["ort"], d["ov"])
    err = pi_run(args, m, d["pi"])
    res["pi_error"] = err
    if not err and not o.get("error"):
        res["pi_diff"], res["pi_diff_output"], res["pi_diff_note"] = max_rel_diff(d["ort"],
                                                                                  d["pi"])
    if not err and not args.no_profile:
        prof_args = argparse.Namespace(**{**vars(args), "duration": args.profile_duration})
        b = pi_round(prof_args, m, 1, profile=True)
        if b.get("error"):
            res["profile_error"] = b["error"]
        else:
            res.update(profile_summary(b))
            res["gflop"] = b.get("gflop_per_run")
    return res


def time_model(args, m):
    rows = []
    who_all = [w for w in RUNTIMES if w != "ov" or args.ov_python]
    for ti, t in enumerate(args.threads):
        runs = {w: [] for w in who_all}
        errors = {}
        for r in range(args.rounds):
            k = (r + ti) % len(who_all)
            for who in who_all[k:] + who_all[:k]:
                if who in errors:
                    continue
                log(f"  {m.name} threads={t} round {r + 1}/{args.rounds}: {who}")
                res = pi_round(args, m, t) if who == "pi" else worker_round(args, who, m, t)
                if res.get("error"):
                    errors[who] = res["error"]
                    log(f"    {who}: {res['error']}")
                else:
                    runs[who].append(res)
        row = {"model": m.name, "threads": t, "errors": errors}
        for w in who_all:
            if runs[w]:
                samples = [s for run in runs[w] for s in run["samples_ms"]]
                row[f"{w}_ms"] = statistics.median(samples)
                row[f"{w}_runs"] = len(samples)
                row[f"{w}_create_ms"] = statistics.median(x["session_create_ms"] for x in runs[w])
                row[f"{w}_rss_mb"] = max(x["peak_rss_mb"] for x in runs[w])
        if runs["pi"]:
            row["placement"] = runs["pi"][0]["placement"]["summary"]
        for other in ("ort", "ov"):
            if row.get("pi_ms") and row.get(f"{other}_ms"):
                row[f"pi_{other}"] = row["pi_ms"] / row[f"{other}_ms"]
                row[f"pi_{other}_create"] = row["pi_create_ms"] / row[f"{other}_create_ms"]
        rows.append(row)
    return rows


def geomean(xs):
    xs = [x for x in xs if x and math.isfinite(x) and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x, spec=".2f", unit=""):
    return "-" if x is None or not math.isfinite(x) else format(x, spec) + unit


def pct(x):
    return "-" if x is None else f"{100 * x:.0f}%"


def diff_cell(c):
    if c.get("pi_error"):
        return "fails"
    d = c.get("pi_diff")
    if d is None:
        return "-"
    tol = max(1e-4, 2 * c["ort_self_diff"]) if c.get("ort_self_diff") is not None else 1e-4
    return f"{fmt(d, '.0e')}" + ("" if d <= tol else " ✗")


def timing_table(rows, checks):
    head = ("| model | threads | ORT ms | OpenVINO ms | polyinfer ms | polyinfer/ORT "
            "| polyinfer/OpenVINO | create ms ORT / OV / pi | reference share "
            "| layout Transposes | control flow | max rel diff vs ORT |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        c = checks.get(r["model"], {})
        lines.append(
            f"| {r['model']} | {r['threads']} | {fmt(r.get('ort_ms'))} | {fmt(r.get('ov_ms'))} | "
            f"{fmt(r.get('pi_ms'))} | {fmt(r.get('pi_ort'), '.2f', 'x')} | "
            f"{fmt(r.get('pi_ov'), '.2f', 'x')} | "
            f"{fmt(r.get('ort_create_ms'), '.0f')} / {fmt(r.get('ov_create_ms'), '.0f')} / "
            f"{fmt(r.get('pi_create_ms'), '.0f')} | {pct(c.get('reference_share'))} | "
            f"{pct(c.get('layout_transpose_share'))} | {pct(c.get('control_flow_share'))} | "
            f"{diff_cell(c)} |")
    threads = sorted({r["threads"] for r in rows})
    for t in threads:
        sel = [r for r in rows if r["threads"] == t]
        g_ort = geomean(r.get("pi_ort") for r in sel)
        g_ov = geomean(r.get("pi_ov") for r in sel)
        g_cr = geomean(r.get("pi_ort_create") for r in sel)
        n_ort = sum(1 for r in sel if r.get("pi_ort"))
        n_ov = sum(1 for r in sel if r.get("pi_ov"))
        lines.append(f"| **geometric mean** ({n_ort} / {n_ov} models) | {t} | | | | "
                     f"**{fmt(g_ort, '.2f', 'x')}** | **{fmt(g_ov, '.2f', 'x')}** | "
                     f"pi/ORT {fmt(g_cr, '.2f', 'x')} | | | | |")
    return "\n".join(lines)


def check_table(models, checks):
    lines = ["| model | kind | polyinfer | OpenVINO | max rel diff pi vs ORT (ORT opt vs unopt) "
             "| OV vs ORT | reference share | layout Transposes | top ops (share, impl) |",
             "|" + "---|" * 9]
    for m in models:
        c = checks[m.name]
        pi = "runs" if not c.get("pi_error") else f"**{c['pi_error']}**"
        ov = ("-" if "ov_error" not in c else
              "runs" + (f" ({c['ov_note']})" if c.get("ov_note") else "") if not c["ov_error"]
              else f"**{c['ov_error']}**")
        diff = diff_cell(c) + (f" ({c['pi_diff_output']})" if c.get("pi_diff_output") and
                               c.get("pi_diff", 0) > 1e-4 else "")
        if c.get("pi_diff_note"):
            diff += f"; {c['pi_diff_note']}"
        diff += f" ({fmt(c.get('ort_self_diff'), '.0e')})"
        top = ", ".join(
            f"{o['op'].replace('ai.polyinfer.', '')} {100 * o['share']:.0f}% "
            f"{'/'.join(sorted(o['impls']))}" for o in c.get("top_ops", []))
        lt = (f"{pct(c.get('layout_transpose_share'))} ({c['layout_transposes']})"
              if "layout_transposes" in c else "-")
        lines.append(f"| {m.name} | {m.kind} | {pi} | {ov} | {diff} | "
                     f"{fmt(c.get('ov_diff'), '.0e')} | {pct(c.get('reference_share'))} | {lt} | "
                     f"{top} |")
    return "\n".join(lines)


def machine():
    model, cores = platform.processor() or "?", os.cpu_count()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if k.strip() == "Model name":
                model = v.strip()
    except OSError:
        pass
    return f"{model}, {cores} CPUs"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--polyinfer", default=os.path.join(ROOT, "build-release", "polyinfer"))
    ap.add_argument("--ov-python", default=os.environ.get(
        "POLYINFER_OV_PYTHON", os.path.join(ROOT, ".venv-openvino", "bin", "python")),
        help="python with openvino (default .venv-openvino/bin/python; 'none': no OpenVINO)")
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus.json"))
    ap.add_argument("--corpus-dir", default=os.path.join(HERE, "corpus"))
    ap.add_argument("--models", nargs="+", default=None, help="default: every corpus model")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=3, help="alternations per runtime (default 3)")
    ap.add_argument("--duration", type=float, default=1.0,
                    help="seconds of measured runs per runtime per round (at least "
                         "--min-iterations runs)")
    ap.add_argument("--min-iterations", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600, help="per process, seconds")
    ap.add_argument("--check", action="store_true",
                    help="no timing: which runtime loads and runs each model, output agreement "
                         "and polyinfer's profile")
    ap.add_argument("--no-profile", action="store_true", help="skip the profiled polyinfer run")
    ap.add_argument("--profile-duration", type=float, default=1.0)
    ap.add_argument("--json", default=None, help="also write everything measured here")
    # Workers (internal).
    ap.add_argument("--worker", choices=["ort", "ov"], help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    ap.add_argument("--threads-n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--save-outputs", help=argparse.SUPPRESS)
    ap.add_argument("--unoptimized", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        return worker_main(args)
    if args.rounds < 1 or args.duration < 0 or any(t < 1 for t in args.threads):
        die("--rounds, --duration and --threads must be positive")
    if not os.access(args.polyinfer, os.X_OK):
        die(f"no polyinfer binary at {args.polyinfer}; build it (bench/run.sh does)")
    if args.ov_python == "none":
        args.ov_python = None
    elif not os.access(args.ov_python, os.X_OK):
        log(f"compare_corpus: no OpenVINO python at {args.ov_python}; OpenVINO left out "
            "(bench/run.sh --corpus makes .venv-openvino; --ov-python none silences this)")
        args.ov_python = None
    with open(args.corpus) as f:
        entries = {m["name"]: m for m in json.load(f)["models"]}
    manifest_path = os.path.join(args.corpus_dir, "manifest.json")
    if not os.path.exists(manifest_path):
        die(f"{manifest_path} is missing; run .venv/bin/python bench/fetch_corpus.py")
    with open(manifest_path) as f:
        manifest = {m["name"]: m for m in json.load(f)["models"]}
    names = args.models or list(entries)
    for n in names:
        if n not in entries:
            die(f"model '{n}' is not in {args.corpus}; it has {sorted(entries)}")
        if n not in manifest:
            die(f"model '{n}' is not fetched; run .venv/bin/python bench/fetch_corpus.py")

    t_start = time.time()
    ov_version = "-"
    if args.ov_python:
        ov_version = subprocess.run(
            [args.ov_python, "-c", "import openvino; print(openvino.get_version())"],
            capture_output=True, text=True).stdout.strip() or "?"
    with tempfile.TemporaryDirectory() as tmp:
        models = [Model(entries[n], manifest[n], args.corpus_dir, tmp) for n in names]
        rows, checks = [], {}
        for m in models:
            log(f"{m.name}:")
            if not args.check:
                rows.extend(time_model(args, m))
            log(f"  {m.name}: outputs against ORT, profile")
            checks[m.name] = check_model(args, m, tmp)

    import onnxruntime  # noqa: E402 (the version, for the record)
    rev = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip() or "?"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    notes = (f"Machine: {machine()}. polyinfer {rev} ({args.polyinfer}), onnxruntime "
             f"{onnxruntime.__version__}, openvino {ov_version}; {when}; ")
    if args.check:
        print(check_table(models, checks))
        notes += "one run each (--check)."
    else:
        print(timing_table(rows, checks))
        notes += (f"{args.rounds} alternating rounds of {args.duration:g} s per runtime, "
                  f"median latency pooled over the rounds; whole comparison "
                  f"{time.time() - t_start:.0f} s.")
    print()
    print(notes)
    failures = []
    for m in models:
        c = checks[m.name]
        for who, key in (("ONNX Runtime", "ort_error"), ("OpenVINO", "ov_error"),
                         ("polyinfer", "pi_error"), ("polyinfer --profile", "profile_error")):
            if c.get(key):
                failures.append(f"- {m.name}: {who}: {c[key]}")
    names = {"ort": "ONNX Runtime", "ov": "OpenVINO", "pi": "polyinfer"}
    for r in rows:
        for who, e in r["errors"].items():
            # The same failure as in the agreement run once is enough; a timing-only one is new.
            if f"- {r['model']}: {names[who]}: {e}" not in failures:
                failures.append(f"- {r['model']} threads={r['threads']}: {names[who]}: {e}")
    if failures:
        print("\nErrors:\n" + "\n".join(dict.fromkeys(failures)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "checks": checks, "machine": machine(), "notes": notes},
                      f, indent=1)


if __name__ == "__main__":
    main()
