"""polyinfer: run ONNX models fast on whatever chip is here, and say where they ran.

A drop-in for ONNX Runtime's Python API::

    import polyinfer as ort
    sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    outputs = sess.run(None, {sess.get_inputs()[0].name: x})
    print(sess.placement["summary"])      # polyinfer's own: where every node ran

polyinfer's tools are functions returning the CLI's JSON as dicts: doctor(), info(), plan(),
bench(), compare(), quantize(). polyinfer.Tensor is an array on a device (to("vulkan:0")), and
polyinfer.ops runs operators eagerly where the tensors are.

Errors are polyinfer.Error subclasses (InvalidArgument, ShapeMismatch, ...), which also derive
from the built-in exception one would catch for them (ValueError, OSError, ...).
"""

from ._errors import (Error, InvalidArgument, InvalidModel, Internal, Io, NoSuchFile,
                      OutOfMemory, ProviderUnavailable, ShapeMismatch, UnsupportedOp)
from . import _polyinfer
from ._tools import bench, compare, doctor, info, plan, quantize
from ._tensor import Tensor
from . import ops
from ._session import (ExecutionMode, GraphOptimizationLevel, InferenceSession, ModelMetadata,
                       NodeArg, RunOptions, SessionOptions, get_all_providers,
                       get_available_providers, get_device)

__version__ = _polyinfer.version()

__all__ = [
    "Error", "InvalidArgument", "InvalidModel", "Internal", "Io", "NoSuchFile", "OutOfMemory",
    "ProviderUnavailable", "ShapeMismatch", "UnsupportedOp", "ExecutionMode",
    "GraphOptimizationLevel", "InferenceSession", "ModelMetadata", "NodeArg", "RunOptions",
    "SessionOptions", "get_all_providers", "get_available_providers", "get_device", "bench",
    "compare", "doctor", "info", "plan", "quantize", "Tensor", "ops",
]
