"""InferenceSession and its options, as ONNX Runtime's Python API has them.

A program written for ``onnxruntime`` runs unchanged with ``import polyinfer as ort``: the same
classes, arguments, return values and provider names. What polyinfer adds is on the same
objects: ``InferenceSession.placement`` (where every node ran, and why), ``creation_times``,
``close()``, and ``SessionOptions.precision`` / ``allow_fallback``.
"""

from __future__ import annotations

import enum
import json
import os
import warnings

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _errors, _providers
from . import _polyinfer as _ext

# A provider by name ("cpu", "CPUExecutionProvider"), or with its options.
Provider = Union[str, Tuple[str, Dict[str, Any]]]

# ONNX element types (TensorProto.DataType) by polyinfer's dtype code, as ONNX Runtime writes them
# in NodeArg.type ("tensor(float)").
_TYPE_NAMES = {
    1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
    8: "string", 9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64",
    16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2",
    20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1", 24: "float8e8m0",
    25: "uint2", 26: "int2",
}
# The numpy dtype of each code numpy has a type for; strings are arrays of str objects.
_NUMPY = {code: np.dtype(t) for code, t in {
    1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
    7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
}.items()}
_STRING = 8
# ml_dtypes' names of the types numpy lacks, by ONNX type code.
_ML_CODES = {
    "bfloat16": 16, "float8_e4m3fn": 17, "float8_e4m3fnuz": 18, "float8_e5m2": 19,
    "float8_e5m2fnuz": 20, "uint4": 21, "int4": 22, "float4_e2m1fn": 23, "float8_e8m0fnu": 24,
    "uint2": 25, "int2": 26, "float6_e2m3fn": 27, "float6_e3m2fn": 28,
}


class GraphOptimizationLevel(enum.IntEnum):
    """ONNX Runtime's levels; polyinfer's optimizer levels 0-3 (docs/optimizer.md)."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Accepted for compatibility: polyinfer runs a graph's nodes in order on intra-op threads."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


def _level(value):
    level = int(value)
    if level == GraphOptimizationLevel.ORT_ENABLE_ALL:
        return 3
    if not 0 <= level <= 3:
        raise _errors.InvalidArgument(
            f"graph_optimization_level {value!r}: use a GraphOptimizationLevel "
            "(ORT_DISABLE_ALL, ORT_ENABLE_BASIC, ORT_ENABLE_EXTENDED, ORT_ENABLE_ALL)")
    return level


class SessionOptions:
    """Options of an InferenceSession, with ONNX Runtime's attribute names.

    intra_op_num_threads      threads a run uses; 0: one per physical core
    graph_optimization_level  a GraphOptimizationLevel (default ORT_ENABLE_ALL)
    optimized_model_filepath  where to write the optimized model ("" for nowhere)
    precision                 polyinfer: "fp32" (default), "fp16" or "bf16"
    allow_fallback            polyinfer: a listed provider that is not usable here is skipped
                              (and reported) instead of failing the session
    enable_profiling          time every node (see InferenceSession.profile())

    inter_op_num_threads, execution_mode, log_severity_level, log_verbosity_level,
    enable_cpu_mem_arena and enable_mem_pattern are accepted and have no effect: polyinfer runs
    nodes in order and always plans its memory.
    """

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.optimized_model_filepath = ""
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_profiling = False
        self.profile_file_prefix = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.use_deterministic_compute = False
        self.precision = "fp32"
        self.allow_fallback = False
        self._config = {}

    def add_session_config_entry(self, key: str, value: str) -> None:
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key: str) -> str:
        if key not in self._config:
            raise _errors.InvalidArgument(f"no session config entry {key!r}")
        return self._config[key]


class RunOptions:
    """Accepted for compatibility with ONNX Runtime's run(); polyinfer reads none of it."""

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self.terminate = False


class NodeArg:
    """A model input or output: ``name``, ``type`` ("tensor(float)") and ``shape`` (ints, the
    names of symbolic dimensions, None where a dimension is not known)."""

    def __init__(self, spec):
        self.name = spec["name"]
        self.shape = spec["shape"] if spec["shape"] is not None else []
        self.type = _type_text(spec)
        self._dtype = spec["dtype"]
        self._key_dtype = spec["key_dtype"]
        self._kind = spec["kind"]

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def _type_text(spec):
    elem = f"tensor({_TYPE_NAMES.get(spec['dtype'], 'undefined')})"
    kind = spec["kind"]
    if spec["key_dtype"]:
        elem = f"map({_TYPE_NAMES.get(spec['key_dtype'], 'undefined')},{elem})"
    if kind == "sequence":
        return f"seq({elem})"
    if kind == "optional":
        return f"optional({elem})"
    return elem


class ModelMetadata:
    """The model's metadata: producer_name, graph_name, domain, description,
    graph_description, version and custom_metadata_map."""

    def __init__(self, fields):
        for key, value in fields.items():
            setattr(self, key, value)


