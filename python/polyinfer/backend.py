"""polyinfer as an ONNX backend (onnx.backend.base.Backend), for the ONNX backend test runner.

    import onnx.backend.test
    import polyinfer.backend
    tests = onnx.backend.test.BackendTest(polyinfer.backend, __name__)

``prepare(model, device)`` makes an InferenceSession of the ModelProto on the device's provider
("CPU": cpu, "CUDA": cuda); ``run(inputs)`` takes the inputs in the graph's order (or a dict)
and returns the outputs in the graph's order. Needs the ``onnx`` package (not a dependency of
polyinfer itself).
"""

from onnx.backend.base import Backend, BackendRep

from ._session import InferenceSession, get_available_providers

_PROVIDERS = {"CPU": "cpu", "CUDA": "cuda"}


class PolyinferRep(BackendRep):
    def __init__(self, session):
        self._session = session
        self._names = [a.name for a in session.get_inputs()]

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            feeds = inputs
        else:
            if not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            feeds = dict(zip(self._names, inputs))
        return tuple(self._session.run(None, feeds))


class PolyinferBackend(Backend):
    @classmethod
    def supports_device(cls, device):
        name = _PROVIDERS.get(str(device).split(":")[0].upper())
        return name == "cpu" or (name == "cuda" and
                                 "CUDAExecutionProvider" in get_available_providers())

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        provider = _PROVIDERS.get(str(device).split(":")[0].upper(), str(device).lower())
        data = model if isinstance(model, (bytes, str)) else model.SerializeToString()
        return PolyinferRep(InferenceSession(data, providers=[provider]))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)


prepare = PolyinferBackend.prepare
run_model = PolyinferBackend.run_model
supports_device = PolyinferBackend.supports_device
is_compatible = PolyinferBackend.is_compatible
