// Per-node cost estimates from the graph's static types. Used for the placement report's FLOP
// shares now; the `plan` command's cost model grows from here.
#pragma once

#include "ir/graph.h"

namespace polyinfer {

// Estimated floating-point operations of one node (multiply-add = 2). Matrix and convolution
// ops count their MACs; other ops count one operation per output element. Returns 0 when the
// shapes it needs are unknown.
double estimate_flops(const ir::Node& node, const ir::Graph& graph);

}  // namespace polyinfer
