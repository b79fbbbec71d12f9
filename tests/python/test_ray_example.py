"""Issue 38's scale-out example: examples/python/ray_classify.py classifies digits with Ray Data
(a local Ray, `map_batches` over actors that each hold one polyinfer session), run from
.venv-ray in bounded time; its labels are onnxruntime's, computed here on the same images."""

import json
import os
import subprocess

import numpy as np
import onnxruntime
import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DIGITS = os.path.join(ROOT, "examples", "digits")


def test_ray_data_classifies_digits_with_one_session_per_actor():
    python = os.path.join(ROOT, ".venv-ray", "bin", "python")
    if not os.path.exists(python):
        pytest.skip("no .venv-ray (tools/test.sh makes it: POLYINFER_VENV=.venv-ray "
                    "POLYINFER_REQUIREMENTS=examples/python/requirements-ray.txt tools/pyenv.sh)")
    r = subprocess.run([python, os.path.join(ROOT, "examples", "python", "ray_classify.py"),
                        "--limit", "200", "--actors", "2", "--batch-size", "25", "--json"],
                       capture_output=True, text=True, timeout=300,
                       # As is: under the sanitizers the workers need the runtime preloaded too,
                       # to import the build tree's extension (PYTHONPATH).
                       env=dict(os.environ))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    x = np.load(os.path.join(DIGITS, "test_x.npy"))[:200]
    sess = onnxruntime.InferenceSession(os.path.join(DIGITS, "digits_cnn.onnx"),
                                        providers=["CPUExecutionProvider"])
    (logits,) = sess.run(None, {"pixels": x})
    assert got["rows_returned"] == 200 and got["images"] == 200, got
    assert got["labels"] == logits.argmax(axis=1).tolist()
    assert 1 <= len(got["rows_per_actor"]) <= 2 and sum(got["rows_per_actor"].values()) == 200
    assert got["providers"] == ["cpu"], got["providers"]
