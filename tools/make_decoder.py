#!/usr/bin/env python3
"""Writes a decoder-shaped ONNX model (one decode step of a Llama-style transformer with a KV
cache) with random weights stored as external data — the model `plan` sizes LLMs on.

    .venv/bin/python tools/make_decoder.py OUT_DIR --preset 7b      # 6.74 B parameters, fp16
    .venv/bin/python tools/make_decoder.py OUT_DIR --layers 2 --hidden 256 --heads 4 --ffn 688 \
        --vocab 1000

Per layer: RMSNorm (Pow, ReduceMean, Add, Sqrt, Div, Mul), q/k/v/o projections, attention over
the past keys and values concatenated with the new ones (past_key_<i>/past_value_<i>: [1, heads,
past, head_dim], past a symbolic dimension), a SiLU-gated MLP (gate, up, down) and the residual
Adds; then a final RMSNorm and the LM head. No rotary embedding: it is elementwise and does not
change the sizes. Inputs: input_ids [1, 1] (int64); outputs: logits and present_key/value_<i>.

Weights are random: one random block (seeded) repeated, so a 13 GB model is written at disk
speed; `plan` never reads them (it needs shapes only), and they are not meant to be run for
accuracy. Needs numpy and onnx (the repo's .venv, tools/pyenv.sh).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

PRESETS = {
    # Llama-2-7B's shapes: 32 layers, hidden 4096, 32 heads, MLP 11008, vocabulary 32000.
    "7b": dict(layers=32, hidden=4096, heads=32, ffn=11008, vocab=32000),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=688)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--dtype", choices=["float16", "float32"], default="float16")
    ap.add_argument("--name", default="decoder")
    args = ap.parse_args()
    cfg = dict(layers=args.layers, hidden=args.hidden, heads=args.heads, ffn=args.ffn,
               vocab=args.vocab)
    if args.preset:
        cfg = PRESETS[args.preset]
    L, H, NH, F, V = cfg["layers"], cfg["hidden"], cfg["heads"], cfg["ffn"], cfg["vocab"]
    assert H % NH == 0, "hidden must be a multiple of heads"
    D = H // NH
    np_dtype = np.float16 if args.dtype == "float16" else np.float32
    elem = TensorProto.FLOAT16 if args.dtype == "float16" else TensorProto.FLOAT

    os.makedirs(args.out_dir, exist_ok=True)
    data_name = args.name + ".weights"
    data_path = os.path.join(args.out_dir, data_name)
    rng = np.random.default_rng(0)
    block = (rng.standard_normal(1 << 22) * 0.02).astype(np_dtype).tobytes()  # 4 Mi elements
    inits, nodes = [], []
    offset = [0]

    with open(data_path, "wb") as f:
        def weight(name, shape):
            nbytes = int(np.prod(shape)) * np.dtype(np_dtype).itemsize
            left = nbytes
            while left > 0:
                chunk = block[: min(left, len(block))]
                f.write(chunk)
                left -= len(chunk)
            tp = TensorProto()
            tp.name = name
            tp.data_type = elem
            tp.dims.extend(shape)
            tp.data_location = TensorProto.EXTERNAL
            for k, v in (("location", data_name), ("offset", str(offset[0])),
                         ("length", str(nbytes))):
                e = tp.external_data.add()
                e.key, e.value = k, v
            offset[0] += nbytes
            inits.append(tp)
            return name

        def small(name, values, dtype):
            inits.append(helper.make_tensor(name, dtype, [len(values)], values))
            return name

        def const_scalar(name, value):
            inits.append(helper.make_tensor(name, elem, [], [value]))
            return name

        def node(op, ins, outs, **attrs):
            nodes.append(helper.make_node(op, ins, outs, name=outs[0], **attrs))
            return outs[0]

        eps = const_scalar("eps", 1e-5)
        two = const_scalar("two", 2.0)
        shape_q = small("shape_heads", [1, 1, NH, D], TensorProto.INT64)
        shape_h = small("shape_hidden", [1, 1, H], TensorProto.INT64)
        scale = const_scalar("attn_scale", 1.0 / float(np.sqrt(D)))

        def rmsnorm(x, w, tag):
            sq = node("Pow", [x, two], [tag + ".sq"])
            ms = node("ReduceMean", [sq], [tag + ".ms"], axes=[-1], keepdims=1)
            ad = node("Add", [ms, eps], [tag + ".add"])
            rt = node("Sqrt", [ad], [tag + ".rt"])
            nx = node("Div", [x, rt], [tag + ".nx"])
            return node("Mul", [nx, w], [tag + ".out"])

        x = node("Gather", [weight("embed", [V, H]), "input_ids"], ["h0"], axis=0)  # [1,1,H]
        inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 1])]
        outputs = []
        for i in range(L):
            p = f"l{i}"
            n1 = rmsnorm(x, weight(p + ".norm1", [H]), p + ".norm1")
            heads = {}
            for w in ("q", "k", "v"):
                proj = node("MatMul", [n1, weight(f"{p}.{w}", [H, H])], [f"{p}.{w}proj"])
                r = node("Reshape", [proj, shape_q], [f"{p}.{w}r"])
                heads[w] = node("Transpose", [r], [f"{p}.{w}t"], perm=[0, 2, 1, 3])  # [1,NH,1,D]
            past_k, past_v = f"past_key_{i}", f"past_value_{i}"
            for nm in (past_k, past_v):
                inputs.append(helper.make_tensor_value_info(nm, elem, [1, NH, "past", D]))
            k = node("Concat", [past_k, heads["k"]], [f"present_key_{i}"], axis=2)
            v = node("Concat", [past_v, heads["v"]], [f"present_value_{i}"], axis=2)
            for nm in (k, v):
                outputs.append(helper.make_tensor_value_info(nm, elem, [1, NH, "past_plus_1", D]))
            kt = node("Transpose", [k], [p + ".kT"], perm=[0, 1, 3, 2])
            s = node("MatMul", [heads["q"], kt], [p + ".scores"])
            s = node("Mul", [s, scale], [p + ".scaled"])
            a = node("Softmax", [s], [p + ".probs"], axis=-1)
            o = node("MatMul", [a, v], [p + ".ctx"])                  # [1,NH,1,D]
            o = node("Transpose", [o], [p + ".ctxT"], perm=[0, 2, 1, 3])
            o = node("Reshape", [o, shape_h], [p + ".ctxr"])
            o = node("MatMul", [o, weight(p + ".o", [H, H])], [p + ".out"])
            x = node("Add", [x, o], [p + ".res1"])
            n2 = rmsnorm(x, weight(p + ".norm2", [H]), p + ".norm2")
            g = node("MatMul", [n2, weight(p + ".gate", [H, F])], [p + ".gateproj"])
            sg = node("Sigmoid", [g], [p + ".sig"])
            g = node("Mul", [g, sg], [p + ".silu"])
            u = node("MatMul", [n2, weight(p + ".up", [H, F])], [p + ".upproj"])
            m = node("Mul", [g, u], [p + ".gated"])
            d = node("MatMul", [m, weight(p + ".down", [F, H])], [p + ".downproj"])
            x = node("Add", [x, d], [p + ".res2"])
        x = rmsnorm(x, weight("norm_final", [H]), "final")
        node("MatMul", [x, weight("lm_head", [H, V])], ["logits"])
        outputs.insert(0, helper.make_tensor_value_info("logits", elem, [1, 1, V]))

    graph = helper.make_graph(nodes, args.name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="polyinfer tools/make_decoder.py")
    model.ir_version = 8
    path = os.path.join(args.out_dir, args.name + ".onnx")
    onnx.save(model, path)
    params = sum(int(np.prod(t.dims)) for t in inits if t.data_type == elem and len(t.dims) > 0)
    print(f"{path}: {L} layers, hidden {H}, {NH} heads, MLP {F}, vocabulary {V}: "
          f"{params:,} parameters ({args.dtype}), weights in {data_path} "
          f"({offset[0] / 1e9:.2f} GB)")


if __name__ == "__main__":
    main()
