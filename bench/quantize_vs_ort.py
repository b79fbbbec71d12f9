#!/usr/bin/env python3
"""polyinfer's INT8 quantization against ONNX Runtime's, on the same models and data.

For each model: the same calibration samples go to `polyinfer quantize` and to
onnxruntime.quantization.quantize_static (QDQ, per-channel int8 weights, int8 activations, the
same calibration method); both QDQ models then run in both runtimes on validation samples the
calibration did not see. The table gives, per quantized model and runtime, the cosine and top-1
agreement of the logits with the float model (ONNX Runtime fp32 as the reference), the true
accuracy where labels exist (digits), and median latency at --threads.

    .venv/bin/python bench/quantize_vs_ort.py --models digits resnet50 --validation 100

Data: digits uses its real test images (examples/digits; calibration on the first rows,
validation on the rest). The torchvision models in bench/models have random weights and there is
no image set on these machines (no downloads), so their samples are seeded smooth random images;
their figures measure quantization error, not ImageNet accuracy.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                      QuantType, quantize_static)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def smooth_images(n, seed):
    """Seeded images with image-like spatial correlation (low-res noise upsampled, plus grain)."""
    r = np.random.default_rng(seed)
    lo = r.normal(size=(n, 3, 14, 14)).astype(np.float32)
    x = np.repeat(np.repeat(lo, 16, axis=2), 16, axis=3)
    return (x + 0.3 * r.normal(size=x.shape)).astype(np.float32)


def model_data(name, n_cal, n_val):
    """(onnx path, input name, calibration [N,...], validation [M,...], labels or None)."""
    if name == "digits":
        d = os.path.join(ROOT, "examples", "digits")
        x, y = np.load(os.path.join(d, "test_x.npy")), np.load(os.path.join(d, "test_y.npy"))
        n_val = min(n_val, len(x) - n_cal)
        return (os.path.join(d, "digits_cnn.onnx"), "pixels", x[:n_cal], x[n_cal:n_cal + n_val],
                y[n_cal:n_cal + n_val])
    path = os.path.join(ROOT, "bench", "models", name + ".onnx")
    if not os.path.exists(path):
        sys.exit(f"{path} is missing: run bench/export_models.py (bench/README.md)")
    return path, "input", smooth_images(n_cal, 1), smooth_images(n_val, 2), None


class Reader(CalibrationDataReader):
    def __init__(self, name, x):
        self.items = iter([{name: x[i:i + 1]} for i in range(len(x))])

    def get_next(self):
        return next(self.items, None)


def ort_session(path, threads):
    o = ort.SessionOptions()
    o.intra_op_num_threads = threads
    o.inter_op_num_threads = 1
    o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])


def ort_outputs(path, name, x, threads):
    s = ort_session(path, threads)
    return np.concatenate([s.run(None, {name: x[i:i + 1]})[0] for i in range(len(x))])


def ort_median_ms(path, name, x, threads, runs):
    s = ort_session(path, threads)
    feed = {name: x[:1]}
    s.run(None, feed)
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        s.run(None, feed)
        t.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(t))


def pi_outputs(pi, path, name, x, threads, tmp):
    """polyinfer run on each sample (outputs as .npy)."""
    outs = []
    for i in range(len(x)):
        f = os.path.join(tmp, "sample.npy")
        np.save(f, x[i:i + 1])
        # A fresh folder per run: the output's file name is the model's output name, and a
        # previous model's file must not be read in its place.
        od = os.path.join(tmp, "out")
        shutil.rmtree(od, ignore_errors=True)
        subprocess.run([pi, "run", path, "-i", f"{name}={f}", "-o", od, "--threads", str(threads)],
                       check=True, stdout=subprocess.DEVNULL)
        files = sorted(os.listdir(od))
        if len(files) != 1:
            sys.exit(f"polyinfer run {path} wrote {files}; expected one output")
        outs.append(np.load(os.path.join(od, files[0])))
    return np.concatenate(outs)


def pi_median_ms(pi, path, name, x, threads, runs, tmp):
    f = os.path.join(tmp, "sample.npy")
    np.save(f, x[:1])
    r = subprocess.run([pi, "bench", path, "--json", "--threads", str(threads), "--iterations",
                        str(runs), "-i", f"{name}={f}"], check=True, capture_output=True, text=True)
    return json.loads(r.stdout)["latency_ms"]["median"]


def agreement(ref, got):
    a, b = ref.reshape(len(ref), -1), got.reshape(len(got), -1)
    cos = float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))
    return cos, float((a.argmax(1) == b.argmax(1)).mean())


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=["digits", "resnet50", "mobilenet_v2"])
    p.add_argument("--calibration", type=int, default=32, help="calibration samples (default 32)")
    p.add_argument("--validation", type=int, default=20, help="validation samples (default 20)")
    p.add_argument("--method", default="minmax", choices=["minmax", "entropy", "percentile"])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=20, help="timed runs per round (default 20)")
    p.add_argument("--rounds", type=int, default=3,
                   help="alternating latency rounds per runtime (default 3)")
    p.add_argument("--polyinfer", default=os.path.join(ROOT, "build", "polyinfer"))
    a = p.parse_args()
    methods = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
               "percentile": CalibrationMethod.Percentile}
    rows, agree = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for m in a.models:
            path, name, cal, val, labels = model_data(m, a.calibration, a.validation)
            cal_file = os.path.join(tmp, f"{m}.cal.npy")
            np.save(cal_file, cal)
            pi_q, ort_q = os.path.join(tmp, f"{m}.pi.onnx"), os.path.join(tmp, f"{m}.ort.onnx")
            subprocess.run([a.polyinfer, "quantize", path, "-o", pi_q, "--calibration", cal_file,
                            "--per-channel", "--method", a.method],
                           check=True, stdout=subprocess.DEVNULL)
            quantize_static(path, ort_q, Reader(name, cal), quant_format=QuantFormat.QDQ,
                            per_channel=True, activation_type=QuantType.QInt8,
                            weight_type=QuantType.QInt8, calibrate_method=methods[a.method])
            ref = ort_outputs(path, name, val, a.threads)
            for qname, q in (("fp32", path), ("polyinfer int8", pi_q), ("ORT int8", ort_q)):
                # Latency: the two runtimes alternate for --rounds rounds (who goes first
                # alternates too), so both see the same load on a shared machine; the figure is
                # the median of a runtime's round medians.
                rounds = {"ORT": [], "polyinfer": []}
                for r in range(a.rounds):
                    for runtime in (("ORT", "polyinfer") if r % 2 == 0 else ("polyinfer", "ORT")):
                        rounds[runtime].append(
                            ort_median_ms(q, name, val, a.threads, a.runs) if runtime == "ORT" else
                            pi_median_ms(a.polyinfer, q, name, val, a.threads, a.runs, tmp))
                both = {}
                for runtime in ("ORT", "polyinfer"):
                    if runtime == "ORT":
                        out = ort_outputs(q, name, val, a.threads)
                    else:
                        out = pi_outputs(a.polyinfer, q, name, val, a.threads, tmp)
                    ms = float(np.median(rounds[runtime]))
                    both[runtime] = out
                    cos, top1 = agreement(ref, out)
                    acc = float((out.argmax(1) == labels).mean()) if labels is not None else None
                    rows.append((m, qname, runtime, cos, top1, acc, ms))
                    print(f"{m:13s} {qname:15s} in {runtime:9s} cosine {cos:.5f} top-1 {top1:.3f} "
                          f"{'' if acc is None else f'accuracy {acc:.4f} '}median {ms:.3f} ms",
                          file=sys.stderr, flush=True)
                cos, top1 = agreement(both["ORT"], both["polyinfer"])
                agree.append((m, qname, cos, top1))
    print(f"\n{a.calibration} calibration samples ({a.method}, per-channel, int8 activations), "
          f"{a.validation} validation samples, {a.threads} thread(s); reference: ORT fp32; "
          f"latency: median of {a.rounds} alternating rounds of {a.runs} runs.\n")
    print("| model | quantized by | run in | cosine | top-1 agree | accuracy | median ms |")
    print("|---|---|---|---:|---:|---:|---:|")
    for m, q, r, cos, top1, acc, ms in rows:
        print(f"| {m} | {q} | {r} | {cos:.5f} | {top1:.3f} | "
              f"{'' if acc is None else f'{acc:.4f}'} | {ms:.3f} |")
    print("\nThe same model in both runtimes (polyinfer's outputs against ONNX Runtime's):\n")
    print("| model | quantized by | cosine | top-1 agree |")
    print("|---|---|---:|---:|")
    for m, q, cos, top1 in agree:
        print(f"| {m} | {q} | {cos:.5f} | {top1:.3f} |")


if __name__ == "__main__":
    main()
