"""The kserve SDK's v2 REST client (kserve.InferenceRESTClient) against a running
`polyinfer serve`, binary and JSON tensors. Run by tests/python/test_serve.py with .venv-serve's
python:

    serve_kserve.py http://HOST:PORT X.npy WANT.npy

Prints "ok" when every check passes; an assertion names the first that does not.
"""

import asyncio
import sys

import numpy as np
from kserve import InferenceRESTClient, InferInput, InferRequest, RESTConfig


async def main():
    url, x_path, want_path = sys.argv[1:4]
    x, want = np.load(x_path), np.load(want_path)
    c = InferenceRESTClient(RESTConfig(protocol="v2", retries=1, timeout=120))
    assert await c.is_server_live(url) and await c.is_server_ready(url)
    assert await c.is_model_ready(url, "digits")
    for binary in (True, False):
        inp = InferInput(name="pixels", shape=list(x.shape), datatype="FP32")
        inp.set_data_from_numpy(x, binary_data=binary)
        res = await c.infer(url, InferRequest(model_name="digits", infer_inputs=[inp],
                                              request_id=f"kserve-{binary}"),
                            model_name="digits")
        (out,) = res.outputs
        assert out.name == "logits" and list(out.shape) == list(want.shape), out
        np.testing.assert_allclose(out.as_numpy(), want, rtol=1e-6, atol=1e-6)
        assert res.id == f"kserve-{binary}", res.id
    print("ok")


if __name__ == "__main__":
    asyncio.run(main())
