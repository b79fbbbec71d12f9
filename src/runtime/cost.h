// Per-node cost estimates. Used for the placement report's FLOP shares now; the `plan` command's
// cost model grows from here.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace polyinfer {

// Estimated floating-point operations of one node (multiply-add = 2) from its input and output
// shapes (nullptr or a negative dimension: unknown). Matrix and convolution ops count their MACs;
// other ops count one operation per output element. Returns -1 when a shape it needs is unknown.
double node_flops(const ir::Node& node, const std::vector<const Shape*>& inputs,
                  const std::vector<const Shape*>& outputs);

// node_flops from the graph's static types and initializers (-1 where shapes are dynamic).
double estimate_flops(const ir::Node& node, const ir::Graph& graph);

}  // namespace polyinfer
