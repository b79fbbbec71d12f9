"""polyinfer.Tensor and polyinfer.ops (python/polyinfer/_tensor.py, python/ext/tensor.cpp):
numpy in and out, devices, the eager operators against numpy, and their errors."""

import numpy as np
import pytest

import polyinfer
from polyinfer import ops


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_round_trip_keeps_values_dtypes_and_owns_its_copy():
    for a in [rand(2, 3), np.arange(6, dtype=np.int64).reshape(3, 2),
              np.array([True, False]), np.float32(2.5)]:
        t = polyinfer.Tensor(a)
        assert t.shape == np.shape(a) and t.dtype == np.asarray(a).dtype and t.device == "cpu"
        np.testing.assert_array_equal(t.numpy(), a)
    src = rand(4)
    t = polyinfer.Tensor(src)
    src[:] = 0  # the tensor holds a copy
    assert np.all(t.numpy() != 0)
    out = t.numpy()
    out[:] = 7  # and numpy() gives one too
    assert np.all(t.numpy() != 7)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert "float32[4]" in repr(t)


def test_types_numpy_lacks_cross_as_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
    t = polyinfer.Tensor(a)
    assert t.dtype == a.dtype
    np.testing.assert_array_equal(t.numpy(), a)


def test_eager_operators_match_numpy():
    a, b = rand(2, 3, 4, seed=1), rand(3, 1, seed=2)
    ta, tb = polyinfer.Tensor(a), polyinfer.Tensor(b[:, :1] * np.ones((3, 4), np.float32))
    bb = b[:, :1] * np.ones((3, 4), np.float32)
    np.testing.assert_allclose((ta + tb).numpy(), a + bb, rtol=1e-6)
    np.testing.assert_allclose((ta - tb).numpy(), a - bb, rtol=1e-6)
    np.testing.assert_allclose((ta * tb).numpy(), a * bb, rtol=1e-6)
    np.testing.assert_allclose(ops.div(ta, tb).numpy(), a / bb, rtol=1e-6)
    m = rand(2, 4, 5, seed=3)
    np.testing.assert_allclose((ta @ polyinfer.Tensor(m)).numpy(), a @ m, rtol=1e-5, atol=1e-6)
    # Numbers and arrays beside a tensor take its dtype and device.
    np.testing.assert_allclose((2 * ta - 1).numpy(), 2 * a - 1, rtol=1e-6)
    np.testing.assert_allclose((1 / (abs(ta) + 1)).numpy(), 1 / (np.abs(a) + 1), rtol=1e-6)
    for name, ref in [("relu", lambda x: np.maximum(x, 0)),
                      ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("tanh", np.tanh),
                      ("exp", np.exp), ("neg", np.negative), ("abs", np.abs),
                      ("sqrt", lambda x: np.sqrt(np.abs(x)))]:
        x = polyinfer.Tensor(np.abs(a)) if name == "sqrt" else ta
        got = getattr(ops, name)(x)
        assert got.device == "cpu" and got.shape == a.shape, name
        np.testing.assert_allclose(got.numpy(), ref(a), rtol=2e-6, atol=1e-7, err_msg=name)
    ints = polyinfer.Tensor(np.array([7, -7], np.int64))
    np.testing.assert_array_equal(ops.div(ints, 2).numpy(), [3, -3])  # ONNX Div truncates


def test_operator_errors_name_the_problem():
    a = polyinfer.Tensor(rand(2, 3))
    with pytest.raises(polyinfer.ShapeMismatch):
        a + polyinfer.Tensor(rand(4))
    with pytest.raises(ValueError):  # ShapeMismatch is also a ValueError
        a @ polyinfer.Tensor(rand(2, 3))
    with pytest.raises(polyinfer.InvalidArgument, match="dtype|float32|int64"):
        a + polyinfer.Tensor(np.ones((2, 3), np.int64))
    with pytest.raises(TypeError, match="polyinfer.Tensor"):
        ops.relu(np.ones(3, np.float32))
    with pytest.raises(polyinfer.Error, match="nowhere"):
        a.to("nowhere:0")


def test_to_another_device_computes_there():
    names = {p["name"]: p for p in polyinfer._polyinfer.available_providers()}
    vk = names.get("vulkan")
    if not vk or not vk["usable"]:
        pytest.skip(f"no usable Vulkan device here: {vk['reason'] if vk else 'not built'}")
    x = rand(3, 5, seed=4)
    t = polyinfer.Tensor(x).to("vulkan:0")
    assert t.device == "vulkan:0"
    y = ops.relu(t * t)
    assert y.device == "vulkan:0", "the result stays where the operands are"
    np.testing.assert_allclose(y.numpy(), np.maximum(x * x, 0), rtol=1e-6)
    back = y.to("cpu")
    assert back.device == "cpu"
    np.testing.assert_allclose(back.numpy(), y.numpy())
    with pytest.raises(polyinfer.InvalidArgument, match="vulkan:0 but operand 1 is on cpu"):
        t + polyinfer.Tensor(x)  # one operand on each device
