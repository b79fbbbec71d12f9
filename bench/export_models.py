#!/usr/bin/python3
"""Exports the benchmark models into bench/models/ (gitignored; rerun to regenerate).

Why: bench/compare_ort.py needs the same three workloads on every machine without downloading
anything: two convolutional networks (a heavy one and a depthwise/mobile one) and a transformer
encoder. Weights are random with a fixed seed; the numbers are meaningless as predictions but the
kernels, shapes and FLOPs are those of the real models.

    resnet50       torchvision ResNet-50, opset 13, input [1,3,224,224]     (4.1 GMAC)
    mobilenet_v2   torchvision MobileNetV2, opset 13, input [1,3,224,224]   (0.3 GMAC)
    bert_base      BERT-base-like encoder in plain torch ops, opset 17: 12 layers, hidden 768,
                   12 heads, FFN 3072, GELU (erf), LayerNorm, batch 1, sequence 128; input the
                   float32 embeddings [1,128,768]                 (11 GMAC)

On request (--models), also the rest of the torchvision classification family the targets cover:
resnet18, squeezenet1_0, shufflenet_v2_x1_0, densenet121, and the forms that exercise other
kernels: mobilenet_v3_large and efficientnet_b0 (squeeze-and-excitation, HardSwish / SiLU),
regnet_y_400mf and resnext50_32x4d (grouped convolutions), inception_v3 (Pad + AveragePool,
asymmetric 1x7 / 7x1 convolutions), mnasnet1_0 (same recipe as the two above, 224x224).

For each NAME it writes NAME.onnx, NAME.input.npy (a seeded input) and NAME.torch.npy (PyTorch's
output for it), and a manifest.json listing them. The torchvision part is
tools/export_torchvision.py's export().

Run with Debian's Python (python3-torch, python3-torchvision):
    /usr/bin/python3 bench/export_models.py [--out bench/models] [--models resnet50 bert_base]

--batch N writes the same models with a static batch of N as NAME_bN.onnx (the GPU check's
throughput runs, tools/gpu_check.sh) and leaves them out of the manifest, so bench/run.sh's
table keeps to batch 1; --dynamic-batch writes them with a named first dimension as
NAME_dyn.onnx (bench/serve_bench.py's dynamic batching), also outside the manifest.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torchvision
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import export_torchvision  # noqa: E402

TORCHVISION_MODELS = ["resnet50", "mobilenet_v2"]
ALL_MODELS = TORCHVISION_MODELS + ["bert_base"]
# The rest of the classification family the "none above 1.0" target covers; exported on
# request (--models), benchmarked with `bench/run.sh --models NAME...`.
EXTRA_MODELS = ["resnet18", "squeezenet1_0", "shufflenet_v2_x1_0", "densenet121",
                "mobilenet_v3_large", "efficientnet_b0", "regnet_y_400mf", "resnext50_32x4d",
                "inception_v3", "mnasnet1_0"]


class EncoderLayer(nn.Module):
    """One post-norm BERT layer: self-attention, residual + LayerNorm, GELU FFN,
    residual + LayerNorm."""

    def __init__(self, batch, seq, hidden, heads, ffn):
        super().__init__()
        self.shape = (batch, seq, heads, hidden // heads)  # batch -1: any
        self.hidden = hidden
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ff1 = nn.Linear(hidden, ffn)
        self.ff2 = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)
        self.scale = 1.0 / math.sqrt(hidden // heads)

    def forward(self, x):
        b, s, h, d = self.shape  # fixed sizes: no Shape/Gather chains in the exported graph
        q = self.q(x).reshape(b, s, h, d).transpose(1, 2)
        k = self.k(x).reshape(b, s, h, d).transpose(1, 2)
        v = self.v(x).reshape(b, s, h, d).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * self.scale, dim=-1)
        ctx = torch.matmul(att, v).transpose(1, 2).reshape(b, s, self.hidden)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ff2(nn.functional.gelu(self.ff1(x))))  # erf GELU


class Encoder(nn.Module):
    def __init__(self, layers=12, batch=1, seq=128, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(batch, seq, hidden, heads, ffn)
                                    for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def export_bert(out_dir, seed, opset=17, batch=1, dynamic=False):
    torch.manual_seed(seed)
    model = Encoder(batch=-1 if dynamic else batch).eval()
    x = torch.randn(batch, 128, 768, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        y = model(x)
    name = "bert_base" if batch == 1 else f"bert_base_b{batch}"
    if dynamic:
        name += "_dyn"
    path = os.path.join(out_dir, f"{name}.onnx")
    t0 = time.time()
    axes = {"input": {0: "N"}, "output": {0: "N"}} if dynamic else None
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"],
                      output_names=["output"], do_constant_folding=True, dynamic_axes=axes)
    np.save(os.path.join(out_dir, f"{name}.input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(out_dir, f"{name}.torch.npy"), y.numpy().astype(np.float32))
    mb = os.path.getsize(path) / 2**20
    print(f"{name}: {path} ({mb:.1f} MiB, exported in {time.time() - t0:.1f} s)", flush=True)
    return {"name": name, "onnx": f"{name}.onnx", "input": f"{name}.input.npy",
            "torch_output": f"{name}.torch.npy", "input_name": "input", "output_name": "output",
            "input_shape": list(x.shape), "output_shape": list(y.shape), "opset": opset}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(here, "models"))
    ap.add_argument("--models", nargs="+", default=ALL_MODELS, choices=ALL_MODELS + EXTRA_MODELS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=1,
                    help="static batch size; other than 1: NAME_bN.onnx, not in the manifest")
    ap.add_argument("--dynamic-batch", action="store_true",
                    help="a named first dimension: NAME_dyn.onnx, not in the manifest")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    entries = []
    for name in args.models:
        if name == "bert_base":
            entries.append(export_bert(args.out, args.seed, batch=args.batch,
                                       dynamic=args.dynamic_batch))
        else:
            e = export_torchvision.export(name, args.out, args.seed, 13, 224, args.batch,
                                          args.dynamic_batch)
            e["opset"] = 13
            entries.append(e)
    if args.batch != 1 or args.dynamic_batch:
        return
    # Keep entries of models exported earlier and not redone now.
    manifest_path = os.path.join(args.out, "manifest.json")
    old = []
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = [m for m in json.load(f).get("models", []) if m["name"] not in args.models]
    with open(manifest_path, "w") as f:
        json.dump({"models": old + entries, "seed": args.seed, "torch": torch.__version__,
                   "torchvision": torchvision.__version__}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
