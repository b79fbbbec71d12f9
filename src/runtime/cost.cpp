#include "runtime/cost.h"

namespace polyinfer {

namespace {

// Element count of a fully known static shape, or -1.
double known_numel(const ir::TypeInfo* t) {
  if (!t || t->kind != ir::TypeInfo::Kind::Tensor || !t->has_shape) return -1;
  double n = 1;
  for (int64_t d : t->dims) {
    if (d < 0) return -1;
    n *= static_cast<double>(d);
  }
  return n;
}

const ir::TypeInfo* type_of(const ir::Graph& g, const std::string& name) {
  if (name.empty()) return nullptr;
  if (const ir::TypeInfo* t = g.type_of(name)) return t;
  return nullptr;
}

Shape static_shape(const ir::Graph& g, const std::string& name) {
  if (auto it = g.initializers.find(name); it != g.initializers.end()) return it->second.shape();
  const ir::TypeInfo* t = type_of(g, name);
  if (!t || !t->has_shape) return {};
  return t->dims;
}

}  // namespace

double estimate_flops(const ir::Node& node, const ir::Graph& graph) {
  if (node.outputs.empty()) return 0;
  const double out = known_numel(type_of(graph, node.outputs[0]));
  if (out < 0) return 0;
  const std::string& op = node.op_type;
  if ((op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "QLinearConv") &&
      node.inputs.size() >= 2) {
    const Shape w = static_shape(graph, node.inputs[op == "QLinearConv" ? 3 : 1]);
    if (w.size() < 3) return out;
    double k = 1;
    for (size_t i = 2; i < w.size(); ++i) k *= static_cast<double>(w[i]);
    if (op == "ConvTranspose") {
      // Each input element scatters into w[1] (= C_out / group) channels over the kernel.
      const double in = known_numel(type_of(graph, node.inputs[0]));
      return in < 0 ? out : 2.0 * in * static_cast<double>(w[1]) * k;
    }
    return 2.0 * out * static_cast<double>(w[1]) * k;  // w[1] = C_in / group
  }
  if ((op == "MatMul" || op == "Gemm" || op == "MatMulInteger" || op == "QLinearMatMul") &&
      !node.inputs.empty()) {
    const Shape a = static_shape(graph, node.inputs[0]);
    if (a.empty() || a.back() < 0) return out;
    int64_t k = a.back();
    if (op == "Gemm") {
      const ir::Attribute* ta = node.attr("transA");
      if (ta && ta->i && a.size() == 2) k = a[0];
    }
    return 2.0 * out * static_cast<double>(k);
  }
  return out;
}

}  // namespace polyinfer
