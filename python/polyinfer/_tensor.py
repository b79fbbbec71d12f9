"""polyinfer.Tensor: an array on a device, and the eager operators on it (polyinfer.ops)."""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import numpy as np

from . import _polyinfer
from ._session import _array, _output


class Tensor:
    """An array on a device (``"cpu"``, ``"vulkan:0"``, ``"cuda:0"``): polyinfer's C++ Tensor.

    Made from anything ``numpy.asarray`` takes (the elements are copied; ``dtype`` as numpy
    reads it), moved with ``to(device)``, read back with ``numpy()``. The eager operators
    (``polyinfer.ops``, and ``+ - * / @``, unary ``-`` and ``abs()`` on tensors) run on the
    operands' device with the kernels a session would use there, in ONNX's semantics (numpy
    broadcasting, MatMul's batch broadcasting). A device with no kernel for an operator or dtype
    raises ``polyinfer.UnsupportedOp``: the work never moves to the CPU behind your back.

        x = polyinfer.Tensor([[1, -2], [3, -4]], dtype="float32").to("vulkan:0")
        y = polyinfer.ops.relu(x * x)     # computed on vulkan:0
        y.numpy()                          # array([[ 1.,  4.], [ 9., 16.]], dtype=float32)

    A Python number or array next to a tensor becomes a tensor of its dtype on its device.
    """

    __slots__ = ("_t",)

    def __init__(self, data: Any, dtype: Any = None, device: Optional[str] = None) -> None:
        if isinstance(data, Tensor):
            t = data._t
        else:
            a, code = _array("tensor", np.asarray(data, dtype=dtype), None)
            t = _polyinfer.Tensor.from_array(a, code)
        self._t = t.to(device) if device is not None else t

    @classmethod
    def _wrap(cls, t: Any) -> Tensor:
        obj = object.__new__(cls)
        obj._t = t
        return obj

    def to(self, device: str) -> Tensor:
        """This tensor's elements on ``device`` ("cpu", "vulkan:N", "cuda:N"); the same
        tensor when it is there already."""
        return Tensor._wrap(self._t.to(device))

    def numpy(self) -> np.ndarray:
        """The elements as a new numpy array on the host (an ml_dtypes array for bfloat16,
        float8 and the other types numpy lacks)."""
        return _output(self._t.numpy())

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self._t.shape)

    @property
    def ndim(self) -> int:
        return len(self._t.shape)

    @property
    def dtype(self) -> Any:
        """The element type as numpy (or ml_dtypes) names it."""
        from ._session import _ML_CODES, _NUMPY

        code = self._t.dtype
        if code in _NUMPY:
            return _NUMPY[code]
        name = next((n for n, c in _ML_CODES.items() if c == code), None)
        if name is None:
            return self._t.describe().split("[")[0]
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))

    @property
    def device(self) -> str:
        return self._t.device

    def __repr__(self) -> str:
        return f"polyinfer.Tensor({self._t.describe()}, device={self.device!r})"

    # The eager operators (polyinfer.ops).
    def __add__(self, other: Any) -> Tensor:
        return _binary("add", self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _binary("add", other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _binary("sub", self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _binary("sub", other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _binary("mul", self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _binary("mul", other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _binary("div", self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _binary("div", other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _binary("matmul", self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _binary("matmul", other, self)

    def __neg__(self) -> Tensor:
        return _unary("neg", self)

    def __abs__(self) -> Tensor:
        return _unary("abs", self)


Operand = Union[Tensor, np.ndarray, float, int]


def _binary(op: str, a: Operand, b: Operand) -> Tensor:
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"polyinfer.ops.{op} needs a polyinfer.Tensor operand; make one with "
                        f"polyinfer.Tensor(array, device=...)")
    like = a if isinstance(a, Tensor) else b
    ta = a if isinstance(a, Tensor) else Tensor(a, dtype=like.dtype, device=like.device)
    tb = b if isinstance(b, Tensor) else Tensor(b, dtype=like.dtype, device=like.device)
    return Tensor._wrap(_polyinfer.binary(op, ta._t, tb._t))


def _unary(op: str, x: Tensor) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"polyinfer.ops.{op} takes a polyinfer.Tensor, not "
                        f"{type(x).__name__}; make one with polyinfer.Tensor(array, device=...)")
    return Tensor._wrap(_polyinfer.unary(op, x._t))
