#!/usr/bin/env python3
"""Two polyinfer binaries side by side: which kernel each node gets, and latency.

For a change that should not move speed (a refactor) or one that should (a new kernel):

    bench/ab.py BASE/polyinfer build/polyinfer --models resnet50,bert_base --threads 1,2

First every node's kernel (`bench --profile --json`, its `impl` and `choice`) is compared
between the two binaries; then the two run alternated rounds of `polyinfer bench` (who goes
first alternates, so both see the same load on a shared machine) and the medians pooled per
side give one ratio per model and thread count, and their geometric mean. Models are
bench/models/NAME.onnx with NAME.input.npy where present (bench/export_models.py). Exit status
1 when a node's kernel differs and --same-kernels was given.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


def bench(binary, model, threads, extra):
    path = os.path.join(MODELS, model + ".onnx")
    cmd = [binary, "bench", path, "--json", "--threads", str(threads), "--warmup", "1"] + extra
    feed = os.path.join(MODELS, model + ".input.npy")
    if os.path.exists(feed) and "--profile" not in extra:
        cmd += ["-i", "input=" + feed]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0 and "-i" in cmd:  # the model's input may have another name
        out = subprocess.run(cmd[:-2], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def kernels(binary, model, threads):
    j = bench(binary, model, threads, ["--iterations", "1", "--profile"])
    return [(n["node"], n["impl"], n.get("choice", "")) for n in j["profile"]["nodes"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--models", required=True, help="comma-separated names in bench/models/")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--duration", default="2", help="seconds per round and side")
    ap.add_argument("--same-kernels", action="store_true",
                    help="fail when any node's kernel differs (a refactor's claim)")
    ap.add_argument("--no-latency", action="store_true", help="only compare kernels")
    a = ap.parse_args()
    models, threads = a.models.split(","), [int(t) for t in a.threads.split(",")]

    differ = 0
    for m in models:
        for t in threads:
            x, y = kernels(a.base, m, t), kernels(a.new, m, t)
            diff = [(p, q) for p, q in zip(x, y) if p[1] != q[1]]
            differ += len(diff) + (len(x) != len(y))
            print(f"kernels {m} @{t}: {len(x)} / {len(y)} nodes, {len(diff)} differ")
            for p, q in diff[:10]:
                print(f"    {p[0]}: {p[1]} -> {q[1]} ({q[2]})")
    if a.no_latency:
        return 1 if (a.same_kernels and differ) else 0

    print("| model | threads | base ms | new ms | new/base | create ms base / new |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for m in models:
        for t in threads:
            lat = {"b": [], "n": []}
            create = {"b": [], "n": []}
            for r in range(a.rounds):
                order = [("b", a.base), ("n", a.new)]
                for side, binary in order if r % 2 == 0 else reversed(order):
                    j = bench(binary, m, t, ["--duration", a.duration])
                    lat[side].append(j["latency_ms"]["median"])
                    create[side].append(j.get("session_create_ms", 0))
            mb, mn = statistics.median(lat["b"]), statistics.median(lat["n"])
            ratios.append(mn / mb)
            cb, cn = statistics.median(create["b"]), statistics.median(create["n"])
            print(f"| {m} | {t} | {mb:.2f} | {mn:.2f} | {mn / mb:.3f} | {cb:.0f} / {cn:.0f} |",
                  flush=True)
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geometric mean new/base over {len(ratios)} pairs: {geo:.3f}")
    return 1 if (a.same_kernels and differ) else 0


if __name__ == "__main__":
    sys.exit(main())
