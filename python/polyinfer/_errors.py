"""polyinfer's exceptions: one class per error code of the C++ library (status.h).

Each also derives from the built-in exception a caller would catch for it, so that code written
for ONNX Runtime (which raises its own classes) or for plain Python keeps working:
``except ValueError`` catches a wrong input, ``except FileNotFoundError`` a missing model file.
"""


class Error(Exception):
    """Base class of every error polyinfer raises; the message names the thing and the fix."""


class InvalidModel(Error, ValueError):
    """The model is not valid ONNX, or breaks the spec."""


class InvalidArgument(Error, ValueError):
    """A bad option, input name, dtype or value from the caller."""


class UnsupportedOp(Error, NotImplementedError):
    """No provider in the session's list can run a node."""


class ProviderUnavailable(Error, RuntimeError):
    """A requested provider is not usable on this machine (``polyinfer.doctor()`` says why)."""


class ShapeMismatch(Error, ValueError):
    """An input has a shape the model does not allow."""


class OutOfMemory(Error, MemoryError):
    """An allocation failed or would exceed a limit."""


class Io(Error, OSError):
    """A file could not be read or written."""


class NoSuchFile(Io, FileNotFoundError):
    """The model file does not exist."""


class Internal(Error, RuntimeError):
    """A bug in polyinfer: please report it with the model."""
