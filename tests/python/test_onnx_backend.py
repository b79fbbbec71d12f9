"""The official ONNX backend test runner (onnx.backend.test.BackendTest, the pinned onnx wheel's
node, simple and pytorch test cases; the "real" models are downloads and are left out) over
polyinfer.backend and onnxruntime.backend in the same run. Both pass counts are printed (the
README records them) and polyinfer's must stay at or above its floor.

polyinfer's 12 failures at the floor: 6 Bernoulli (random draws), test_attention_4d_causal_fp16_
expanded (the expected Softmax rounds every step to 16 bits), 2 Gradient (a training graph
transformation), test_dft_inverse{,_opset19} (the runner's atol 1e-7 against a reference whose
zeros come out as 1.9e-7; ours are 3e-15), test_loop16_seq_none (ours equal the expected
sequence; the runner cannot compare a sequence of tensors of different shapes)."""

import io
import unittest

import onnx.backend.test
import onnxruntime.backend

import polyinfer.backend

# polyinfer's passes when this floor was set (README, "Conformance"): it only goes up.
FLOOR = 2012
KINDS = ("OnnxBackendNodeModelTest", "OnnxBackendSimpleModelTest",
         "OnnxBackendPyTorchConvertedModelTest", "OnnxBackendPyTorchOperatorModelTest")


def passes(backend):
    tests = onnx.backend.test.BackendTest(backend, __name__)
    tests.include(r".*_cpu$")
    suite = unittest.TestSuite()
    for name, case in tests.test_cases.items():
        if name in KINDS:
            suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    failed = {t.id().rsplit(".", 1)[-1] for t, _ in result.failures + result.errors}
    ran = result.testsRun - len(result.skipped)  # the _cuda twins are skipped
    return ran, ran - len(failed), failed


def test_backend_runner_against_onnxruntime():
    total, ours, our_failures = passes(polyinfer.backend)
    total_ort, theirs, _ = passes(onnxruntime.backend)
    assert total == total_ort
    print(f"\nONNX backend test runner, {total} tests: polyinfer {ours} passed, "
          f"onnxruntime {theirs} passed")
    print("polyinfer's failures: " + " ".join(sorted(our_failures)))
    assert ours >= FLOOR