class InferenceSession:
    """Loads an ONNX model once and runs it, like ``onnxruntime.InferenceSession``.

        sess = polyinfer.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        (logits,) = sess.run(None, {name: x})

    ``path_or_bytes`` is a file path or the model's bytes. ``providers`` lists providers in
    order of preference, by polyinfer's names ("cpu", "cuda", "vulkan:1", "auto") or ONNX
    Runtime's ("CPUExecutionProvider"); an entry may be a ``(name, {option: value})`` pair.
    Every node runs on the first listed provider that can run it; ``placement`` says where each
    did. A listed provider that is not usable here is an error (ProviderUnavailable, naming why),
    except when the list uses ONNX Runtime's names, which ONNX Runtime skips: polyinfer skips it
    too, and warns. Run from many threads at once: on the CPU the runs overlap node by node,
    each node's kernel serving one run at a time.
    """

    def __init__(self, path_or_bytes: Union[str, os.PathLike, bytes],
                 sess_options: Optional[SessionOptions] = None,
                 providers: Optional[Sequence[Provider]] = None,
                 provider_options: Optional[Sequence[Dict[str, Any]]] = None, **kwargs: Any):
        options = sess_options if sess_options is not None else SessionOptions()
        self._options = options
        names, ort_names = _providers.resolve(providers, provider_options)
        self._requested = names
        allow_missing = bool(options.allow_fallback) or (ort_names and len(names) > 1)
        level = _level(options.graph_optimization_level)
        self._model = path_or_bytes
        args = (names, allow_missing, int(options.intra_op_num_threads), level,
                str(options.precision), bool(options.enable_profiling))
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model = bytes(path_or_bytes)
            self._session = _ext.load_bytes(self._model, *args)
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            path = os.fspath(path_or_bytes)
            if not os.path.exists(path):
                raise _errors.NoSuchFile(
                    f"no model file at '{path}' (from {os.getcwd()}); check the path")
            self._model = path
            self._session = _ext.load_file(path, *args)
        else:
            raise _errors.InvalidArgument(
                f"InferenceSession takes a model path or the model's bytes, not "
                f"{type(path_or_bytes).__name__}")
        if options.optimized_model_filepath:
            _ext.save_optimized(self._model, level, os.fspath(options.optimized_model_filepath))
        self._inputs = [NodeArg(s) for s in self._session.inputs]
        self._outputs = [NodeArg(s) for s in self._session.outputs]
        self._input_index = {a.name: a for a in self._inputs}
        self._placement = json.loads(self._session.placement()["json"])
        for skipped in self._placement["skipped"]:
            warnings.warn(f"polyinfer: provider {skipped['provider']} is not usable here "
                          f"({skipped['reason']}); its nodes run on the next listed provider",
                          RuntimeWarning, stacklevel=2)

    # --- ONNX Runtime's API ---

    def get_inputs(self) -> List[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        return list(self._outputs)

    def get_overridable_initializers(self) -> List[NodeArg]:
        return []

    def get_modelmeta(self) -> ModelMetadata:
        return ModelMetadata(_ext.model_metadata(self._model))

    def get_providers(self) -> List[str]:
        """The session's providers (those of its list usable here), ONNX Runtime's names where
        they mean the same."""
        skipped = {s["provider"] for s in self._placement["skipped"]}
        return [_providers.ort_name(p.split(":")[0]) for p in self._requested
                if p.split(":")[0] not in skipped and p not in skipped]

    def get_provider_options(self) -> Dict[str, Dict[str, str]]:
        return {_providers.ort_name(p.split(":")[0]): {} for p in self._requested}

    def get_session_options(self) -> SessionOptions:
        return self._options

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any],
            run_options: Optional[RunOptions] = None) -> List[Any]:
        """Runs the model. ``input_feed`` maps input names to numpy arrays (or values numpy
        turns into arrays; lists of arrays for sequence inputs, dicts for map inputs, None for
        an absent optional one); ``output_names`` lists the outputs to return, None for all.
        Returns a list of numpy arrays (lists and dicts for sequence and map outputs)."""
        feeds = _ext.Feeds()
        for name, value in input_feed.items():
            arg = self._input_index.get(name)
            if value is None:
                feeds.add_none(name)
            elif arg is not None and arg._kind == "map":
                feeds.add_map(name, *_map_items(name, value, arg))
            elif arg is not None and arg._kind == "sequence" and arg._key_dtype:
                items = [_map_items(name, m, arg) for m in value]
                feeds.add_map_sequence(name, [k for k, _ in items], [v for _, v in items],
                                       arg._key_dtype, arg._dtype)
            elif (arg is not None and arg._kind == "sequence") or (
                    isinstance(value, list) and (arg is None or arg._kind == "optional")):
                items = [_array(name, v, None) for v in value]
                feeds.add_sequence(name, [a for a, _ in items], [c for _, c in items],
                                   arg._dtype if arg is not None else 0)
            elif arg is not None and arg._dtype == _STRING:
                a = np.asarray(value, dtype=object)
                feeds.add_strings(name, list(a.shape), [str(s) for s in a.reshape(-1)])
            else:
                a, code = _array(name, value, arg)
                feeds.add_array(name, a, code)
        # One name as a str (not a list of its characters, each then "no output named 'l'").
        if isinstance(output_names, str):
            output_names = [output_names]
        wanted = list(output_names) if output_names else []
        return [_output(v) for v in self._session.run(feeds, wanted)]

    def end_profiling(self) -> str:
        return ""

    def set_providers(self, providers: Optional[Sequence[Provider]] = None,
                      provider_options: Optional[Sequence[Dict[str, Any]]] = None) -> None:
        """Re-creates the session with other providers (as ONNX Runtime does)."""
        self.__init__(self._model, self._options, providers, provider_options)

    # --- polyinfer's own ---

    @property
    def placement(self) -> Dict[str, Any]:
        """Where every node runs: {"summary", "providers", "nodes": [{node, op, provider,
        impl, choice}], "fallbacks", "skipped", "notes", ...} (``polyinfer run --json``)."""
        return self._placement

    @property
    def creation_times(self) -> Dict[str, float]:
        """Where the session's creation went, in ms: import, optimize, kernels, total."""
        return self._session.creation_times()

    def close(self) -> None:
        """Frees the session's memory now; later calls raise InvalidArgument."""
        self._session.close()

    def __enter__(self) -> InferenceSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _array(name, value, arg):
    """`value` as (array, dtype code) for the extension to lend to the run: numpy's array,
    C-contiguous, native byte order, of the dtype the model declares (checked here, with ONNX
    Runtime's words); an ml_dtypes array (bfloat16, float8, int4, ...) as a view of its bytes
    and its ONNX type's code, else code 0."""
    a = value if isinstance(value, np.ndarray) else np.asarray(value)
    # ml_dtypes' types are numpy user types (numbers from 256, NPY_USERDEF); dtype.name costs
    # microseconds, so it is read only for them.
    code = _ML_CODES.get(a.dtype.name, 0) if a.dtype.num >= 256 else 0
    if arg is not None and arg._kind == "tensor" and arg._dtype in _TYPE_NAMES:
        want = _NUMPY.get(arg._dtype)
        if code:
            ok = code == arg._dtype
        else:
            ok = want is not None and (a.dtype == want or a.dtype.newbyteorder("=") == want)
        if not ok:
            got = _TYPE_NAMES.get(code or _code_of(a.dtype), str(a.dtype))
            fix = (f"; convert it with .astype(numpy.{want.name})" if want is not None else
                   f"; give an ml_dtypes.{_ml_name(arg._dtype)} array")
            raise _errors.InvalidArgument(
                f"Unexpected input data type for '{name}'. Actual: (tensor({got})), expected: "
                f"({arg.type}){fix}")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    if code:
        a = a.view(np.uint16 if a.dtype.itemsize == 2 else np.uint8)
    return a, code


