"""tritonclient's HTTP client, with its defaults, against a running `polyinfer serve`.

Run by tests/python/test_serve.py with .venv-serve's python (tritonclient's ml_dtypes pin keeps
it out of .venv):

    serve_tritonclient.py HOST:PORT X.npy WANT.npy

The repository holds "digits" (float32 in, float32 out), "echo_strings" (a BYTES Identity) and
"echo_half" (an FP16 Identity). Prints "ok" when every check passes; an assertion names the
first that does not.
"""

import sys

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException


def main():
    url, x_path, want_path = sys.argv[1:4]
    x, want = np.load(x_path), np.load(want_path)
    c = httpclient.InferenceServerClient(url=url)
    assert c.is_server_live() and c.is_server_ready()
    assert c.is_model_ready("digits")
    assert c.get_server_metadata()["name"] == "polyinfer"
    meta = c.get_model_metadata("digits")
    assert meta["inputs"][0]["datatype"] == "FP32" and meta["inputs"][0]["shape"] == [-1, 1, 8, 8]

    # The defaults: the input as binary data, every output as binary data.
    inp = httpclient.InferInput("pixels", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    res = c.infer("digits", [inp], request_id="tc-1")
    np.testing.assert_allclose(res.as_numpy("logits"), want, rtol=1e-6, atol=1e-6)
    assert res.get_response()["id"] == "tc-1"
    # JSON both ways.
    inp_json = httpclient.InferInput("pixels", list(x.shape), "FP32")
    inp_json.set_data_from_numpy(x, binary_data=False)
    out_json = httpclient.InferRequestedOutput("logits", binary_data=False)
    res = c.infer("digits", [inp_json], outputs=[out_json], model_version="1")
    np.testing.assert_allclose(res.as_numpy("logits"), want, rtol=1e-6, atol=1e-6)

    # BYTES and FP16 travel as binary data.
    words = np.array([b"polyinfer", b"", "ünïcode".encode()], dtype=np.object_).reshape(1, 3)
    s = httpclient.InferInput("text", [1, 3], "BYTES")
    s.set_data_from_numpy(words)
    got = c.infer("echo_strings", [s]).as_numpy("text_out")
    assert got.shape == (1, 3) and list(got.ravel()) == list(words.ravel()), got
    h = np.array([[0.5, -2.0, 65504.0]], dtype=np.float16)
    hi = httpclient.InferInput("half", [1, 3], "FP16")
    hi.set_data_from_numpy(h)
    got = c.infer("echo_half", [hi]).as_numpy("half_out")
    assert got.dtype == np.float16 and np.array_equal(got, h), got

    # Errors come back as tritonclient's exception with the server's message.
    try:
        c.infer("nope", [inp])
        raise AssertionError("no error for an unknown model")
    except InferenceServerException as e:
        assert "no model named 'nope'" in str(e), e
    bad = httpclient.InferInput("pixels", [1, 1, 8, 8], "INT32")
    bad.set_data_from_numpy(np.zeros((1, 1, 8, 8), np.int32))
    try:
        c.infer("digits", [bad])
        raise AssertionError("no error for a wrong datatype")
    except InferenceServerException as e:
        assert "is INT32 but the model takes FP32" in str(e), e

    # The repository extension.
    index = {m["name"]: m for m in c.get_model_repository_index()}
    assert index["digits"]["state"] == "READY", index
    c.unload_model("echo_half")
    assert not c.is_model_ready("echo_half")
    c.load_model("echo_half")
    assert c.is_model_ready("echo_half")
    print("ok")


if __name__ == "__main__":
    main()
