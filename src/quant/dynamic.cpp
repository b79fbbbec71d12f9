#include "quant/dynamic.h"

#include <map>

#include "infer/infer.h"
#include "quant/rewrite_util.h"

namespace polyinfer::quant {

namespace {

// Why `n` cannot be rewritten ("" when it can).
std::string refusal(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() < 2 || n.outputs.empty()) return "malformed";
  auto w = g.initializers.find(n.inputs[1]);
  if (w == g.initializers.end() || w->second.dtype() != DType::Float32 || w->second.rank() != 2)
    return "its weight is not a constant float32 2-D tensor";
  if (!is_float32(g, n.inputs[0]) || g.initializers.count(n.inputs[0]))
    return "its input is not a float32 activation";
  if (n.op_type == "Gemm") {
    auto attr = [&](const char* k, double def) {
      const ir::Attribute* a = n.attr(k);
      return a ? (a->type == ir::Attribute::Type::Float ? double(a->f) : double(a->i)) : def;
    };
    if (attr("alpha", 1) != 1 || attr("beta", 1) != 1 || attr("transA", 0) != 0)
      return "alpha, beta or transA is not the default";
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
      auto b = g.initializers.find(n.inputs[2]);
      if (b == g.initializers.end() || b->second.rank() != 1 || b->second.dtype() != DType::Float32)
        return "its bias is not a constant float32 1-D tensor";
    }
  }
  return "";
}

// B as [K, N] (Gemm's transB undone: MatMulInteger has no transpose).
Tensor weight_kn(const ir::Graph& g, const ir::Node& n) {
  const Tensor& w = g.initializers.at(n.inputs[1]);
  const ir::Attribute* tb = n.attr("transB");
  if (n.op_type != "Gemm" || !tb || tb->i == 0) return w;
  const int64_t rows = w.dim(0), cols = w.dim(1);  // [N, K]
  std::vector<float> t(size_t(w.numel()));
  const float* x = w.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[size_t(c * rows + r)] = x[r * cols + c];
  return Tensor::from_vector<float>({cols, rows}, t);
}

}  // namespace

DynamicReport quantize_dynamic(ir::Graph& g, const DynamicOptions& o) {
  infer::infer_types(g);  // the rewrites read value types
  const int opset = default_opset(g);
  PI_CHECK(opset >= 11, InvalidArgument, "quantize --dynamic: the model's opset ", opset,
           " has no DynamicQuantizeLinear / MatMulInteger (opset >= 11): convert the model to a "
           "newer opset first (onnx.version_converter)");
  Namer name(g);
  DynamicReport report;
  std::vector<ir::Node> out;
  for (auto& n : g.nodes) {
    if (!n.domain.empty() || (n.op_type != "MatMul" && n.op_type != "Gemm")) {
      out.push_back(std::move(n));
      continue;
    }
    const std::string why = named_in(n, o.exclude) ? "excluded" : refusal(g, n);
    if (!why.empty()) {
      report.notes.push_back(n.label() + " stays float (" + why + ")");
      out.push_back(std::move(n));
      continue;
    }
    const Tensor w = weight_kn(g, n);
    const QuantizedWeight qw = quantize_weight(w, o.per_channel ? 1 : -1,
                                               o.reduce_range ? kReducedWeightMax : kFullWeightMax);
    const int64_t cols = w.dim(1);
    const std::string base = n.name;
    const std::string wq = name(n.inputs[1] + "_quantized"),
                      wzp = name(n.inputs[1] + "_zero_point"),
                      wscale = name(n.inputs[1] + "_scale");
    g.initializers[wq] = qw.q;
    const bool vec = qw.scales.size() > 1;
    g.initializers[wzp] =
        vec ? Tensor::from_vector<int8_t>({cols}, std::vector<int8_t>(size_t(cols), 0))
            : Tensor::scalar<int8_t>(0);
    g.initializers[wscale] =
        vec ? Tensor::from_vector<float>({cols}, qw.scales) : Tensor::scalar<float>(qw.scales[0]);
    report.float_bytes += int64_t(w.nbytes());
    report.quantized_bytes += int64_t(qw.q.nbytes());

    const std::string xq = name(base + "_x_quantized"), xs = name(base + "_x_scale"),
                      xzp = name(base + "_x_zero_point"), acc = name(base + "_int32"),
                      accf = name(base + "_int32_float"), scale = name(base + "_scale"),
                      y = n.outputs[0];
    const bool bias = n.op_type == "Gemm" && n.inputs.size() > 2 && !n.inputs[2].empty();
    const std::string scaled = bias ? name(base + "_scaled") : y;
    out.push_back(make_node("DynamicQuantizeLinear", name(base + "_DynamicQuantizeLinear"),
                            {n.inputs[0]}, {xq, xs, xzp}, opset));
    out.push_back(make_node("MatMulInteger", name(base + "_MatMulInteger"), {xq, wq, xzp, wzp},
                            {acc}, opset));
    ir::Node cast = make_node("Cast", name(base + "_Cast"), {acc}, {accf}, opset);
    set_int_attr(cast, "to", 1);  // FLOAT
    out.push_back(std::move(cast));
    out.push_back(make_node("Mul", name(base + "_scale_Mul"), {xs, wscale}, {scale}, opset));
    out.push_back(make_node("Mul", name(base + "_Mul"), {accf, scale}, {scaled}, opset));
    if (bias)
      out.push_back(make_node("Add", name(base + "_bias_Add"), {scaled, n.inputs[2]}, {y}, opset));
    ++report.nodes;
  }
  g.nodes = std::move(out);
  // Float weights nothing reads any more.
  std::set<std::string> read;
  for (const auto& n : g.nodes) {
    read.insert(n.inputs.begin(), n.inputs.end());
    read.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  }
  for (const auto& v : g.outputs) read.insert(v.name);
  for (auto it = g.initializers.begin(); it != g.initializers.end();)
    it = read.count(it->first) ? std::next(it) : g.initializers.erase(it);
  return report;
}

}  // namespace polyinfer::quant
