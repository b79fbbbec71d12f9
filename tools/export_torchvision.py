#!/usr/bin/python3
"""Exports torchvision image classifiers to ONNX with random weights, for polyinfer's tests.

Why: real-model acceptance (tools/compare_ort.py) and benchmarks need the layer mix of real
networks (ResNet bottlenecks, depthwise convs, channel shuffles, dense concatenations), and
nothing may be downloaded: so the architectures come from Debian's torchvision with
weights=None and a fixed seed. The numbers are meaningless as classifications but exercise the
same kernels at the same shapes as the trained models.

For each model NAME it writes into OUT_DIR:
    NAME.onnx          opset 13, batch 1, input "input" float32 [1,3,224,224], output "output"
    NAME.input.npy     a fixed random input (seeded)
    NAME.torch.npy     PyTorch's output for that input (a second reference besides ORT)
and a manifest.json listing them with the versions used.

Run with Debian's Python (apt-get install python3-torch python3-torchvision):
    /usr/bin/python3 tools/export_torchvision.py OUT_DIR [--models resnet50 mobilenet_v2 ...]
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision

DEFAULT_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_0", "shufflenet_v2_x1_0",
                  "densenet121"]


def export(name, out_dir, seed, opset, size, batch=1, dynamic=False):
    """Writes NAME.onnx (NAME_b<batch>.onnx for a batch other than 1; NAME_dyn.onnx, its first
    dimension a named one "N", when dynamic) with its seeded input and PyTorch's output."""
    ctor = getattr(torchvision.models, name, None)
    if ctor is None:
        sys.exit(f"export_torchvision: error: torchvision {torchvision.__version__} has no model "
                 f"'{name}'")
    torch.manual_seed(seed)
    model = ctor(weights=None).eval()
    x = torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        y = model(x)
    if batch != 1:
        name = f"{name}_b{batch}"
    if dynamic:
        name = f"{name}_dyn"
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
            "input_shape": list(x.shape), "output_shape": list(y.shape)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS,
                    help=f"torchvision model names (default: {' '.join(DEFAULT_MODELS)})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--size", type=int, default=224, help="input height and width")
    args = ap.parse_args()

    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    entries = [export(m, args.out_dir, args.seed, args.opset, args.size) for m in args.models]
    with open(os.path.join(args.out_dir, "manifest.json"), "w") as f:
        json.dump({"models": entries, "seed": args.seed, "opset": args.opset,
                   "torch": torch.__version__, "torchvision": torchvision.__version__}, f,
                  indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
