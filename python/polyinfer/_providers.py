"""Provider names and options: ONNX Runtime's spellings to polyinfer's, and back.

polyinfer names its providers ``cpu``, ``cuda``, ``vulkan``, ``opencl`` (``vulkan:1`` for a device
by its number); ONNX Runtime names its execution providers ``CPUExecutionProvider`` and so on.
Both are accepted wherever providers are given. Options come as ONNX Runtime takes them, a
``(name, {key: value})`` pair or a ``provider_options`` list beside the names, and become
polyinfer's ``name:key=value`` text (``polyinfer providers`` lists every key).
"""

from . import _errors

# ONNX Runtime's execution providers that mean the same as one of polyinfer's.
ORT_ALIASES = {
    "CPUExecutionProvider": "cpu",
    "CUDAExecutionProvider": "cuda",
    "VulkanExecutionProvider": "vulkan",
}
_TO_ORT = {v: k for k, v in ORT_ALIASES.items()}

# ONNX Runtime providers polyinfer has no counterpart of: named in the error, with what to use.
_NO_COUNTERPART = {
    "TensorrtExecutionProvider": "cuda",
    "OpenVINOExecutionProvider": "cpu",
    "DnnlExecutionProvider": "cpu (it runs oneDNN)",
    "ROCMExecutionProvider": "vulkan",
    "MIGraphXExecutionProvider": "vulkan",
    "DmlExecutionProvider": "vulkan",
    "CoreMLExecutionProvider": "cpu",
    "QNNExecutionProvider": "cpu",
}


def ort_name(name):
    """The ONNX Runtime spelling of a polyinfer provider name, where there is one."""
    base = name.split(":", 1)[0]
    return _TO_ORT.get(base, name)


def _option_text(name, options):
    parts = [name]
    for key, value in options.items():
        if key == "device_id":
            # ONNX Runtime's device choice: polyinfer numbers the device after the name.
            parts.insert(1, str(value))
            continue
        if isinstance(value, bool):
            value = "on" if value else "off"
        parts.append(f"{key}={value}")
    return ":".join(parts)


def resolve(providers, provider_options=None):
    """Returns (polyinfer provider texts, whether ONNX Runtime names were used).

    ``providers`` holds names or ``(name, options)`` pairs; ``provider_options`` (ONNX
    Runtime's other form) a dict per name.
    """
    if providers is None:
        return ["cpu"], False
    if isinstance(providers, str):
        providers = [providers]
    if provider_options is not None and len(provider_options) != len(providers):
        raise _errors.InvalidArgument(
            f"provider_options has {len(provider_options)} entries for {len(providers)} "
            "providers; give one dict per provider, or pass (name, options) pairs")
    out = []
    used_ort_names = False
    for i, entry in enumerate(providers):
        options = {}
        if isinstance(entry, (tuple, list)):
            if len(entry) != 2 or not isinstance(entry[1], dict):
                raise _errors.InvalidArgument(
                    f"provider entry {entry!r}: give a name or a (name, {{key: value}}) pair")
            entry, options = entry
        if provider_options is not None:
            options = {**provider_options[i], **options}
        if not isinstance(entry, str):
            raise _errors.InvalidArgument(f"provider {entry!r} is not a name")
        if entry in ORT_ALIASES:
            used_ort_names = True
            name = ORT_ALIASES[entry]
        elif entry in _NO_COUNTERPART:
            raise _errors.InvalidArgument(
                f"polyinfer has no {entry}; use {_NO_COUNTERPART[entry]!r} "
                f"(polyinfer.get_available_providers() lists what runs here)")
        else:
            name = entry
        out.append(_option_text(name, options) if options else name)
    return out, used_ort_names
