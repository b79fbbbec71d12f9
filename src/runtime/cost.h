// Per-node cost: FLOPs and bytes moved, by operator family. The placement report's FLOP shares
// and `plan`'s roofline both read it.
//
// FLOPs count a multiply-add as 2. Matrix and convolution ops count their MACs; pooling counts
// one operation per window element; normalizations and Softmax a small fixed number per element
// (documented in cost.cpp); other elementwise ops one per output element; data movement and views
// none. Bytes are what a kernel must read and write at least once: its non-constant inputs, the
// constants it reads (a Gather reads only the rows it picks, not its whole table) and its outputs;
// views (Reshape, Squeeze, Identity, …) move nothing. An operator without a model here is counted
// as memory-only (its bytes, no FLOPs) and flagged so reports can list it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace polyinfer {

enum class OpClass {
  Conv,
  MatMul,
  Pool,
  Normalization,
  Softmax,
  Elementwise,
  Reduction,
  Resize,
  DataMovement,
  View,
  Other,
};
const char* op_class_name(OpClass c);  // "conv", "matmul", … "other"

// The family a node belongs to; polyinfer's fused and channels-last operators (ai.polyinfer
// FusedConv, NhwcMaxPool, ChannelAffine, …) belong to their main operator's family.
OpClass op_class(const ir::Node& node);

// What a cost needs to know about one input or output. An absent optional has shape nullptr and
// dtype Undefined; a shape with a negative dimension is unknown.
struct TensorUse {
  const Shape* shape = nullptr;
  DType dtype = DType::Undefined;
  bool constant = false;  // an initializer: a weight, read from memory on every run
};

struct NodeCost {
  OpClass cls = OpClass::Other;
  double flops = 0;
  double input_bytes = 0;   // non-constant inputs
  double weight_bytes = 0;  // constant inputs, as far as the op reads them
  double output_bytes = 0;
  bool known = true;         // false: a shape it needs is unknown (the figures are partial)
  bool memory_only = false;  // no FLOP model for this operator
  double bytes() const { return input_bytes + weight_bytes + output_bytes; }
};

// Bytes one element of `dtype` takes; `weight` says whether it is a constant. Lets `plan` price
// the same graph at another precision; the default is the element's own size.
using ElementBytes = std::function<double(DType dtype, bool weight)>;

NodeCost node_cost(const ir::Node& node, const std::vector<TensorUse>& inputs,
                   const std::vector<TensorUse>& outputs, const ElementBytes& element_bytes = {});

// node_cost from the graph's static types and initializers.
NodeCost estimate_cost(const ir::Node& node, const ir::Graph& graph,
                       const ElementBytes& element_bytes = {});

// FLOPs alone from shapes (the executor measures with the shapes a run saw); -1 when unknown.
double node_flops(const ir::Node& node, const std::vector<const Shape*>& inputs,
                  const std::vector<const Shape*>& outputs);
// node_flops from the graph's static types and initializers (-1 where shapes are dynamic).
double estimate_flops(const ir::Node& node, const ir::Graph& graph);

}  // namespace polyinfer
