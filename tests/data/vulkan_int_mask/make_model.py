#!/usr/bin/python3
"""Writes the tiny BERT with an int64 attention mask that tests/unit/vulkan_models_test.cpp and
tests/e2e/vulkan_cli.sh run strictly on Vulkan (issue 42: "A BERT encoder fed an int64 attention
mask cannot run strictly on Vulkan").

The model is written in the form of Hugging Face's BertModel (hidden 32, 2 layers, 2 heads,
vocabulary 50) and exported by torch.onnx at opset 14 with dynamic batch and sequence, so its
graph has what such exports carry besides the float math: int64 inputs, the Shape -> Gather ->
Unsqueeze -> Concat chains of the dynamic Reshapes, Range (position ids), Slice and Expand of an
int64 buffer (token type ids), and the mask built as newer Hugging Face code builds it: expanded
to [batch, 1, seq, seq], compared (Equal), cast to float and to bool (Not, Where with the float
minimum), plus the int64 Equal/Where/ConstantOfShape that torch writes for Expand.

Files: model.onnx, input_ids.npy and attention_mask.npy (batch 2, sequence 8, the second row
padded after 5 tokens) and last_hidden_state.npy (PyTorch's output for them).

Run with Debian's Python (python3-torch 1.13):
    /usr/bin/python3 tests/data/vulkan_int_mask/make_model.py
"""

import math
import os

import numpy as np
import torch
from torch import nn

HIDDEN, HEADS, LAYERS, FFN, VOCAB, POSITIONS = 32, 2, 2, 64, 50, 16


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(HIDDEN, HIDDEN) for _ in range(3))
        self.o, self.ln1 = nn.Linear(HIDDEN, HIDDEN), nn.LayerNorm(HIDDEN, eps=1e-12)
        self.i, self.f = nn.Linear(HIDDEN, FFN), nn.Linear(FFN, HIDDEN)
        self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12)

    def heads(self, x):
        return x.view(x.size()[:-1] + (HEADS, HIDDEN // HEADS)).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HIDDEN // HEADS) + mask
        c = torch.matmul(torch.softmax(s, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        c = c.view(c.size()[:-2] + (HIDDEN,))
        a = self.ln1(self.o(c) + x)
        return self.ln2(self.f(nn.functional.gelu(self.i(a))) + a)


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(POSITIONS, HIDDEN)
        self.typ = nn.Embedding(2, HIDDEN)
        self.ln = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])
        self.register_buffer("token_type_ids", torch.zeros((1, POSITIONS), dtype=torch.long))

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.size()
        pos = torch.arange(s, dtype=torch.long).unsqueeze(0)
        typ = self.token_type_ids[:, :s].expand(b, s)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.typ(typ))
        m = attention_mask[:, None, None, :].expand(b, 1, s, s)
        inverted = 1.0 - m.to(torch.float32)
        mask = inverted.masked_fill(~(m == 1), torch.finfo(torch.float32).min)
        for layer in self.layers:
            x = layer(x, mask)
        return x


def main():
    out = os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(0)
    model = Bert().eval()
    ids = torch.randint(0, VOCAB, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 5:] = 0
    with torch.no_grad():
        y = model(ids, mask)
        torch.onnx.export(model, (ids, mask), os.path.join(out, "model.onnx"), opset_version=14,
                          input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                        "attention_mask": {0: "batch", 1: "seq"},
                                        "last_hidden_state": {0: "batch", 1: "seq"}})
    np.save(os.path.join(out, "input_ids.npy"), ids.numpy().astype(np.int64))
    np.save(os.path.join(out, "attention_mask.npy"), mask.numpy().astype(np.int64))
    np.save(os.path.join(out, "last_hidden_state.npy"), y.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
