// Pieces shared by the quantization rewrites (qdq.cpp, dynamic.cpp, fp16.cpp): fresh names,
// new nodes, value types, symmetric int8 weights.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace polyinfer::quant {

// Names not yet used by any value, initializer or node of the graph it was made from:
// base, then base_1, base_2, ...
class Namer {
 public:
  explicit Namer(const ir::Graph& g);
  std::string operator()(const std::string& base);

 private:
  std::set<std::string> used_;
};

ir::Node make_node(const std::string& op, std::string name, std::vector<std::string> in,
                   std::vector<std::string> out, int opset);
void set_int_attr(ir::Node& n, const std::string& key, int64_t value);

// The version of the default domain the graph imports (0 when none).
int default_opset(const ir::Graph& g);
// `name` is known to be a float32 tensor (initializer or typed value).
bool is_float32(const ir::Graph& g, const std::string& name);
// The node is named, or of an op type named, in `names`.
inline bool named_in(const ir::Node& n, const std::set<std::string>& names) {
  return names.count(n.name) || names.count(n.op_type);
}

// A float32 weight as int8: symmetric, range [-qmax, qmax], one scale per index of `axis` (or one
// for the whole tensor when axis < 0); an all-zero slice gets scale 1. qmax is 127, or 63 for
// reduced-range weights (kReducedWeightMax).
struct QuantizedWeight {
  Tensor q;
  std::vector<float> scales;
};
constexpr int kFullWeightMax = 127;
constexpr int kReducedWeightMax = 63;
QuantizedWeight quantize_weight(const Tensor& w, int axis, int qmax = kFullWeightMax);

}  // namespace polyinfer::quant
