"""Makes the small malformed models the CLI error tests feed to polyinfer.

Run once with Debian's python3-onnx (/usr/bin/python3 tests/data/make_bad_models.py); the
outputs are committed, so tests need no Python.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    onnx.save(model, os.path.join(here, name))


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])

# An operator nobody implements.
g = helper.make_graph([helper.make_node("FrobnicateX", ["x"], ["y"], name="frob")], "unknown_op", [x], [y])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "unknown_op.onnx")

# An initializer whose external data points outside the model's folder.
w = numpy_helper.from_array(np.zeros(2, np.float32), "w")
w.ClearField("raw_data")
w.data_location = TensorProto.EXTERNAL
entry = w.external_data.add()
entry.key, entry.value = "location", "../../etc/passwd"
g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add")], "escape", [x], [y], [w])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "external_escape.onnx")
