"""polyinfer's tools as Python functions returning dicts: doctor, plan, bench, compare,
quantize, info.

Each runs the polyinfer CLI that ships with the package (``polyinfer/bin/polyinfer``) with
``--json`` and returns its JSON, so the schemas are the CLI's (docs/doctor.md, docs/plan.md, ...)
and a tool that crashes cannot take the caller's process with it. A failure raises the
polyinfer.Error subclass of the CLI's exit status, with its message.

    import polyinfer
    polyinfer.doctor()["providers"]
    polyinfer.plan("model.onnx", target="jetson-orin-nano")["targets"][0]
    polyinfer.bench("model.onnx", threads=1, iterations=100)["latency_ms"]["median"]
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Dict, Optional, Sequence, Union

Path = Union[str, os.PathLike]

from . import _errors

_HERE = os.path.dirname(os.path.abspath(__file__))
# status.h's ErrorCode by the CLI's exit status (10 + the code); 1 is a usage error.
_BY_STATUS = {
    1: _errors.InvalidArgument, 11: _errors.InvalidModel, 12: _errors.InvalidArgument,
    13: _errors.UnsupportedOp, 14: _errors.ProviderUnavailable, 15: _errors.ShapeMismatch,
    16: _errors.OutOfMemory, 17: _errors.Io, 18: _errors.Internal,
}


def cli_path() -> str:
    """The polyinfer executable beside this package (the wheel's, or the build tree's)."""
    return os.path.join(_HERE, "bin", "polyinfer")


def _flags(options):
    """{"target": "x", "per_layer": True, "shape": {"x": [1, 3]}} -> --target x --per-layer
    --shape x=1x3; None and False leave a flag out, a list repeats it."""
    out = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "-i" if key == "inputs" else "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, dict):
            for name, v in value.items():
                v = "x".join(str(d) for d in v) if isinstance(v, (list, tuple)) else v
                out += [flag, f"{name}={os.fspath(v) if isinstance(v, os.PathLike) else v}"]
        elif isinstance(value, (list, tuple)):
            for v in value:
                out += [flag, str(v)]
        else:
            out += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return out


def _cli_environment():
    """This process's environment less a preloaded AddressSanitizer runtime: python loads a
    sanitized build's extension only with the runtime preloaded (python/CMakeLists.txt), while
    the CLI links its own, and two runtimes in one process refuse to start."""
    env = dict(os.environ)
    kept = [p for p in env.get("LD_PRELOAD", "").split()
            if not os.path.basename(p).startswith(("libasan", "libclang_rt.asan"))]
    if kept:
        env["LD_PRELOAD"] = " ".join(kept)
    else:
        env.pop("LD_PRELOAD", None)
    return env


def _run(args, ok=(0,)):
    exe = cli_path()
    if not os.path.exists(exe):
        raise _errors.Io(f"the polyinfer CLI is not at {exe}; reinstall the package "
                         "(pip install .) or rebuild the build tree")
    p = subprocess.run([exe] + args + ["--json"], capture_output=True, text=True,
                       env=_cli_environment())
    if p.returncode not in ok:
        message = p.stderr.strip().removeprefix("error: ") or f"exit status {p.returncode}"
        raise _BY_STATUS.get(p.returncode, _errors.Internal)(message)
    return json.loads(p.stdout)


def doctor() -> Dict[str, Any]:
    """What compute is here, which providers can use it, each problem with its cause and fix:
    ``polyinfer doctor --json`` (docs/doctor.md)."""
    return _run(["doctor"])


def info(model: Path) -> Dict[str, Any]:
    """Inputs, outputs, opsets, operator histogram and parameters of a model file."""
    return _run(["info", os.fspath(model)])


def plan(model: Optional[Path] = None, target: Union[str, Sequence[str], None] = None,
         precision: Optional[str] = None, batch: Optional[int] = None,
         context: Optional[int] = None, shape: Optional[Dict[str, Sequence[int]]] = None,
         dim: Optional[Dict[str, int]] = None, threads: Optional[int] = None) -> Any:
    """Whether a model fits a chip and how fast it could run there (docs/plan.md). ``target``: a
    catalog id, a list of them, or "this" (measure this machine); ``shape``/``dim``: dicts of
    input name/symbol to dims. plan() without a model lists the targets."""
    if model is None:
        return _run(["plan", "--list-targets"])
    targets = ",".join(target) if isinstance(target, (list, tuple)) else target
    return _run(["plan", os.fspath(model)] + _flags(
        {"target": targets, "precision": precision, "batch": batch, "context": context,
         "shape": shape, "dim": dim, "threads": threads}))


def bench(model: Path, providers: Union[str, Sequence[str], None] = None,
          threads: Optional[int] = None, iterations: Optional[int] = None,
          duration: Optional[float] = None, warmup: Optional[int] = None,
          precision: Optional[str] = None, profile: bool = False,
          inputs: Optional[Dict[str, Path]] = None,
          shape: Optional[Dict[str, Sequence[int]]] = None,
          level: Optional[int] = None) -> Dict[str, Any]:
    """Times session creation, the first run and repeated runs: latency percentiles,
    throughput, memory; with ``profile``, per operator. ``providers``: a list or "a,b" text;
    ``inputs``: {input name: .npy path}."""
    if isinstance(providers, (list, tuple)):
        providers = ",".join(providers)
    return _run(["bench", os.fspath(model)] + _flags(
        {"providers": providers, "threads": threads, "iterations": iterations,
         "duration": duration, "warmup": warmup, "precision": precision, "profile": profile,
         "inputs": inputs, "shape": shape, "level": level}))


def compare(model_a: Path, model_b: Path, data: Optional[Path] = None,
            samples: Optional[int] = None, per_layer: bool = False,
            providers: Optional[str] = None, inputs: Optional[Dict[str, Path]] = None,
            shape: Optional[Dict[str, Sequence[int]]] = None) -> Dict[str, Any]:
    """Model B judged against model A on the same inputs: error, cosine, SNR, top-1/5 per
    output; with ``per_layer``, which nodes add the error."""
    return _run(["compare", os.fspath(model_a), os.fspath(model_b)] + _flags(
        {"data": data, "samples": samples, "per_layer": per_layer, "providers": providers,
         "inputs": inputs, "shape": shape}), ok=(0, 2))


def quantize(model: Path, output: Path, calibration: Optional[Path] = None,
             dynamic: bool = False, fp16: bool = False, method: Optional[str] = None,
             per_channel: bool = False, exclude: Optional[Sequence[str]] = None,
             samples: Optional[int] = None, target_accuracy: Optional[str] = None,
             validation: Optional[Path] = None) -> Dict[str, Any]:
    """Writes an INT8 (static with ``calibration``, or ``dynamic``) or fp16 model to
    ``output`` and returns what it did (docs/quantization.md)."""
    return _run(["quantize", os.fspath(model), "-o", os.fspath(output)] + _flags(
        {"calibration": calibration, "dynamic": dynamic, "fp16": fp16, "method": method,
         "per_channel": per_channel, "exclude": exclude, "samples": samples,
         "target_accuracy": target_accuracy, "validation": validation}))
