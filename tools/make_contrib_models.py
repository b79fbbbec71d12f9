#!/usr/bin/env python3
"""Writes tests/data/contrib/: models in ONNX Runtime's com.microsoft operators, their inputs,
and the outputs ONNX Runtime computes for them (the oracle of tests/e2e/contrib_models_test.cpp).

Each case is a folder holding model.onnx, in_<input>.npy for each graph input, out_<output>.npy
for each graph output (ONNX Runtime's CPU results) and, where the comparison needs another
bound than the test's default, tolerance.txt. Two kinds of cases:

  op_*        one operator (its variants: masks, caches, rotary forms, quantization layouts),
              built here with onnx.helper;
  bert_*      a tiny BERT (hidden 64, 2 layers, 2 heads) written in PyTorch, exported, then
              fused by onnxruntime.transformers.optimizer (model_type='bert'):
              EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu/FastGelu;
              bert_int4 is it again with its remaining MatMuls quantized by
              onnxruntime.quantization's MatMulNBitsQuantizer (4 bits, block 32);
  gpt2_*      a tiny GPT-2-like decoder (hidden 64, 2 layers) with past key/values, exported
              and fused with model_type='gpt2' (Attention with past and unidirectional,
              FastGelu, SkipLayerNormalization);
  llama_*     a tiny Llama-like decoder in the form onnxruntime-genai's model builder writes
              (written directly with onnx.helper, as the builder does): SimplifiedLayerNormali-
              zation, SkipSimplifiedLayerNormalization, MatMulNBits (int4, block 32),
              GroupQueryAttention with rotary embedding and a KV cache, GatherBlockQuantized
              embeddings; a prompt step and a decode step.

Run (the README beside the data gives the versions it was made with):

  .venv/bin/python tools/make_contrib_models.py [--out tests/data/contrib]
      [--torch-python /usr/bin/python3]

PyTorch runs in --torch-python (Debian's python3-torch: the repo's .venv has no torch) only to
export the two torch models; everything else runs in this interpreter, which needs onnx,
numpy and onnxruntime (tools/requirements.txt) and, for the quantizer, onnx-ir and sympy
(`pip install --target DIR onnx-ir sympy mpmath`, then PYTHONPATH=DIR).
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
NP2T = {
    np.float32: TensorProto.FLOAT,
    np.float16: TensorProto.FLOAT16,
    np.int32: TensorProto.INT32,
    np.int64: TensorProto.INT64,
    np.uint8: TensorProto.UINT8,
}


def ort_run(model, feeds, optimize=False):
    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    return dict(zip(names, s.run(None, feeds)))


def write_case(out_dir, name, model, feeds, tolerance=None, optimize=False):
    """Saves model, inputs and ONNX Runtime's outputs into out_dir/name. Graph outputs left
    untyped take the type of ONNX Runtime's result."""
    outs = ort_run(model, feeds, optimize)
    for o in model.graph.output:
        if not o.type.HasField("tensor_type"):
            v = outs[o.name]
            o.CopyFrom(helper.make_tensor_value_info(o.name, NP2T[v.dtype.type], v.shape))
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        # SimplifiedLayerNormalization is ONNX Runtime's, in the default domain: unknown to onnx.
        if "SimplifiedLayerNormalization" not in str(e):
            raise
    d = out_dir / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    onnx.save(model, str(d / "model.onnx"))
    for k, v in feeds.items():
        np.save(d / f"in_{k}.npy", v)
    for k, v in outs.items():
        np.save(d / f"out_{k}.npy", v)
    if tolerance is not None:
        (d / "tolerance.txt").write_text(f"{tolerance}\n")
    size = sum(f.stat().st_size for f in d.iterdir())
    shapes = ", ".join(f"{k}{list(v.shape)}" for k, v in outs.items())
    print(f"{name}: {size // 1024} KB, outputs {shapes}")


def op_model(op, inputs, outputs, attrs, consts=(), domain=MS):
    """One node. inputs: list of (name, array) or None (left out); names in `consts` become
    initializers, the others graph inputs. outputs: names ('' leaves one out)."""
    names, vis, inits, feeds = [], [], [], {}
    for item in inputs:
        if item is None:
            names.append("")
            continue
        n, a = item
        names.append(n)
        if n in consts:
            inits.append(numpy_helper.from_array(a, n))
        else:
            vis.append(helper.make_tensor_value_info(n, NP2T[a.dtype.type], a.shape))
            feeds[n] = a
    node = helper.make_node(op, names, outputs, domain=domain, name=op.lower(), **attrs)
    outs = [onnx.ValueInfoProto(name=o) for o in outputs if o]
    g = helper.make_graph([node], op, vis, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid(MS, 1)], ir_version=9)
    return m, feeds


