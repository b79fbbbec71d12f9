"""Eager operators on polyinfer.Tensor, run where the tensors are (polyinfer/ops.h).

Each runs the kernels a session would use on the operands' device, in ONNX's semantics (opset
17): numpy broadcasting for the binary operators, MatMul's batch broadcasting. Operands must be
of one dtype and on one device (a Python number or array next to a tensor is made one of its
dtype, on its device); shapes that do not broadcast raise polyinfer.ShapeMismatch, an operator
or dtype the device has no kernel for raises polyinfer.UnsupportedOp. The first call for an
(operator, dtypes, shapes, device) builds a one-node session; later calls reuse it.
"""

from ._tensor import Operand, Tensor, _binary, _unary


def add(a: Operand, b: Operand) -> Tensor:
    """a + b"""
    return _binary("add", a, b)


def sub(a: Operand, b: Operand) -> Tensor:
    """a - b"""
    return _binary("sub", a, b)


def mul(a: Operand, b: Operand) -> Tensor:
    """a * b, element-wise"""
    return _binary("mul", a, b)


def div(a: Operand, b: Operand) -> Tensor:
    """a / b (integer division truncates, as ONNX's Div)"""
    return _binary("div", a, b)


def matmul(a: Operand, b: Operand) -> Tensor:
    """a @ b, as numpy.matmul"""
    return _binary("matmul", a, b)


def relu(x: Tensor) -> Tensor:
    """max(x, 0)"""
    return _unary("relu", x)


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + exp(-x))"""
    return _unary("sigmoid", x)


def tanh(x: Tensor) -> Tensor:
    """tanh(x)"""
    return _unary("tanh", x)


def exp(x: Tensor) -> Tensor:
    """exp(x)"""
    return _unary("exp", x)


def neg(x: Tensor) -> Tensor:
    """-x"""
    return _unary("neg", x)


def abs(x: Tensor) -> Tensor:  # noqa: A001 (the operator's name)
    """|x|"""
    return _unary("abs", x)


def sqrt(x: Tensor) -> Tensor:
    """sqrt(x)"""
    return _unary("sqrt", x)


__all__ = ["add", "sub", "mul", "div", "matmul", "relu", "sigmoid", "tanh", "exp", "neg", "abs",
           "sqrt", "Tensor"]
