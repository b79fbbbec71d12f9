"""polyinfer's ONNX Runtime-compatible Python API against onnxruntime itself, on the same models
and inputs in the same process: metadata, outputs (tensors, strings, sequences of maps), options,
providers, and every bad input of issue 38 as a clear exception."""

import os
import threading
import warnings

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

import polyinfer

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DIGITS = os.path.join(ROOT, "examples", "digits", "digits_cnn.onnx")
SKLEARN = os.path.join(ROOT, "tests", "data", "sklearn")


def digits_x():
    return np.load(os.path.join(ROOT, "examples", "digits", "test_x.npy"))


def both(model, **kwargs):
    return (polyinfer.InferenceSession(model, **kwargs),
            onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]))


def identity_model():
    """y = Identity(x); z = x + 1: an output that is an input's memory."""
    g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"]),
         helper.make_node("Add", ["x", "one"], ["z"])],
        "identity",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="polyinfer-tests")
    m.ir_version = 8
    return m.SerializeToString()


def test_digits_outputs_and_accuracy_match_onnxruntime():
    ours, ort = both(DIGITS)
    x = digits_x()
    (got,) = ours.run(None, {"pixels": x})
    (want,) = ort.run(None, {"pixels": x})
    assert got.dtype == np.float32 and got.shape == want.shape == (len(x), 10)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    labels = np.load(os.path.join(ROOT, "examples", "digits", "test_y.npy"))
    assert abs(float(np.mean(got.argmax(1) == labels)) - 0.984444) < 1e-6


def test_inputs_outputs_and_metadata_read_as_onnxruntime_gives_them():
    for model in [DIGITS] + [os.path.join(SKLEARN, m, "model.onnx")
                             for m in ("rf_zipmap", "logreg_zipmap_strings", "label_encoder")]:
        ours, ort = both(model)
        for a, b in [(ours.get_inputs(), ort.get_inputs()), (ours.get_outputs(),
                                                               ort.get_outputs())]:
            assert [(x.name, x.type, x.shape) for x in a] == [(x.name, x.type, x.shape)
                                                             for x in b], model
        mine, theirs = ours.get_modelmeta(), ort.get_modelmeta()
        for field in ("producer_name", "graph_name", "domain", "description", "version",
                      "custom_metadata_map"):
            assert getattr(mine, field) == getattr(theirs, field), field


@pytest.mark.parametrize("name", ["rf_zipmap", "logreg_zipmap_strings", "label_encoder",
                                  "column_transformer"])
def test_strings_and_sequences_of_maps_come_out_as_onnxruntime_gives_them(name):
    folder = os.path.join(SKLEARN, name)
    ours, ort = both(os.path.join(folder, "model.onnx"))
    feeds = {}
    for arg in ort.get_inputs():
        a = np.load(os.path.join(folder, f"in_{arg.name}.npy"), allow_pickle=True)
        feeds[arg.name] = a
    got, want = ours.run(None, feeds), ort.run(None, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, list):
            assert isinstance(g, list) and len(g) == len(w)
            for gm, wm in zip(g, w):
                assert list(gm.keys()) == list(wm.keys())
                np.testing.assert_allclose(list(gm.values()), list(wm.values()), rtol=1e-5,
                                           atol=1e-6)
        elif w.dtype == object:
            assert g.dtype == object and g.shape == w.shape and g.tolist() == w.tolist()
        else:
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def dict_vectorizer_model(key_type, vocabulary):
    """DictVectorizer(map(key_type, float)) -> [1, len(vocabulary)] floats."""
    attr = ({"string_vocabulary": vocabulary} if key_type == TensorProto.STRING
            else {"int64_vocabulary": vocabulary})
    map_type = helper.make_map_type_proto(key_type, helper.make_tensor_type_proto(
        TensorProto.FLOAT, None))
    g = helper.make_graph(
        [helper.make_node("DictVectorizer", ["m"], ["y"], domain="ai.onnx.ml", **attr)], "dv",
        [helper.make_value_info("m", map_type)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, len(vocabulary)])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("ai.onnx.ml", 3)])
    m.ir_version = 8
    return m.SerializeToString()