def pack(q, bits):
    """Values < 2^bits along the last axis into bytes, low bits first (MatMulNBits' layout)."""
    per = 8 // bits
    pad = (-q.shape[-1]) % per
    q = np.concatenate([q, np.zeros(q.shape[:-1] + (pad,), q.dtype)], -1)
    q = q.reshape(q.shape[:-1] + (-1, per)).astype(np.uint8)
    out = np.zeros(q.shape[:-1], np.uint8)
    for i in range(per):
        out |= q[..., i] << (bits * i)
    return out


# ---- single operators ----

def op_cases(out):
    r = np.random.RandomState(7)
    f = lambda *s: r.randn(*s).astype(np.float32)
    i32 = lambda a: np.array(a, np.int32)

    # Normalizations.
    x, sk, g, b, bias = f(2, 4, 32), f(2, 4, 32), f(32), f(32), f(32)
    m, feeds = op_model("SkipLayerNormalization",
                        [("input", x), ("skip", sk), ("gamma", g), ("beta", b), ("bias", bias)],
                        ["output", "mean", "inv_std_var", "input_skip_bias_sum"], {"epsilon": 1e-5})
    write_case(out, "op_skip_layer_norm", m, feeds)
    m, feeds = op_model("SkipLayerNormalization", [("input", x), ("skip", sk[:1]), ("gamma", g)],
                        ["output", "", "", "input_skip_bias_sum"], {})
    write_case(out, "op_skip_layer_norm_broadcast", m, feeds)
    m, feeds = op_model("SkipSimplifiedLayerNormalization",
                        [("input", x), ("skip", sk), ("gamma", g), ("bias", bias)],
                        ["output", "", "inv_std_var", "input_skip_bias_sum"], {"epsilon": 1e-6})
    write_case(out, "op_skip_simplified_layer_norm", m, feeds)
    m, feeds = op_model("SimplifiedLayerNormalization", [("X", x), ("scale", g)],
                        ["Y", "inv_std_var"], {"epsilon": 1e-6}, domain="")
    write_case(out, "op_simplified_layer_norm", m, feeds)

    # Activations.
    x = f(3, 5, 48) * 3
    for op, extra in [("FastGelu", [("bias", f(48))]), ("FastGelu", []),
                      ("BiasGelu", [("B", f(48))]), ("Gelu", []), ("QuickGelu", [])]:
        attrs = {"alpha": 1.5} if op == "QuickGelu" else {}
        m, feeds = op_model(op, [("X", x)] + extra, ["Y"], attrs)
        write_case(out, f"op_{op.lower()}{'_bias' if extra and op == 'FastGelu' else ''}", m, feeds)
    # BiasAdd has no CPU kernel in ONNX Runtime (CUDA only): tests/unit/contrib_ops_test.cpp
    # checks it against its definition.

    # EmbedLayerNormalization.
    B, S, H = 2, 6, 32
    ids = r.randint(0, 50, (B, S)).astype(np.int32)
    seg = r.randint(0, 2, (B, S)).astype(np.int32)
    mask = i32([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
    m, feeds = op_model("EmbedLayerNormalization",
                        [("input_ids", ids), ("segment_ids", seg), ("word", f(50, H)),
                         ("position", f(16, H)), ("segment", f(2, H)), ("gamma", f(H)),
                         ("beta", f(H)), ("mask", mask)],
                        ["output", "mask_index", "embedding_sum"], {"epsilon": 1e-12},
                        consts={"word", "position", "segment", "gamma", "beta"})
    write_case(out, "op_embed_layer_norm", m, feeds)

    # Attention: fused QKV, each mask form ONNX Runtime's CPU kernel takes, a past, causal.
    B, S, E, N, P = 2, 5, 32, 4, 3
    x, w, wb = f(B, S, E), f(E, 3 * E) * 0.3, f(3 * E)
    past = f(2, B, N, P, E // N)
    masks = {
        "lengths": i32([4, 2]),
        "end_start": i32([5, 4, 1, 0]),
        "raw": i32([[1, 1, 1, 0, 1], [1, 1, 0, 0, 0]]),
        "raw3d": (r.rand(B, S, S) > 0.3).astype(np.int32),
    }
    for name, mk in masks.items():
        m, feeds = op_model("Attention", [("input", x), ("weights", w), ("bias", wb), ("mask", mk)],
                            ["output"], {"num_heads": N}, consts={"weights", "bias"})
        write_case(out, f"op_attention_mask_{name}", m, feeds)
    mk = np.ones((B, P + S), np.int32)
    mk[1, :2] = 0
    m, feeds = op_model("Attention", [("input", x), ("weights", w), ("bias", wb), ("mask", mk),
                                      ("past", past)],
                        ["output", "present"], {"num_heads": N, "unidirectional": 1},
                        consts={"weights", "bias"})
    write_case(out, "op_attention_past_causal", m, feeds)
    m, feeds = op_model("Attention", [("input", x), ("weights", w), None, None, None,
                                      ("attention_bias", f(1, N, S, S))],
                        ["output", "present"], {"num_heads": N, "scale": 0.2})
    write_case(out, "op_attention_bias_runtime_weights", m, feeds)

    # MultiHeadAttention.
    L, D = 7, E
    q, k, v = f(B, S, D), f(B, L, D), f(B, L, D)
    m, feeds = op_model("MultiHeadAttention",
                        [("query", q), ("key", k), ("value", v), ("bias", f(3 * D)),
                         ("key_padding_mask", i32([[1] * 7, [1, 1, 1, 1, 0, 0, 0]]))],
                        ["output", "present_key", "present_value"], {"num_heads": N})
    write_case(out, "op_mha_cross", m, feeds)
    ks, vs = f(B, S, D), f(B, S, D)
    m, feeds = op_model("MultiHeadAttention",
                        [("query", q), ("key", ks), ("value", vs), ("bias", f(3 * D)), None, None,
                         ("past_key", f(B, N, P, D // N)), ("past_value", f(B, N, P, D // N))],
                        ["output", "present_key", "present_value"],
                        {"num_heads": N, "unidirectional": 1})
    write_case(out, "op_mha_self_past", m, feeds)
    m, feeds = op_model("MultiHeadAttention",
                        [("query", q), ("key", f(B, N, L, D // N)), ("value", f(B, N, L, D // N)),
                         ("bias", f(3 * D)), ("key_padding_mask", i32([7, 3])),
                         ("attention_bias", f(B, 1, S, L))],
                        ["output"], {"num_heads": N})
    write_case(out, "op_mha_cross_heads", m, feeds)

    # RotaryEmbedding.
    B, S, N, H, M = 2, 4, 2, 16, 32
    cos = np.cos(r.rand(M, H // 2) * 6).astype(np.float32)
    sin = np.sin(r.rand(M, H // 2) * 6).astype(np.float32)
    pos = r.randint(0, M, (B, S)).astype(np.int64)
    for il in (0, 1):
        m, feeds = op_model("RotaryEmbedding", [("input", f(B, S, N * H)), ("position_ids", pos),
                                                ("cos_cache", cos), ("sin_cache", sin)],
                            ["output"], {"interleaved": il}, consts={"cos_cache", "sin_cache"})
        write_case(out, f"op_rotary_{'interleaved' if il else 'half'}", m, feeds)
    m, feeds = op_model("RotaryEmbedding", [("input", f(B, N, S, H)),
                                            ("position_ids", np.array([5], np.int64)),
                                            ("cos_cache", cos[:, :4]), ("sin_cache", sin[:, :4])],
                        ["output"], {"rotary_embedding_dim": 8, "num_heads": N})
    write_case(out, "op_rotary_partial_bnsh", m, feeds)

    # GroupQueryAttention: prompt (right padded), decode with a past, rotary, window, softcap.
    B, N, Nk, H = 2, 4, 2, 16
    cos, sin = cos[:, :H // 2], sin[:, :H // 2]

    def gqa(name, S, past_len, seqlens, total, attrs, rotary=False, packed=False):
        qkv = [("query", f(B, S, N * H)), ("key", f(B, S, Nk * H)), ("value", f(B, S, Nk * H))]
        if packed:
            qkv = [("query", np.concatenate([a for _, a in qkv], -1)), None, None]
        ins = qkv + ([("past_key", f(B, Nk, past_len, H)), ("past_value", f(B, Nk, past_len, H))]
                     if past_len else [None, None])
        ins += [("seqlens_k", i32(seqlens)), ("total_sequence_length", np.array(total, np.int32))]
        if rotary:
            ins += [("cos_cache", cos), ("sin_cache", sin)]
        m, feeds = op_model("GroupQueryAttention", ins, ["output", "present_key", "present_value"],
                            dict(num_heads=N, kv_num_heads=Nk, **attrs),
                            consts={"cos_cache", "sin_cache"})
        write_case(out, f"op_gqa_{name}", m, feeds)

    gqa("prompt", 5, 0, [4, 2], 5, {})
    gqa("prompt_rotary", 5, 0, [4, 4], 5, {"do_rotary": 1}, rotary=True)
    gqa("decode_rotary_interleaved", 1, 6, [6, 3], 7, {"do_rotary": 1, "rotary_interleaved": 1},
        rotary=True)
    gqa("decode_buffer", 1, 9, [6, 3], 7, {})
    gqa("packed_window_softcap", 5, 0, [4, 4], 5, {"local_window_size": 2, "softcap": 3.0},
        packed=True)

    # MatMulNBits: bits, block sizes, zero point forms, bias; weights constant (prepacked).
    def nbits(name, K, N, bs, bits, zp, bias=False, g_idx=False):
        kb = (K + bs - 1) // bs
        qv = r.randint(0, 2 ** bits, (N, kb, bs))
        Bq = pack(qv, bits)
        sc = (r.rand(N, kb) * 0.1 + 0.01).astype(np.float32)
        ins = [("A", f(3, 4, K)), ("B", Bq), ("scales", sc)]
        if zp == "u8":
            ins.append(("zero_points", pack(r.randint(0, 2 ** bits, (N, kb)), bits)))
        elif zp == "float":
            ins.append(("zero_points", (r.rand(N, kb) * 2 ** bits).astype(np.float32)))
        else:
            ins.append(None)
        ins.append(("g_idx", r.randint(0, kb, K).astype(np.int32)) if g_idx else None)
        if bias:
            ins.append(("bias", f(N)))
        m, feeds = op_model("MatMulNBits", ins, ["Y"],
                            {"K": K, "N": N, "bits": bits, "block_size": bs},
                            consts={"B", "scales", "zero_points", "g_idx", "bias"})
        write_case(out, f"op_matmul_nbits_{name}", m, feeds)

    nbits("4bit_b32", 64, 32, 32, 4, None)
    nbits("4bit_b16_zp", 48, 24, 16, 4, "u8", bias=True)
    nbits("4bit_b128_float_zp", 256, 16, 128, 4, "float")
    nbits("4bit_b256", 512, 8, 256, 4, "u8")
    nbits("4bit_k_tail", 80, 16, 32, 4, "u8")
    nbits("8bit", 64, 16, 32, 8, "u8")
    nbits("2bit", 64, 16, 32, 2, None)
    # g_idx (a permutation of the blocks' scales) with float zero points: with packed ones ONNX
    # Runtime 1.32 ignores the zero points, and polyinfer refuses the node.
    nbits("4bit_g_idx", 64, 16, 32, 4, "float", g_idx=True)

    # GatherBlockQuantized (uint8, 4 bits packed along the rows).
    V, C, bs = 20, 64, 32
    qv = r.randint(0, 16, (V, C))
    m, feeds = op_model("GatherBlockQuantized",
                        [("data", pack(qv, 4)),
                         ("indices", np.array([[3, 0, 19], [-1, 7, 7]], np.int64)),
                         ("scales", (r.rand(V, C // bs) * 0.1).astype(np.float32)),
                         ("zero_points", pack(r.randint(0, 16, (V, C // bs)), 4))],
                        ["output"], {"bits": 4, "block_size": bs, "gather_axis": 0,
                                     "quantize_axis": 1},
                        consts={"data", "scales", "zero_points"})
    write_case(out, "op_gather_block_quantized", m, feeds)


# ---- whole models ----

# Exported by --torch-python: a tiny BERT and a tiny GPT-2-like decoder, written in the form
# of Hugging Face's modules (the patterns ONNX Runtime's fusions look for).
TORCH_EXPORT = r'''
import math, sys, torch
from torch import nn
torch.manual_seed(0)
out_dir = sys.argv[1]
Hd, NH, L, FF = 64, 2, 2, 128

class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(Hd, Hd), nn.Linear(Hd, Hd), nn.Linear(Hd, Hd)
        self.o, self.ln1 = nn.Linear(Hd, Hd), nn.LayerNorm(Hd, eps=1e-12)
        self.i, self.f, self.ln2 = nn.Linear(Hd, FF), nn.Linear(FF, Hd), nn.LayerNorm(Hd, eps=1e-12)
    def heads(self, x):
        return x.view(x.size(0), x.size(1), NH, Hd // NH).permute(0, 2, 1, 3)
    def forward(self, x, ext_mask):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(Hd // NH) + ext_mask
        p = torch.softmax(s, dim=-1)
        c = torch.matmul(p, v).permute(0, 2, 1, 3).contiguous()
        c = c.view(c.size(0), c.size(1), Hd)
        a = self.ln1(self.o(c) + x)
        h = self.i(a)
        h = h * 0.5 * (1.0 + torch.erf(h / math.sqrt(2.0)))
        return self.ln2(self.f(h) + a)

class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word, self.pos = nn.Embedding(50, Hd), nn.Embedding(16, Hd)
        self.typ = nn.Embedding(2, Hd)
        self.ln = nn.LayerNorm(Hd, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer() for _ in range(L)])
    def forward(self, input_ids, attention_mask, token_type_ids):
        pos = torch.arange(input_ids.size(1), dtype=torch.long).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.typ(token_type_ids))
        m = attention_mask.unsqueeze(1).unsqueeze(2).to(torch.float32)
        m = (1.0 - m) * -10000.0
        for l in self.layers:
            x = l(x, m)
        return x

class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.1)
        self.bias = nn.Parameter(torch.randn(nf) * 0.1)
    def forward(self, x):
        size_out = x.size()[:-1] + (self.weight.size(-1),)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(*size_out)

def gelu_new(x):
    u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
    return 0.5 * x * (1.0 + torch.tanh(u))

class GptAttention(nn.Module):
    def __init__(self):
        super().__init__()
        causal = torch.tril(torch.ones(32, 32, dtype=torch.uint8)).view(1, 1, 32, 32)
        self.register_buffer("bias", causal)
        self.register_buffer("masked_bias", torch.tensor(-10000.0))
        self.c_attn, self.c_proj = Conv1D(3 * Hd, Hd), Conv1D(Hd, Hd)
    def split_heads(self, x, k=False):
        x = x.view(x.size()[:-1] + (NH, Hd // NH))
        return x.permute(0, 2, 3, 1) if k else x.permute(0, 2, 1, 3)
    def forward(self, x, layer_past, attention_mask):
        x = self.c_attn(x)
        query, key, value = x.split(Hd, dim=2)
        query, value = self.split_heads(query), self.split_heads(value)
        key = self.split_heads(key, k=True)
        past_key, past_value = layer_past[0].transpose(-2, -1), layer_past[1]
        key = torch.cat((past_key, key), dim=-1)
        value = torch.cat((past_value, value), dim=-2)
        present = torch.stack((key.transpose(-2, -1), value))
        w = torch.matmul(query, key)
        w = w / (float(value.size(-1)) ** 0.5)
        nd, ns = w.size(-2), w.size(-1)
        b = self.bias[:, :, ns - nd:ns, :ns]
        w = torch.where(b.bool(), w, self.masked_bias.to(w.dtype))
        w = w + attention_mask
        w = nn.Softmax(dim=-1)(w)
        a = torch.matmul(w, value)
        a = a.permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size()[:-2] + (a.size(-2) * a.size(-1),))
        return self.c_proj(a), present

class GptBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(Hd, eps=1e-5), nn.LayerNorm(Hd, eps=1e-5)
        self.attn = GptAttention()
        self.c_fc, self.c_proj = Conv1D(FF, Hd), Conv1D(Hd, FF)
    def forward(self, x, layer_past, attention_mask):
        a, present = self.attn(self.ln_1(x), layer_past, attention_mask)
        x = x + a
        m = self.c_proj(gelu_new(self.c_fc(self.ln_2(x))))
        return x + m, present

class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(50, Hd), nn.Embedding(32, Hd)
        self.h = nn.ModuleList([GptBlock() for _ in range(L)])
        self.ln_f = nn.LayerNorm(Hd, eps=1e-5)
    def forward(self, input_ids, position_ids, attention_mask, past_0, past_1):
        x = self.wte(input_ids) + self.wpe(position_ids)
        m = attention_mask.view(attention_mask.size(0), -1)
        m = m.unsqueeze(1).unsqueeze(2).to(torch.float32)
        m = (1.0 - m) * -10000.0
        presents = []
        for blk, past in zip(self.h, (past_0, past_1)):
            x, p = blk(x, past, m)
            presents.append(p)
        return self.ln_f(x), presents[0], presents[1]

with torch.no_grad():
    bert = Bert().eval()
    ids = torch.randint(0, 50, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.long)
    typ = torch.zeros(2, 8, dtype=torch.long)
    torch.onnx.export(bert, (ids, mask, typ), out_dir + "/bert.onnx", opset_version=14,
                      input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["last_hidden_state"],
                      dynamic_axes={n: {0: "batch", 1: "seq"} for n in
                                    ["input_ids", "attention_mask", "token_type_ids",
                                     "last_hidden_state"]})
    gpt = Gpt().eval()
    B, S, P = 2, 3, 4
    ids = torch.randint(0, 50, (B, S))
    pos = torch.arange(P, P + S).unsqueeze(0).repeat(B, 1)
    am = torch.ones(B, P + S)
    past = [torch.randn(2, B, NH, P, Hd // NH) for _ in range(L)]
    torch.onnx.export(gpt, (ids, pos, am, past[0], past[1]), out_dir + "/gpt2.onnx",
                      opset_version=14,
                      input_names=["input_ids", "position_ids", "attention_mask", "past_0",
                                   "past_1"],
                      output_names=["last_state", "present_0", "present_1"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "position_ids": {0: "batch", 1: "seq"},
                                    "attention_mask": {0: "batch", 1: "total"},
                                    "past_0": {1: "batch", 3: "past"},
                                    "past_1": {1: "batch", 3: "past"},
                                    "last_state": {0: "batch", 1: "seq"},
                                    "present_0": {1: "batch", 3: "total"},
                                    "present_1": {1: "batch", 3: "total"}})
'''


def op_types(model):
    counts = {}
    for n in model.graph.node:
        key = (n.domain + "." if n.domain else "") + n.op_type
        counts[key] = counts.get(key, 0) + 1
    return counts


def torch_models(out, torch_python):
    from onnxruntime.transformers import optimizer

    r = np.random.RandomState(11)
    with tempfile.TemporaryDirectory() as tmp:
        script = pathlib.Path(tmp) / "export.py"
        script.write_text(TORCH_EXPORT)
        subprocess.run([torch_python, str(script), tmp], check=True)
        bert = optimizer.optimize_model(f"{tmp}/bert.onnx", model_type="bert", num_heads=2,
                                        hidden_size=64, opt_level=0)
        gpt = optimizer.optimize_model(f"{tmp}/gpt2.onnx", model_type="gpt2", num_heads=2,
                                       hidden_size=64, opt_level=0)
    for m in (bert.model, gpt.model):
        if not any(o.domain == MS for o in m.opset_import):
            m.opset_import.append(helper.make_opsetid(MS, 1))
    print("bert ops:", op_types(bert.model))
    print("gpt2 ops:", op_types(gpt.model))

    B, S = 2, 8
    ids = r.randint(0, 50, (B, S)).astype(np.int64)
    mask = np.ones((B, S), np.int64)
    mask[1, 5:] = 0
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros((B, S), np.int64)}
    int32 = lambda i: i.type.tensor_type.elem_type == TensorProto.INT32
    feeds = {i.name: feeds[i.name].astype(np.int32 if int32(i) else np.int64)
             for i in bert.model.graph.input}
    write_case(out, "bert_fused", bert.model, feeds)

    # The remaining MatMuls (attention output, feed-forward) to 4 bits, block 32, asymmetric.
    from onnxruntime.quantization import matmul_nbits_quantizer as mnq
    q = mnq.MatMulNBitsQuantizer(bert.model, block_size=32, is_symmetric=False,
                                 accuracy_level=0)
    q.process()
    int4 = q.model.model
    print("bert_int4 ops:", op_types(int4))
    write_case(out, "bert_int4", int4, feeds)

    B, S, P = 2, 3, 4
    g = {
        "input_ids": r.randint(0, 50, (B, S)).astype(np.int64),
        "position_ids": np.tile(np.arange(P, P + S), (B, 1)).astype(np.int64),
        "attention_mask": np.ones((B, P + S), np.float32),
        "past_0": r.randn(2, B, 2, P, 32).astype(np.float32),
        "past_1": r.randn(2, B, 2, P, 32).astype(np.float32),
    }
    g["attention_mask"][0, :2] = 0
    feeds = {}
    for i in gpt.model.graph.input:
        want = {TensorProto.INT32: np.int32, TensorProto.INT64: np.int64,
                TensorProto.FLOAT: np.float32}[i.type.tensor_type.elem_type]
        feeds[i.name] = g[i.name].astype(want)
    write_case(out, "gpt2_fused", gpt.model, feeds)


def quantize_rows(w, bits=4, bs=32):
    """w [N, K] -> (packed B [N, kb, bs*bits/8], scales [N, kb], packed zero points, dequantized):
    asymmetric round-to-nearest per block, as the default weight-only quantizer."""
    N, K = w.shape
    kb = (K + bs - 1) // bs
    wp = np.zeros((N, kb * bs), np.float32)
    wp[:, :K] = w
    blocks = wp.reshape(N, kb, bs)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    scale = np.maximum((hi - lo) / (2 ** bits - 1), 1e-8).astype(np.float32)
    zp = np.clip(np.round(-lo / scale), 0, 2 ** bits - 1)
    q = np.clip(np.round(blocks / scale[..., None]) + zp[..., None], 0, 2 ** bits - 1)
    deq = ((q - zp[..., None]) * scale[..., None]).reshape(N, -1)[:, :K]
    packed_zp = pack(zp.astype(np.int64), bits)
    return pack(q.astype(np.int64), bits), scale, packed_zp, deq.astype(np.float32)


def llama_model(out):
    """A tiny Llama-like decoder in onnxruntime-genai's builder form."""
    r = np.random.RandomState(5)
    V, Hd, N, Nk, L, FF, M = 64, 64, 4, 2, 2, 128, 64
    H = Hd // N
    inits, nodes = [], []

    def init(name, a):
        inits.append(numpy_helper.from_array(a, name))
        return name

    def node(op, ins, outs, domain="", **attrs):
        nodes.append(helper.make_node(op, ins, outs, domain=domain, name=outs[0] + "_node",
                                      **attrs))
        return outs[0]

    def mm4(name, x, K, Nout):
        Bq, sc, zp, _ = quantize_rows((r.randn(Nout, K) * 0.15).astype(np.float32))
        return node("MatMulNBits", [x, init(name + ".qweight", Bq), init(name + ".scales", sc),
                                    init(name + ".qzeros", zp)], [name + "_out"], MS,
                    K=K, N=Nout, bits=4, block_size=32, accuracy_level=0)

    inv = 1.0 / (10000 ** (np.arange(0, H, 2) / H))
    ang = np.outer(np.arange(M), inv)
    init("cos_cache", np.cos(ang).astype(np.float32))
    init("sin_cache", np.sin(ang).astype(np.float32))
    # Embeddings: 4-bit blocks of 32 along the hidden axis.
    emb = (r.randn(V, Hd) * 0.5).astype(np.float32)
    Bq, sc, zp, _ = quantize_rows(emb)
    node("GatherBlockQuantized", [init("embed.qweight", Bq.reshape(V, -1)), "input_ids",
                                  init("embed.scales", sc), init("embed.qzeros", zp)],
         ["embeds"], MS, bits=4, block_size=32, gather_axis=0, quantize_axis=1)
    # seqlens_k = sum(attention_mask) - 1, total = attention_mask's length: as the builder.
    node("ReduceSum", ["attention_mask", init("one_axis", np.array([1], np.int64))],
         ["mask_sum"], keepdims=0)
    node("Sub", ["mask_sum", init("one_i64", np.array(1, np.int64))], ["seqlens_i64"])
    node("Cast", ["seqlens_i64"], ["seqlens_k"], to=TensorProto.INT32)
    node("Shape", ["attention_mask"], ["mask_shape"])
    node("Gather", ["mask_shape", init("idx1", np.array(1, np.int64))], ["total_i64"], axis=0)
    node("Cast", ["total_i64"], ["total_seq"], to=TensorProto.INT32)

    x, skip = "embeds", None
    outputs = []
    for l in range(L):
        p = f"layers.{l}"
        g1 = init(p + ".ln1", (1 + 0.1 * r.randn(Hd)).astype(np.float32))
        if skip is None:
            hn = node("SimplifiedLayerNormalization", [x, g1], [p + ".ln1_out"], axis=-1,
                      epsilon=1e-6)
            resid = x
        else:
            hn = node("SkipSimplifiedLayerNormalization", [x, skip, g1],
                      [p + ".ln1_out", "", "", p + ".resid1"], MS, epsilon=1e-6)
            resid = p + ".resid1"
        qn = mm4(p + ".q", hn, Hd, N * H)
        kn, vn = mm4(p + ".k", hn, Hd, Nk * H), mm4(p + ".v", hn, Hd, Nk * H)
        attn = node("GroupQueryAttention",
                    [qn, kn, vn, f"past_key_values.{l}.key", f"past_key_values.{l}.value",
                     "seqlens_k", "total_seq", "cos_cache", "sin_cache"],
                    [p + ".attn", f"present.{l}.key", f"present.{l}.value"], MS,
                    num_heads=N, kv_num_heads=Nk, do_rotary=1, rotary_interleaved=0,
                    local_window_size=-1)
        outputs += [f"present.{l}.key", f"present.{l}.value"]
        o = mm4(p + ".o", attn, N * H, Hd)
        g2 = init(p + ".ln2", (1 + 0.1 * r.randn(Hd)).astype(np.float32))
        hn2 = node("SkipSimplifiedLayerNormalization", [o, resid, g2],
                   [p + ".ln2_out", "", "", p + ".resid2"], MS, epsilon=1e-6)
        gate, up = mm4(p + ".gate", hn2, Hd, FF), mm4(p + ".up", hn2, Hd, FF)
        sg = node("Sigmoid", [gate], [p + ".sig"])
        act = node("Mul", [gate, sg], [p + ".silu"])
        prod = node("Mul", [act, up], [p + ".prod"])
        x, skip = mm4(p + ".down", prod, FF, Hd), p + ".resid2"
    gf = init("norm.weight", (1 + 0.1 * r.randn(Hd)).astype(np.float32))
    node("SkipSimplifiedLayerNormalization", [x, skip, gf], ["final_norm"], MS, epsilon=1e-6)
    w_head = (r.randn(V, Hd) * 0.2).astype(np.float32)
    node("MatMul", ["final_norm", init("lm_head.weight", w_head.T.copy())], ["logits"])

    ins = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
           helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total"])]
    for l in range(L):
        for kv in ("key", "value"):
            ins.append(helper.make_tensor_value_info(f"past_key_values.{l}.{kv}", TensorProto.FLOAT,
                                                     ["batch", Nk, "past", H]))
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", V])]
    outs += [helper.make_tensor_value_info(o, TensorProto.FLOAT, ["batch", Nk, "total", H])
             for o in outputs]
    g = helper.make_graph(nodes, "llama_tiny", ins, outs, inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid(MS, 1)], ir_version=9)
    print("llama ops:", op_types(model))

    # Prompt: 2 sequences of 6 (the second right-padded to 4), no past.
    B, S = 2, 6
    ids = r.randint(0, V, (B, S)).astype(np.int64)
    mask = np.ones((B, S), np.int64)
    mask[1, 4:] = 0
    feeds = {"input_ids": ids, "attention_mask": mask}
    for l in range(L):
        for kv in ("key", "value"):
            feeds[f"past_key_values.{l}.{kv}"] = np.zeros((B, Nk, 0, H), np.float32)
    write_case(out, "llama_prompt", model, feeds)
    # Decode: one token each after the prompt (ORT's own present from it); the padded
    # sequence's mask keeps its pads, so its new token lands at row 4 of the cache.
    prompt_out = ort_run(model, feeds)
    mask2 = np.ones((B, S + 1), np.int64)
    mask2[1, 4:S] = 0
    feeds2 = {"input_ids": r.randint(0, V, (B, 1)).astype(np.int64), "attention_mask": mask2}
    for l in range(L):
        for kv in ("key", "value"):
            feeds2[f"past_key_values.{l}.{kv}"] = prompt_out[f"present.{l}.{kv}"]
    write_case(out, "llama_decode", model, feeds2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = pathlib.Path(__file__).resolve().parent.parent
    ap.add_argument("--out", default=str(root / "tests/data/contrib"))
    ap.add_argument("--torch-python", default="/usr/bin/python3")
    ap.add_argument("--only", choices=["ops", "torch", "llama"], help="write one kind of case")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.only in (None, "ops"):
        op_cases(out)
    if a.only in (None, "llama"):
        llama_model(out)
    if a.only in (None, "torch"):
        torch_models(out, a.torch_python)


if __name__ == "__main__":
    sys.exit(main())
