#!/usr/bin/env python3
"""The common way of serving an ONNX model on KServe without Triton: the kserve SDK's
ModelServer (Open Inference Protocol v2 over REST and gRPC) with a Model that runs onnxruntime.
bench/serve_bench.py starts it as the baseline against `polyinfer serve`.

    .venv-servebench/bin/python bench/kserve_ort_server.py --model NAME=PATH.onnx
        [--http-port 8080] [--grpc-port 8081] [--threads 2]

predict runs the session on the event loop's thread pool, so requests overlap as ONNX Runtime
allows (session.run is thread-safe and releases the GIL); a plain def predict would run them
one at a time on the event loop.
"""

import argparse
import asyncio
import sys

import onnxruntime as ort

import kserve
from kserve import InferOutput, InferRequest, InferResponse


class OrtModel(kserve.Model):
    def __init__(self, name, path, threads):
        super().__init__(name)
        self.path, self.threads = path, threads
        self.load()

    def load(self):
        so = ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        self.session = ort.InferenceSession(self.path, so, providers=["CPUExecutionProvider"])
        self.outputs = [o.name for o in self.session.get_outputs()]
        self.ready = True
        return self.ready

    async def predict(self, payload: InferRequest, headers=None,
                      response_headers=None) -> InferResponse:
        feeds = {i.name: i.as_numpy() for i in payload.inputs}
        loop = asyncio.get_running_loop()
        results = await loop.run_in_executor(None, self.session.run, None, feeds)
        outs = []
        binary = payload.use_binary_outputs  # tritonclient's default: raw bytes both ways
        for name, y in zip(self.outputs, results):
            o = InferOutput(name=name, shape=list(y.shape), datatype="FP32")
            o.set_data_from_numpy(y, binary_data=binary)
            outs.append(o)
        return InferResponse(model_name=self.name, infer_outputs=outs,
                             response_id=payload.id or "", from_grpc=payload.from_grpc,
                             use_binary_outputs=binary)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="NAME=PATH.onnx")
    p.add_argument("--http-port", type=int, default=8080)
    p.add_argument("--grpc-port", type=int, default=8081)
    p.add_argument("--threads", type=int, default=2)
    args, _ = p.parse_known_args()
    name, path = args.model.split("=", 1)
    sys.argv = sys.argv[:1]  # kserve parses the command line too
    kserve.ModelServer(http_port=args.http_port, grpc_port=args.grpc_port,
                       workers=1).start([OrtModel(name, path, args.threads)])


if __name__ == "__main__":
    main()
