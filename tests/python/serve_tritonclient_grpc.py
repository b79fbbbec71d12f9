"""tritonclient's gRPC client, with its defaults, against a running `polyinfer serve`.

Run by tests/python/test_serve.py with .venv-serve's python, as serve_tritonclient.py is:

    serve_tritonclient_grpc.py HOST:PORT X.npy WANT.npy

The same repository and checks as serve_tritonclient.py, over inference.GRPCInferenceService:
health, metadata, inference with raw tensors (tritonclient's way) and typed contents, BYTES and
FP16, errors as gRPC statuses, the repository extension. Prints "ok" when every check passes.
"""

import sys

import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.grpc import service_pb2
from tritonclient.utils import InferenceServerException


def expect_error(call, code, words):
    try:
        call()
    except InferenceServerException as e:
        assert e.status() == code and words in e.message(), (e.status(), e.message())
        return
    raise AssertionError(f"no error (wanted {code}: {words})")


def main():
    url, x_path, want_path = sys.argv[1:4]
    x, want = np.load(x_path), np.load(want_path)
    c = grpcclient.InferenceServerClient(url=url)
    assert c.is_server_live() and c.is_server_ready()
    assert c.is_model_ready("digits") and c.is_model_ready("digits", "1")
    assert not c.is_model_ready("nope")
    meta = c.get_server_metadata(as_json=True)
    assert meta["name"] == "polyinfer" and "model_repository" in meta["extensions"], meta
    meta = c.get_model_metadata("digits", as_json=True)
    assert meta["inputs"][0]["datatype"] == "FP32", meta
    assert [int(d) for d in meta["inputs"][0]["shape"]] == [-1, 1, 8, 8], meta

    # The defaults: raw_input_contents in, raw_output_contents out.
    inp = grpcclient.InferInput("pixels", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    res = c.infer("digits", [inp], request_id="tg-1")
    np.testing.assert_allclose(res.as_numpy("logits"), want, rtol=1e-6, atol=1e-6)
    assert res.get_response().id == "tg-1"
    res = c.infer("digits", [inp], model_version="1",
                  outputs=[grpcclient.InferRequestedOutput("logits")])
    np.testing.assert_allclose(res.as_numpy("logits"), want, rtol=1e-6, atol=1e-6)

    # Typed contents (fp32_contents), as clients other than tritonclient send them.
    req = service_pb2.ModelInferRequest(model_name="digits")
    t = req.inputs.add(name="pixels", datatype="FP32", shape=list(x.shape))
    t.contents.fp32_contents.extend(x.ravel().tolist())
    reply = c._client_stub.ModelInfer(req)
    got = np.frombuffer(reply.raw_output_contents[0], np.float32).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    # BYTES and FP16.
    words = np.array([b"polyinfer", b"", "ünïcode".encode()], dtype=np.object_).reshape(1, 3)
    s = grpcclient.InferInput("text", [1, 3], "BYTES")
    s.set_data_from_numpy(words)
    got = c.infer("echo_strings", [s]).as_numpy("text_out")
    assert got.shape == (1, 3) and list(got.ravel()) == list(words.ravel()), got
    h = np.array([[0.5, -2.0, 65504.0]], dtype=np.float16)
    hi = grpcclient.InferInput("half", [1, 3], "FP16")
    hi.set_data_from_numpy(h)
    got = c.infer("echo_half", [hi]).as_numpy("half_out")
    assert got.dtype == np.float16 and np.array_equal(got, h), got

    # Errors: the gRPC status and the server's message.
    expect_error(lambda: c.infer("nope", [inp]), "StatusCode.NOT_FOUND", "no model named 'nope'")
    expect_error(lambda: c.get_model_metadata("nope"), "StatusCode.NOT_FOUND", "nope")
    bad = grpcclient.InferInput("pixels", [1, 1, 8, 8], "INT32")
    bad.set_data_from_numpy(np.zeros((1, 1, 8, 8), np.int32))
    expect_error(lambda: c.infer("digits", [bad]), "StatusCode.INVALID_ARGUMENT",
                 "is INT32 but the model takes FP32")
    req = service_pb2.ModelInferRequest(model_name="digits")
    req.inputs.add(name="pixels", datatype="FP32", shape=[2, 1, 8, 8])
    req.raw_input_contents.append(x[:1].tobytes())
    try:
        c._client_stub.ModelInfer(req)
        raise AssertionError("a short raw_input_contents was taken")
    except Exception as e:  # grpc.RpcError
        assert "INVALID_ARGUMENT" in str(e.code()) and "256 bytes of data for" in e.details(), e
    expect_error(lambda: c.infer("digits", [inp], outputs=[
        grpcclient.InferRequestedOutput("probs")]), "StatusCode.INVALID_ARGUMENT",
        "no output named 'probs'")

    # The repository extension.
    index = {m.name: m for m in c.get_model_repository_index().models}
    assert index["digits"].state == "READY", index
    c.unload_model("echo_half")
    assert not c.is_model_ready("echo_half")
    c.load_model("echo_half")
    assert c.is_model_ready("echo_half")
    print("ok")


if __name__ == "__main__":
    main()
