// Model-local functions (ModelProto.functions, what torch.onnx's dynamo exporter and other
// tools emit for modules) inlined at import: every call becomes the function's body, with its
// values renamed apart and its attribute references (ref_attr_name) bound to the call's
// attributes, so that the rest of polyinfer sees only operators.
#pragma once

#include <onnx/onnx_pb.h>

namespace polyinfer {

// Rewrites `model` in place — the main graph and every subgraph — and clears its function list.
// Throws UnsupportedOp when a function imports another version of an opset the model imports
// (its body would mean something else here), or carries fields this build's ONNX cannot read
// (attribute defaults, IR 9); InvalidModel when functions call each other without end, or a
// body reads a value it neither receives nor produces.
void inline_local_functions(onnx::ModelProto& model);

}  // namespace polyinfer
