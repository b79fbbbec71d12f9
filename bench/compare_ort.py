#!/usr/bin/env python3
"""Benchmarks polyinfer against ONNX Runtime on the models of bench/models/, per thread count.

Why: "how fast is it" only means something next to the runtime users would otherwise pick, on
the same machine at the same moment. For each model and thread count this measures, alternating
the two runtimes round by round so both see the same machine state:

  * ONNX Runtime (CPU EP, intra_op_num_threads=N, inter_op=1, sequential, ORT_ENABLE_ALL):
    session creation and per-run latency, in a subprocess of its own, whose peak RSS is read
    with getrusage (so it does not include this script's or polyinfer's memory);
  * polyinfer: `polyinfer bench MODEL --json --threads N` (session create, latency samples, RSS);
  * output agreement: `polyinfer run` outputs (.npy) against ONNX Runtime's on the same input;
  * achieved GFLOP/s (polyinfer's FLOP estimate of the model / median latency) as a share of
    this machine's FMA peak for N threads (bench/fma_peak).

It prints a table with polyinfer/ORT ratios and, with --readme, rewrites the table section of
bench/README.md (between its "<!-- table -->" markers). Usually run by bench/run.sh:

    .venv/bin/python bench/compare_ort.py --polyinfer build-release/polyinfer \
        --fma-peak build-release/bench/fma_peak [--models resnet50] [--threads 1 2]
"""

import argparse
import datetime
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def die(msg):
    print(f"compare_ort: error: {msg}", file=sys.stderr)
    sys.exit(2)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# --- ONNX Runtime worker: runs in its own process so that its peak RSS is its own. ---

def ort_worker(args):
    import onnxruntime as ort  # imported here: the parent needs only numpy

    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads_n
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    t0 = time.perf_counter()
    sess = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    create_ms = (time.perf_counter() - t0) * 1e3
    feeds = {sess.get_inputs()[0].name: np.load(args.input)}
    t0 = time.perf_counter()
    out = sess.run(None, feeds)
    first_ms = (time.perf_counter() - t0) * 1e3
    if args.save_output:
        np.save(args.save_output, out[0])
    samples = []
    start = time.perf_counter()
    while len(samples) < args.min_iterations or time.perf_counter() - start < args.duration:
        t0 = time.perf_counter()
        sess.run(None, feeds)
        samples.append((time.perf_counter() - t0) * 1e3)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    json.dump({"session_create_ms": create_ms, "first_run_ms": first_ms, "samples_ms": samples,
               "peak_rss_mb": rss_mb}, sys.stdout)


# --- The parent: alternates runtimes, gathers, prints. ---

def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return json.loads(p.stdout)


def ort_round(model, inp, threads, duration, min_iterations, save_output=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--ort-worker", model, "--input", inp,
           "--threads-n", str(threads), "--duration", str(duration),
           "--min-iterations", str(min_iterations)]
    if save_output:
        cmd += ["--save-output", save_output]
    return run_json(cmd)


def polyinfer_round(pi, model, input_name, inp, threads, duration):
    return run_json([pi, "bench", model, "--json", "--threads", str(threads), "--warmup", "1",
                     "--duration", str(duration), "-i", f"{input_name}={inp}"])


def agreement(pi, model, input_name, inp, ort_out, out_dir):
    subprocess.run([pi, "run", model, "-i", f"{input_name}={inp}", "-o", out_dir],
                   check=True, capture_output=True)
    files = [f for f in os.listdir(out_dir) if f.endswith(".npy")]
    if len(files) != 1:
        die(f"polyinfer run wrote {files}; expected one output")
    ours = np.load(os.path.join(out_dir, files[0])).astype(np.float64)
    ref = np.load(ort_out).astype(np.float64)
    if ours.shape != ref.shape:
        return float("inf"), float("inf")
    diff = float(np.max(np.abs(ours - ref)))
    return diff, diff / max(float(np.max(np.abs(ref))), 1e-30)


def fma_peak(path, threads):
    if not path or not os.path.exists(path):
        log(f"compare_ort: no fma_peak at {path}; GFLOP/s shares left out")
        return {}
    r = run_json([path, "--json", "--threads", ",".join(map(str, threads))])
    return {int(k): v for k, v in r["peak_gflops"].items()}