def test_map_inputs_are_dicts_as_onnxruntime_takes_them():
    for key_type, vocab, feed in [
            (TensorProto.STRING, ["a", "b", "c"], {"c": 3.5, "a": -1.0}),
            (TensorProto.INT64, [7, 3, 11], {11: 2.0, 7: 0.25, 3: -4.0})]:
        ours, ort = both(dict_vectorizer_model(key_type, vocab))
        assert ours.get_inputs()[0].type == ort.get_inputs()[0].type
        (got,), (want,) = ours.run(None, {"m": feed}), ort.run(None, {"m": feed})
        np.testing.assert_array_equal(got, want)
    # An empty dict is an empty map (ONNX Runtime refuses to run one): all zeros.
    (got,) = ours.run(None, {"m": {}})
    np.testing.assert_array_equal(got, np.zeros((1, 3), np.float32))
    with pytest.raises(polyinfer.InvalidArgument, match="give a dict"):
        ours.run(None, {"m": [1.0, 2.0]})


def test_sequence_of_maps_input():
    """A list of dicts for a seq(map(int64, float)) input, returned as the model's output."""
    seq_map = helper.make_sequence_type_proto(helper.make_map_type_proto(
        TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, None)))
    g = helper.make_graph([], "pass", [helper.make_value_info("s", seq_map)],
                          [helper.make_value_info("s", seq_map)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    sess = polyinfer.InferenceSession(m.SerializeToString())
    assert sess.get_inputs()[0].type == "seq(map(int64,tensor(float)))"
    feed = [{1: 0.5, 2: 1.5}, {}, {9: -2.0}]
    (got,) = sess.run(None, {"s": feed})
    assert got == feed


def test_outputs_are_the_callers_own():
    s = polyinfer.InferenceSession(identity_model())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y, z = s.run(None, {"x": x})
    x[0, 0] = 100  # the input may change after the run: y is a copy of it
    assert y[0, 0] == 0 and z[0, 0] == 1
    y[1, 1] = -5  # outputs are writable, and writing one changes nothing else
    z += 1
    y2, z2 = s.run(["y", "z"], {"x": np.zeros((2, 3), np.float32)})
    assert y2.sum() == 0 and (z2 == 1).all()
    assert y[1, 1] == -5 and z[0, 0] == 2


def test_arrays_of_any_layout_and_byte_order_are_read_right():
    s = polyinfer.InferenceSession(identity_model())
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    strided = base[:, ::2]  # not contiguous
    assert not strided.flags.c_contiguous
    (y,) = s.run(["z"], {"x": strided})
    np.testing.assert_array_equal(y, strided + 1)
    big = np.arange(6, dtype=">f4").reshape(2, 3)  # big-endian
    (y,) = s.run(["z"], {"x": big})
    np.testing.assert_array_equal(y, big.astype(np.float32) + 1)
    fortran = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    (y,) = s.run(["y"], {"x": fortran})
    np.testing.assert_array_equal(y, fortran)
    (y,) = s.run(["y"], {"x": base[:2, :3]})
    np.testing.assert_array_equal(y, base[:2, :3])


def test_bad_inputs_raise_clear_errors():
    s = polyinfer.InferenceSession(DIGITS)
    x = digits_x()[:2]
    with pytest.raises(polyinfer.InvalidArgument, match=r"Actual: \(tensor\(double\)\).*"
                       r"expected: \(tensor\(float\)\).*astype\(numpy.float32\)"):
        s.run(None, {"pixels": x.astype(np.float64)})
    with pytest.raises(ValueError, match="pixels"):  # wrong rank
        s.run(None, {"pixels": x.reshape(2, 64)})
    with pytest.raises(ValueError, match="pixels"):  # wrong dim
        s.run(None, {"pixels": np.zeros((2, 1, 8, 9), np.float32)})
    with pytest.raises(polyinfer.InvalidArgument, match="pixels"):  # missing
        s.run(None, {})
    with pytest.raises(polyinfer.InvalidArgument, match="pixel"):  # unknown input name
        s.run(None, {"pixel": x})
    with pytest.raises(polyinfer.InvalidArgument, match="'probs'.*logits"):
        s.run(["probs"], {"pixels": x})
    (one,) = s.run("logits", {"pixels": x})  # one output name as a str
    assert one.shape == (2, 10)
    with pytest.raises(polyinfer.InvalidArgument, match="must be a tensor"):  # None, not optional
        s.run(None, {"pixels": None})
    with pytest.raises(FileNotFoundError, match="nowhere.onnx"):
        polyinfer.InferenceSession("nowhere.onnx")
    with pytest.raises(polyinfer.InvalidModel):
        polyinfer.InferenceSession(b"these bytes are not a model")
    with pytest.raises(polyinfer.InvalidArgument, match="path or the model's bytes"):
        polyinfer.InferenceSession(42)
    s.close()
    with pytest.raises(polyinfer.InvalidArgument, match="closed"):
        s.run(None, {"pixels": x})


def test_one_session_from_eight_threads():
    s = polyinfer.InferenceSession(DIGITS)
    x = digits_x()
    (want,) = s.run(None, {"pixels": x})
    errors = []

    def worker(k):
        try:
            for i in range(k, len(x), 8):
                (y,) = s.run(None, {"pixels": x[i:i + 1]})
                np.testing.assert_allclose(y[0], want[i], rtol=1e-5, atol=1e-5)
        except Exception as e:  # noqa: BLE001 — reported below with the thread's number
            errors.append((k, e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_providers_by_either_name():
    assert "CPUExecutionProvider" in polyinfer.get_available_providers()
    s = polyinfer.InferenceSession(DIGITS, providers=[("CPUExecutionProvider", {})])
    assert s.get_providers() == ["CPUExecutionProvider"]
    assert s.placement["providers"][0]["name"] == "cpu"
    assert all(n["provider"] == "cpu" for n in s.placement["nodes"])
    with pytest.raises(polyinfer.InvalidArgument, match="TensorrtExecutionProvider.*cuda"):
        polyinfer.InferenceSession(DIGITS, providers=["TensorrtExecutionProvider"])
    with pytest.raises(polyinfer.InvalidArgument, match="winograd|option"):
        polyinfer.InferenceSession(DIGITS, providers=[("cpu", {"no_such_option": 1})])
    if "CUDAExecutionProvider" not in polyinfer.get_available_providers():
        # polyinfer's names: a provider that cannot run here is an error that says why.
        with pytest.raises(polyinfer.ProviderUnavailable):
            polyinfer.InferenceSession(DIGITS, providers=["cuda"])
        # ONNX Runtime's names: skipped as ONNX Runtime does, with a warning.
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = polyinfer.InferenceSession(
                DIGITS, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        assert any("cuda" in str(m.message) for m in w)
        assert s.get_providers() == ["CPUExecutionProvider"]


def test_session_options(tmp_path):
    o = polyinfer.SessionOptions()
    o.intra_op_num_threads = 1
    o.graph_optimization_level = polyinfer.GraphOptimizationLevel.ORT_ENABLE_BASIC
    o.optimized_model_filepath = str(tmp_path / "opt.onnx")
    s = polyinfer.InferenceSession(DIGITS, sess_options=o)
    assert s.get_session_options() is o
    x = digits_x()[:16]
    (got,) = s.run(None, {"pixels": x})
    # Level 1 stays standard ONNX: ONNX Runtime runs what it wrote, to the same outputs.
    ort = onnxruntime.InferenceSession(str(tmp_path / "opt.onnx"),
                                       providers=["CPUExecutionProvider"])
    (want,) = ort.run(None, {"pixels": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    onnx.checker.check_model(str(tmp_path / "opt.onnx"))
    o.graph_optimization_level = 7
    with pytest.raises(polyinfer.InvalidArgument, match="graph_optimization_level"):
        polyinfer.InferenceSession(DIGITS, sess_options=o)
    o = polyinfer.SessionOptions()
    o.intra_op_num_threads = -1
    with pytest.raises(polyinfer.InvalidArgument, match="intra_op_num_threads"):
        polyinfer.InferenceSession(DIGITS, sess_options=o)


def test_model_from_bytes_and_creation_times():
    with open(DIGITS, "rb") as f:
        s = polyinfer.InferenceSession(f.read())
    t = s.creation_times
    assert t["total_ms"] >= t["kernels_ms"] > 0
    assert s.get_modelmeta().producer_name == onnx.load(DIGITS).producer_name
    assert polyinfer.__version__.count(".") == 2
