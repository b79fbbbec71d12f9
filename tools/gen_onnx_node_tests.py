#!/usr/bin/env python3
"""Writes the ONNX backend node tests of the installed onnx package as data files.

The onnx wheels from 1.20 on ship the node test cases (onnx.backend.test.case.node) but no
longer their data. This runs every case and writes it out the way the data used to be laid out
(and `onnx.backend.test.cmd_tools generate-data` lays it out): OUT/node/<test>/model.onnx and
OUT/node/<test>/test_data_set_<i>/input_<j>.pb, output_<j>.pb.

    .venv/bin/python tools/gen_onnx_node_tests.py OUT
"""
import os
import sys
import warnings

import numpy as np
from onnx import TensorProto, numpy_helper
from onnx.backend.test.case.node import collect_testcases


def value_proto(value, type_proto, name):
    """The protobuf of one input or output value, as the model's type for it says."""
    if type_proto.HasField("sequence_type"):
        return numpy_helper.from_list(value, name)
    if type_proto.HasField("optional_type"):
        return numpy_helper.from_optional(value, name)
    if type_proto.HasField("map_type"):
        return numpy_helper.from_dict(value, name)
    if isinstance(value, TensorProto):
        return value
    return numpy_helper.from_array(np.asarray(value), name)


def write(path, proto):
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    # The cases cast out-of-range values on purpose (saturation, NaN, log 0); numpy's warnings
    # about it are noise here.
    warnings.simplefilter("ignore", RuntimeWarning)
    out = os.path.join(sys.argv[1], "node")
    os.makedirs(out, exist_ok=True)
    count = 0
    # The cases draw their inputs from numpy's global generator while they are collected: one
    # seed makes the data, and so every pass or fail, the same on every machine. POLYINFER_SEED
    # draws other data, to check that no result holds by luck.
    np.random.seed(int(os.environ.get("POLYINFER_SEED", "0")))
    for case in collect_testcases(None):
        folder = os.path.join(out, case.name)
        os.makedirs(folder, exist_ok=True)
        write(os.path.join(folder, "model.onnx"), case.model)
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            data = os.path.join(folder, f"test_data_set_{i}")
            os.makedirs(data, exist_ok=True)
            for j, value in enumerate(inputs):
                v = graph.input[j]
                write(os.path.join(data, f"input_{j}.pb"), value_proto(value, v.type, v.name))
            for j, value in enumerate(outputs):
                v = graph.output[j]
                write(os.path.join(data, f"output_{j}.pb"), value_proto(value, v.type, v.name))
        count += 1
    print(f"{count} node tests written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
