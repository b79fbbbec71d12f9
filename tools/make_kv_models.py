#!/usr/bin/env python3
"""Writes tests/data/kv_decoder/: the models of tests/e2e/kv_cache_test.cpp, which runs dynamic
shapes through one session (a decoder's prefill and then decode steps with a growing KV cache,
an encoder at several batch and sequence sizes).

  decoder.onnx   a tiny GPT-2-like decoder (hidden 32, 2 heads of 16, 2 layers, MLP 64,
                 vocabulary 64, 256 positions) in the layout optimum exports for
                 text-generation-with-past: inputs input_ids [batch, seq], attention_mask
                 [batch, total], position_ids [batch, seq] and past_key_values.<i>.key/.value
                 [batch, 2, past, 16]; outputs logits [batch, seq, 64] and present.<i>.key/.value
                 [batch, 2, total, 16]. The causal mask is computed from the shapes (query i
                 sees keys up to past + i), so a prefill with an empty past and one step per
                 token give the same logits as the whole sequence at once.
  tokens.npy     int64 [1, 208]: the sequence the test feeds (8 prompt tokens, 200 steps).
  logits.npy     float32 [1, 208, 64]: PyTorch's logits for the whole sequence in one pass
                 (empty past): the oracle for every step.
  encoder.onnx   a tiny BERT-like encoder (hidden 32, 2 heads, 2 layers, 32 positions) with
                 dynamic batch and sequence: input_ids and attention_mask [batch, seq] ->
                 last_hidden_state [batch, seq, 32].

Weights are random (seeded). Needs PyTorch and numpy; run with Debian's python3-torch (the
repo's .venv has no torch), from the repository root:

  /usr/bin/python3 tools/make_kv_models.py [--out tests/data/kv_decoder]

Made with PyTorch 1.13.1 (opset 17 export), numpy 1.24.
"""
import argparse
import math
import os

import numpy as np
import torch
from torch import nn

HD, NH, L, FF, V, POS = 32, 2, 2, 64, 64, 256
D = HD // NH
PROMPT, STEPS = 8, 200


class DecoderBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(HD), nn.LayerNorm(HD)
        self.q, self.k, self.v, self.o = (nn.Linear(HD, HD) for _ in range(4))
        self.fc, self.proj = nn.Linear(HD, FF), nn.Linear(FF, HD)

    def heads(self, x):
        return x.view(x.size(0), x.size(1), NH, D).transpose(1, 2)

    def forward(self, x, past_k, past_v, mask):
        h = self.ln_1(x)
        k = torch.cat((past_k, self.heads(self.k(h))), dim=2)
        v = torch.cat((past_v, self.heads(self.v(h))), dim=2)
        s = torch.matmul(self.heads(self.q(h)), k.transpose(-1, -2)) / math.sqrt(D)
        s = torch.where(mask, s, torch.tensor(-1e9, dtype=s.dtype))
        c = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2)
        x = x + self.o(c.reshape(c.size(0), c.size(1), HD))
        x = x + self.proj(nn.functional.gelu(self.fc(self.ln_2(x)), approximate="tanh"))
        return x, k, v


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, HD), nn.Embedding(POS, HD)
        self.blocks = nn.ModuleList([DecoderBlock() for _ in range(L)])
        self.ln_f, self.head = nn.LayerNorm(HD), nn.Linear(HD, V, bias=False)

    def forward(self, input_ids, attention_mask, position_ids, *past):
        seq, past_len = input_ids.size(1), past[0].size(2)
        x = self.wte(input_ids) + self.wpe(position_ids)
        q_pos = torch.arange(seq).unsqueeze(1) + past_len
        k_pos = torch.arange(past_len + seq).unsqueeze(0)
        mask = (k_pos <= q_pos).unsqueeze(0).unsqueeze(0)
        mask = mask & attention_mask.bool().unsqueeze(1).unsqueeze(2)
        presents = []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, past[2 * i], past[2 * i + 1], mask)
            presents += [k, v]
        return (self.head(self.ln_f(x)), *presents)


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(HD, HD) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(HD, eps=1e-12), nn.LayerNorm(HD, eps=1e-12)
        self.i, self.f = nn.Linear(HD, FF), nn.Linear(FF, HD)

    def heads(self, x):
        return x.view(x.size(0), x.size(1), NH, D).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D) + ext_mask
        c = torch.matmul(torch.softmax(s, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        a = self.ln1(self.o(c.view(c.size(0), c.size(1), HD)) + x)
        h = self.i(a)
        h = h * 0.5 * (1.0 + torch.erf(h / math.sqrt(2.0)))
        return self.ln2(self.f(h) + a)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.word, self.pos = nn.Embedding(V, HD), nn.Embedding(32, HD)
        self.ln = nn.LayerNorm(HD, eps=1e-12)
        self.layers = nn.ModuleList([EncoderLayer() for _ in range(L)])

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.size(1), dtype=torch.long).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos))
        m = (1.0 - attention_mask.unsqueeze(1).unsqueeze(2).to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, m)
        return x


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="tests/data/kv_decoder")
    out = ap.parse_args().out
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    names = [f"past_key_values.{i}.{kv}" for i in range(L) for kv in ("key", "value")]
    present = [f"present.{i}.{kv}" for i in range(L) for kv in ("key", "value")]
    with torch.no_grad():
        dec = Decoder().eval()
        # Traced at past 4, seq 3, batch 2: no size is 1, so none is specialized away.
        B, S, P = 2, 3, 4
        ids = torch.randint(0, V, (B, S))
        am = torch.ones(B, P + S, dtype=torch.long)
        pos = torch.arange(P, P + S).unsqueeze(0).repeat(B, 1)
        past = [torch.randn(B, NH, P, D) for _ in names]
        axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
                "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
        axes.update({n: {0: "batch", 2: "past"} for n in names})
        axes.update({n: {0: "batch", 2: "total"} for n in present})
        torch.onnx.export(dec, (ids, am, pos, *past), f"{out}/decoder.onnx", opset_version=17,
                          input_names=["input_ids", "attention_mask", "position_ids", *names],
                          output_names=["logits", *present], dynamic_axes=axes)

        T = PROMPT + STEPS
        tokens = torch.randint(0, V, (1, T))
        empty = [torch.zeros(1, NH, 0, D) for _ in names]
        logits = dec(tokens, torch.ones(1, T, dtype=torch.long),
                     torch.arange(T).unsqueeze(0), *empty)[0]
        np.save(f"{out}/tokens.npy", tokens.numpy().astype(np.int64))
        np.save(f"{out}/logits.npy", logits.numpy().astype(np.float32))

        enc = Encoder().eval()
        ids = torch.randint(0, V, (2, 8))
        torch.onnx.export(enc, (ids, torch.ones(2, 8, dtype=torch.long)), f"{out}/encoder.onnx",
                          opset_version=17, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={n: {0: "batch", 1: "seq"} for n in
                                        ["input_ids", "attention_mask", "last_hidden_state"]})
    for f in sorted(os.listdir(out)):
        print(f"{out}/{f}: {os.path.getsize(os.path.join(out, f))} bytes")


if __name__ == "__main__":
    main()
