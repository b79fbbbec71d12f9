#include "runtime/cost.h"

namespace polyinfer {

namespace {

// Element count of a fully known shape, or -1.
double known_numel(const Shape* s) {
  if (!s) return -1;
  double n = 1;
  for (int64_t d : *s) {
    if (d < 0) return -1;
    n *= static_cast<double>(d);
  }
  return n;
}

const Shape* at(const std::vector<const Shape*>& v, size_t i) { return i < v.size() ? v[i] : nullptr; }

}  // namespace

double node_flops(const ir::Node& node, const std::vector<const Shape*>& inputs,
                  const std::vector<const Shape*>& outputs) {
  const double out = known_numel(at(outputs, 0));
  if (out < 0) return -1;
  // polyinfer's fused operators cost what their main operator does (the bias, residual and
  // activation they absorb are a few FLOPs per output).
  std::string op = node.op_type;
  if (node.domain == "ai.polyinfer") {
    if (op == "FusedConv" || op == "NhwcFusedConv") op = "Conv";
    if (op == "FusedGemm") op = "Gemm";
    if (op == "FusedMatMul") op = "MatMul";
  }
  if (op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "QLinearConv") {
    const Shape* w = at(inputs, op == "QLinearConv" ? 3 : 1);
    if (!w || w->size() < 3) return -1;
    double k = 1;
    for (size_t i = 2; i < w->size(); ++i) k *= static_cast<double>((*w)[i]);
    if (op == "ConvTranspose") {
      // Each input element scatters into w[1] (= C_out / group) channels over the kernel.
      const double in = known_numel(at(inputs, 0));
      return in < 0 ? -1 : 2.0 * in * static_cast<double>((*w)[1]) * k;
    }
    return 2.0 * out * static_cast<double>((*w)[1]) * k;  // w[1] = C_in / group
  }
  if (op == "MatMul" || op == "Gemm" || op == "MatMulInteger" || op == "QLinearMatMul") {
    const Shape* a = at(inputs, 0);
    if (!a || a->empty() || a->back() < 0) return -1;
    int64_t k = a->back();
    if (op == "Gemm") {
      const ir::Attribute* ta = node.attr("transA");
      if (ta && ta->i && a->size() == 2) k = (*a)[0];
    }
    return 2.0 * out * static_cast<double>(k);
  }
  return out;
}

double estimate_flops(const ir::Node& node, const ir::Graph& graph) {
  auto shapes = [&](const std::vector<std::string>& names, std::vector<Shape>* store) {
    store->resize(names.size());
    std::vector<const Shape*> out(names.size(), nullptr);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i].empty()) continue;
      if (auto it = graph.initializers.find(names[i]); it != graph.initializers.end()) {
        (*store)[i] = it->second.shape();
        out[i] = &(*store)[i];
      } else if (const ir::TypeInfo* t = graph.type_of(names[i]);
                 t && t->kind == ir::TypeInfo::Kind::Tensor && t->has_shape) {
        (*store)[i] = t->dims;
        out[i] = &(*store)[i];
      }
    }
    return out;
  };
  std::vector<Shape> in_store, out_store;
  const auto in = shapes(node.inputs, &in_store);
  const auto out = shapes(node.outputs, &out_store);
  return node_flops(node, in, out);
}

}  // namespace polyinfer
