// ir::Graph → GraphProto, internal to src/onnx (export.cpp writes it; import.cpp's
// infer_shapes_again reuses it). `weights_as_placeholders` writes large float initializers as
// dims and type only, for a copy that shape inference reads and nothing else.
#pragma once

#include <onnx/onnx_pb.h>

#include "ir/graph.h"

namespace polyinfer {

void write_graph_proto(const ir::Graph& g, onnx::GraphProto* gp, bool weights_as_placeholders);

}  // namespace polyinfer
