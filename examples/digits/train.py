#!/usr/bin/python3
"""Trains a small CNN on scikit-learn's 8x8 digits and exports it to ONNX.

Why: polyinfer's end-to-end tests need a small *real* model with real test data and a known
accuracy, made without downloading anything. The digits set ships inside scikit-learn, so this
script makes examples/digits/{digits_cnn.onnx,test_x.npy,test_y.npy,expected.json} from scratch.

Run with Debian's Python (python3-torch, python3-sklearn):
    /usr/bin/python3 examples/digits/train.py [--out DIR]
"""

import argparse
import json
import os
import random

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

SEED = 0


class DigitsCNN(nn.Module):
    """Conv(1->16)+ReLU, Conv(16->32)+ReLU, MaxPool 2x2, Flatten, Linear(512->64)+ReLU,
    Linear(64->10)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(dim=1)
    return float((pred == y).float().mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                    help="output folder (default: beside this script)")
    ap.add_argument("--epochs", type=int, default=60)
    args = ap.parse_args()

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(1)  # deterministic and polite on a shared 2-core machine

    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0)[:, None, :, :]  # [N,1,8,8] in [0,1]
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, stratify=y, random_state=SEED)

    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    xv, yv = torch.from_numpy(x_test), torch.from_numpy(y_test)

    model = DigitsCNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(SEED)
    batch = 64
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(xt), batch):
            idx = perm[i:i + batch]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
        if (epoch + 1) % 10 == 0:
            print(f"epoch {epoch + 1}: loss {loss.item():.4f} "
                  f"train acc {accuracy(model, xt, yt):.4f} test acc {accuracy(model, xv, yv):.4f}")

    test_acc = accuracy(model, xv, yv)
    print(f"test accuracy: {test_acc:.4f} ({len(y_test)} samples)")

    os.makedirs(args.out, exist_ok=True)
    model.eval()
    onnx_path = os.path.join(args.out, "digits_cnn.onnx")
    torch.onnx.export(
        model, xv[:1], onnx_path, opset_version=13,
        input_names=["pixels"], output_names=["logits"],
        dynamic_axes={"pixels": {0: "batch"}, "logits": {0: "batch"}},
        do_constant_folding=True)
    np.save(os.path.join(args.out, "test_x.npy"), np.ascontiguousarray(x_test, dtype=np.float32))
    np.save(os.path.join(args.out, "test_y.npy"), np.ascontiguousarray(y_test, dtype=np.int64))
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump({"test_accuracy": round(test_acc, 6), "num_test_samples": int(len(y_test)),
                   "input": "pixels", "output": "logits", "seed": SEED,
                   "torch": torch.__version__}, f, indent=2)
        f.write("\n")
    print(f"wrote {onnx_path}, test_x.npy, test_y.npy, expected.json in {args.out}")


if __name__ == "__main__":
    main()
