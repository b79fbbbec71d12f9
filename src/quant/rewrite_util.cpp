#include "quant/rewrite_util.h"

#include <algorithm>
#include <cmath>

namespace polyinfer::quant {

Namer::Namer(const ir::Graph& g) {
  for (const auto& v : g.inputs) used_.insert(v.name);
  for (const auto& v : g.outputs) used_.insert(v.name);
  for (const auto& [k, v] : g.initializers) used_.insert(k);
  for (const auto& n : g.nodes) {
    used_.insert(n.name);
    used_.insert(n.outputs.begin(), n.outputs.end());
  }
}

std::string Namer::operator()(const std::string& base) {
  std::string name = base;
  for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
  used_.insert(name);
  return name;
}

ir::Node make_node(const std::string& op, std::string name, std::vector<std::string> in,
                   std::vector<std::string> out, int opset) {
  ir::Node n;
  n.op_type = op;
  n.name = std::move(name);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.opset = opset;
  return n;
}

void set_int_attr(ir::Node& n, const std::string& key, int64_t value) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::Int;
  a.i = value;
  n.attrs[key] = a;
}

int default_opset(const ir::Graph& g) {
  auto it = g.opsets.find("");
  if (it == g.opsets.end()) it = g.opsets.find("ai.onnx");
  return it == g.opsets.end() ? 0 : it->second;
}

bool is_float32(const ir::Graph& g, const std::string& name) {
  auto it = g.initializers.find(name);
  if (it != g.initializers.end()) return it->second.dtype() == DType::Float32;
  const ir::TypeInfo* t = g.type_of(name);
  return t && t->kind == ir::TypeInfo::Kind::Tensor && t->elem == DType::Float32;
}

QuantizedWeight quantize_weight(const Tensor& w, int axis, int qmax) {
  const float* x = w.data<float>();
  const int64_t channels = axis < 0 ? 1 : w.dim(axis);
  int64_t inner = 1;
  if (axis >= 0)
    for (int d = axis + 1; d < w.rank(); ++d) inner *= w.dim(d);
  auto channel = [&](int64_t i) { return size_t(axis < 0 ? 0 : (i / inner) % channels); };
  std::vector<float> absmax(size_t(channels), 0.0f);
  for (int64_t i = 0; i < w.numel(); ++i)
    absmax[channel(i)] = std::max(absmax[channel(i)], std::fabs(x[i]));
  QuantizedWeight r;
  for (float m : absmax) r.scales.push_back(m > 0 ? float(double(m) / qmax) : 1.0f);
  std::vector<int8_t> q(size_t(w.numel()));
  for (int64_t i = 0; i < w.numel(); ++i) {
    const double v = std::nearbyint(double(x[i]) / double(r.scales[channel(i)]));
    q[size_t(i)] = int8_t(std::clamp(v, -double(qmax), double(qmax)));
  }
  r.q = Tensor::from_vector<int8_t>(w.shape(), q);
  return r;
}

}  // namespace polyinfer::quant