def _map_items(name, value, arg):
    """A dict for a map input (or one item of a sequence of maps) as its keys and values, each
    an array of the model's dtype or a list of str, in the dict's order."""
    if not isinstance(value, dict):
        raise _errors.InvalidArgument(
            f"input '{name}' is a {arg.type}: give a dict (a list of dicts for a sequence of "
            f"maps), not {type(value).__name__}")

    def side(items, code):
        if code == _STRING:
            return [str(x) for x in items]
        want = _NUMPY.get(code)
        if want is None:
            raise _errors.InvalidArgument(
                f"input '{name}': maps of {_TYPE_NAMES.get(code, code)} cannot pass yet")
        return np.ascontiguousarray(np.asarray(list(items), dtype=want))

    return side(value.keys(), arg._key_dtype), side(value.values(), arg._dtype)


def _ml_name(code):
    return next((n for n, c in _ML_CODES.items() if c == code), "?")


def _output(value):
    """An output from the extension: (code, codes array) for a type numpy lacks becomes an
    ml_dtypes array; lists are walked."""
    if isinstance(value, tuple):
        code, codes = value
        import ml_dtypes  # onnx's dependency; only the types numpy lacks need it

        return codes.view(getattr(ml_dtypes, _ml_name(code)))
    if isinstance(value, list):
        return [_output(v) for v in value]
    return value


def _code_of(dtype):
    for code, t in _NUMPY.items():
        if t == dtype.newbyteorder("="):
            return code
    return None


def get_available_providers() -> List[str]:
    """The providers usable on this machine, best first as ``--providers auto`` ranks them,
    ONNX Runtime's names where they mean the same."""
    return [_providers.ort_name(p["name"]) for p in _ext.available_providers() if p["usable"]]


def get_all_providers() -> List[str]:
    """Every provider built into this polyinfer, usable here or not."""
    return [_providers.ort_name(p["name"]) for p in _ext.available_providers()]


def get_device() -> str:
    """"GPU" when a GPU provider is usable here, else "CPU" (as onnxruntime.get_device())."""
    usable = [p["name"] for p in _ext.available_providers() if p["usable"]]
    return "GPU" if any(n != "cpu" for n in usable) else "CPU"