def machine():
    model, cores = platform.processor() or "?", os.cpu_count()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if k.strip() == "Model name":
                model = v.strip()
            if k.strip() == "CPU(s)":
                cores = v.strip()
    except OSError:
        pass
    # The widest vector ISA: the same "AMD EPYC" name has come with and without AVX-512 here, and
    # the ratios differ between the two (oneDNN's AVX-512 kernels are another code path).
    isa = "?"
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
        isa = next((n for n in ("avx512f", "avx2", "neon", "asimd") if n in flags), "baseline")
        isa = {"avx512f": "AVX-512", "avx2": "AVX2"}.get(isa, isa)
    except OSError:
        pass
    return f"{model}, {cores} CPUs, {isa}"


def build_type(binary):
    """The CMake build type of the folder holding `binary` (its CMakeCache.txt), or '?'."""
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(binary)), "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_BUILD_TYPE:"):
                    return line.split("=", 1)[1].strip() or "?"
    except OSError:
        pass
    return "?"


def fmt(x, spec=".1f"):
    return "-" if x is None or not np.isfinite(x) else format(x, spec)


def measure_model(args, entry, peaks):
    model = os.path.join(args.models_dir, entry["onnx"])
    inp = os.path.join(args.models_dir, entry["input"])
    name = entry["name"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ort_out = os.path.join(tmp, "ort.npy")
        for ti, t in enumerate(args.threads):
            ort_runs, pi_runs = [], []
            for r in range(args.rounds):
                # Alternate who goes first, so drifts in machine load hit both alike.
                order = ["ort", "pi"] if (r + ti) % 2 == 0 else ["pi", "ort"]
                slow = False
                for who in order:
                    log(f"  {name} threads={t} round {r + 1}/{args.rounds}: {who}")
                    t0 = time.time()
                    if who == "ort":
                        save = ort_out if not os.path.exists(ort_out) else None
                        ort_runs.append(ort_round(model, inp, t, args.duration, args.min_iterations,
                                                   save))
                    else:
                        pi_runs.append(polyinfer_round(args.polyinfer, model,
                                                       entry["input_name"], inp, t,
                                                       args.duration))
                        slow = time.time() - t0 > args.slow_round
                # A round of many seconds per run already averages out short load spikes;
                # more of them would only stretch the whole bench past its time budget.
                if slow:
                    log(f"  {name} threads={t}: polyinfer round over {args.slow_round:g} s; "
                        "no further rounds")
                    break
            o_samples = [s for run in ort_runs for s in run["samples_ms"]]
            p_samples = [s for run in pi_runs for s in run["samples_ms"]]
            o_med, p_med = statistics.median(o_samples), statistics.median(p_samples)
            gflop = pi_runs[0].get("gflop_per_run")
            peak = peaks.get(t)
            rows.append({
                "model": name, "threads": t,
                "ort_ms": o_med, "pi_ms": p_med, "ratio": p_med / o_med,
                "ort_runs": len(o_samples), "pi_runs": len(p_samples), "rounds": len(pi_runs),
                "ort_create_ms": statistics.median(r["session_create_ms"] for r in ort_runs),
                "pi_create_ms": statistics.median(r["session_create_ms"] for r in pi_runs),
                "ort_rss_mb": max(r["peak_rss_mb"] for r in ort_runs),
                "pi_rss_mb": max(r["peak_rss_mb"] for r in pi_runs),
                "gflop": gflop,
                "ort_gflops": gflop / (o_med / 1e3) if gflop else None,
                "pi_gflops": gflop / (p_med / 1e3) if gflop else None,
                "peak_gflops": peak,
                "placement": pi_runs[0]["placement"]["summary"],
            })
        log(f"  {name}: output agreement (polyinfer run vs ORT)")
        diff, rel = agreement(args.polyinfer, model, entry["input_name"], inp, ort_out,
                              os.path.join(tmp, "pi"))
    for row in rows:
        row["max_abs_diff"], row["max_rel_diff"] = diff, rel
    return rows


def table(rows):
    head = ("| model | threads | ORT ms | polyinfer ms | polyinfer/ORT | runs ORT / pi "
            "| create ms ORT / pi "
            "| peak RSS MB ORT / pi | max abs diff (relative) | GFLOP/s ORT / pi (% of FMA peak) |")
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        share = ""
        if r["peak_gflops"] and r["gflop"]:
            share = (f" ({100 * r['ort_gflops'] / r['peak_gflops']:.0f}% / "
                     f"{100 * r['pi_gflops'] / r['peak_gflops']:.1f}%)")
        lines.append(
            f"| {r['model']} | {r['threads']} | {fmt(r['ort_ms'], '.2f')} | "
            f"{fmt(r['pi_ms'], '.1f')} | {fmt(r['ratio'], '.2f')}x | "
            f"{r['ort_runs']} / {r['pi_runs']} | "
            f"{fmt(r['ort_create_ms'], '.0f')} / {fmt(r['pi_create_ms'], '.0f')} | "
            f"{fmt(r['ort_rss_mb'], '.0f')} / {fmt(r['pi_rss_mb'], '.0f')} | "
            f"{fmt(r['max_abs_diff'], '.1e')} ({fmt(r['max_rel_diff'], '.0e')}) | "
            f"{fmt(r['ort_gflops'], '.1f')} / {fmt(r['pi_gflops'], '.2f')}{share} |")
    return "\n".join(lines)


def write_readme(path, text):
    with open(path) as f:
        doc = f.read()
    start, end = "<!-- table -->", "<!-- /table -->"
    if start not in doc or end not in doc:
        die(f"{path} has no '{start}' ... '{end}' section to rewrite")
    a, b = doc.index(start) + len(start), doc.index(end)
    with open(path, "w") as f:
        f.write(doc[:a] + "\n" + text + "\n" + doc[b:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--polyinfer", default=os.path.join(HERE, "..", "build-release", "polyinfer"))
    ap.add_argument("--fma-peak", default=None, help="bench/fma_peak binary (GFLOP/s shares)")
    ap.add_argument("--models-dir", default=os.path.join(HERE, "models"))
    ap.add_argument("--models", nargs="+", default=None, help="default: all in the manifest")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=4, help="alternations per runtime (default 4)")
    ap.add_argument("--duration", type=float, default=2.0,
                    help="seconds of measured runs per runtime per round (at least one run)")
    ap.add_argument("--slow-round", type=float, default=30,
                    help="after a polyinfer round longer than this (s), skip further rounds")
    ap.add_argument("--min-iterations", type=int, default=5, help="ORT worker: at least this many")
    ap.add_argument("--readme", default=None, help="rewrite this README's table section")
    ap.add_argument("--json", default=None, help="also write the rows here")
    # The ONNX Runtime worker (internal).
    ap.add_argument("--ort-worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    ap.add_argument("--threads-n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--save-output", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.ort_worker:
        args.model = args.ort_worker
        return ort_worker(args)
    if args.rounds < 1 or args.duration <= 0 or any(t < 1 for t in args.threads):
        die("--rounds, --duration and --threads must be positive")
    if not os.access(args.polyinfer, os.X_OK):
        die(f"no polyinfer binary at {args.polyinfer}; build it (bench/run.sh does)")
    manifest = os.path.join(args.models_dir, "manifest.json")
    if not os.path.exists(manifest):
        die(f"{manifest} is missing; run /usr/bin/python3 bench/export_models.py")
    with open(manifest) as f:
        entries = {m["name"]: m for m in json.load(f)["models"]}
    names = args.models or list(entries)
    for n in names:
        if n not in entries:
            die(f"model '{n}' is not in {manifest}; it has {sorted(entries)}")

    t_start = time.time()
    peaks = fma_peak(args.fma_peak, args.threads)
    rows = []
    for n in names:
        log(f"{n}:")
        rows.extend(measure_model(args, entries[n], peaks))
    text = table(rows)
    peak_line = ", ".join(f"{t} thread{'s' if t > 1 else ''} {g:.0f}" for t, g in peaks.items())
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rev = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip() or "?"
    import onnxruntime  # noqa: E402  (version for the record)
    notes = (f"Machine: {machine()}. FMA peak GFLOP/s (bench/fma_peak): {peak_line or 'n/a'}.\n"
             f"polyinfer {rev} ({build_type(args.polyinfer)} build), "
             f"onnxruntime {onnxruntime.__version__}; {when}; "
             f"up to {args.rounds} alternating rounds of {args.duration:g} s per runtime "
             f"(polyinfer: at least one measured run per round after one warm-up; one round "
             f"only where a round took over {args.slow_round:g} s); "
             f"whole comparison {time.time() - t_start:.0f} s.")
    print(text)
    print()
    print(notes)
    for r in rows:
        print(f"{r['model']} threads={r['threads']}: {r['placement']}")
    if args.readme:
        write_readme(args.readme, text + "\n\n" + notes)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "machine": machine(), "fma_peak": peaks}, f, indent=2)


if __name__ == "__main__":
    main()
