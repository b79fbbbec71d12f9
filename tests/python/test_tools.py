"""polyinfer's tools from Python (python/polyinfer/_tools.py): each returns the CLI's --json as a
dict, and a failure raises the error class of the CLI's exit status."""

import os

import numpy as np
import pytest

import polyinfer

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DIGITS = os.path.join(ROOT, "examples", "digits", "digits_cnn.onnx")


def test_doctor_lists_this_machine_and_its_providers():
    d = polyinfer.doctor()
    assert d["cpu"]["threads"] >= d["cpu"]["cores"] >= 1
    cpu = [p for p in d["providers"] if p["name"] == "cpu"]
    assert cpu and cpu[0]["usable"]


def test_info_plan_bench_compare_quantize(tmp_path):
    info = polyinfer.info(DIGITS)
    assert [i["name"] for i in info["inputs"]] == ["pixels"]

    targets = polyinfer.plan()
    assert len(targets) > 5 and all("id" in t for t in targets)
    p = polyinfer.plan(DIGITS, target=[targets[0]["id"], targets[1]["id"]], batch=4)
    assert [t["id"] for t in p["targets"]] == [targets[0]["id"], targets[1]["id"]]
    assert p["flops"] > 0

    b = polyinfer.bench(DIGITS, threads=1, iterations=5, profile=True)
    assert b["iterations"] == 5 and b["latency_ms"]["median"] > 0
    assert b["threads"] == 1

    c = polyinfer.compare(DIGITS, DIGITS, samples=2)
    assert c["samples"] == 2
    assert all(o["max_abs"] == 0 and o["cosine"] > 0.9999 for o in c["outputs"])

    out = tmp_path / "digits_int8.onnx"
    q = polyinfer.quantize(DIGITS, out, dynamic=True)
    assert q["mode"] == "dynamic" and os.path.exists(out)
    # The quantized model runs, and stays close to the float one on the test split.
    x = np.load(os.path.join(ROOT, "examples", "digits", "test_x.npy"))
    (want,) = polyinfer.InferenceSession(DIGITS).run(None, {"pixels": x})
    (got,) = polyinfer.InferenceSession(str(out)).run(None, {"pixels": x})
    assert np.mean(got.argmax(1) == want.argmax(1)) > 0.95


def test_bench_profile_shares_count_control_flow_apart(tmp_path):
    """A Loop's own row (its body's bookkeeping) is control flow, not a reference kernel; the
    body's nodes are profiled with their kernels. The shares are fractions of the kernel time."""
    import onnx
    from onnx import TensorProto, helper

    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Relu", ["v_in"], ["r"]),
         helper.make_node("Add", ["r", "v_in"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [4, 64])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [4, 64])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["m", "", "v0"], ["v"], body=body)], "loop",
        [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [4, 64])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, [4, 64])],
        [helper.make_tensor("m", TensorProto.INT64, [], [5])])
    path = tmp_path / "loop.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    p = polyinfer.bench(path, threads=1, iterations=3, profile=True)["profile"]
    nodes = p["nodes"]
    total = sum(n["total_ms"] for n in nodes)
    loop = [n for n in nodes if n["op"] == "Loop"]
    assert len(loop) == 1 and loop[0]["impl"] == "reference"
    assert p["control_flow_nodes"] == 1
    assert abs(p["control_flow_share"] - loop[0]["total_ms"] / total) < 1e-6
    ref = [n for n in nodes if n["impl"].startswith("reference") and n["op"] != "Loop"]
    assert p["reference_nodes"] == len(ref)
    assert abs(p["reference_share"] - sum(n["total_ms"] for n in ref) / total) < 1e-6
    assert any("(in " in n["node"] for n in nodes), "the body's nodes are listed"


def test_tool_errors_keep_their_class():
    with pytest.raises(polyinfer.Io, match="nowhere.onnx"):
        polyinfer.info("nowhere.onnx")
    with pytest.raises(polyinfer.InvalidArgument, match="no-such-chip"):
        polyinfer.plan(DIGITS, target="no-such-chip")
