#include "quant/qdq.h"

#include "opt/graph_util.h"
#include "quant/rewrite_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace polyinfer::quant {

QuantParams quant_params(Range r, bool symmetric) {
  QuantParams p;
  if (symmetric) {
    const double m = std::max(std::fabs(double(r.lo)), std::fabs(double(r.hi)));
    if (m > 0) p.scale = float(m / 127.0);
    return p;
  }
  const double lo = std::min(0.0, double(r.lo)), hi = std::max(0.0, double(r.hi));
  if (hi - lo <= 0) return p;
  p.scale = float((hi - lo) / 255.0);
  const double zp = std::nearbyint(-128.0 - lo / double(p.scale));
  p.zero_point = int8_t(std::clamp(zp, -128.0, 127.0));
  return p;
}

namespace {

bool excluded(const ir::Node& n, const QdqOptions& o) { return named_in(n, o.exclude); }

bool is_constant(const ir::Graph& g, const std::string& name) {
  return g.initializers.count(name) > 0;
}

// Top-level readers of each value (explicit inputs and subgraph reads).
std::map<std::string, std::vector<size_t>> readers(const ir::Graph& g) {
  std::map<std::string, std::vector<size_t>> r;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& v : g.nodes[i].inputs)
      if (!v.empty()) r[v].push_back(i);
    for (const auto& v : g.nodes[i].implicit_inputs) r[v].push_back(i);
  }
  return r;
}

// The axis of `node`'s weight input `index` that indexes output channels, or -1 when the
// weight has none to split on (a constant left operand of MatMul, a 1-D weight).
int channel_axis(const ir::Graph& g, const ir::Node& n, size_t index) {
  const Tensor& w = g.initializers.at(n.inputs[index]);
  if (n.op_type == "Conv") return w.rank() >= 3 ? 0 : -1;
  if (n.op_type == "Gemm") {
    const ir::Attribute* tb = n.attr("transB");
    return w.rank() == 2 ? (tb && tb->i ? 0 : 1) : -1;
  }
  return index == 1 && w.rank() >= 2 ? w.rank() - 1 : -1;  // MatMul B [..., K, N]: N
}

// The node's inputs that are weights to store as int8.
std::vector<size_t> weight_inputs(const ir::Graph& g, const ir::Node& n) {
  if (n.op_type == "MatMul") {
    std::vector<size_t> w;
    for (size_t i = 0; i < 2; ++i)
      if (is_constant(g, n.inputs[i])) w.push_back(i);
    return w;
  }
  return {1};
}

template <class T> Tensor params(const std::vector<T>& v, bool vector) {
  return vector ? Tensor::from_vector<T>({int64_t(v.size())}, v) : Tensor::scalar<T>(v[0]);
}

}  // namespace

QdqPlan plan_qdq(const ir::Graph& g, const QdqOptions& o) {
  const int opset = default_opset(g);
  PI_CHECK(opset >= 10, InvalidArgument, "quantize: the model's opset ", opset,
           " has no QuantizeLinear/DequantizeLinear (opset >= 10): convert the model to a newer "
           "opset first (onnx.version_converter)");
  PI_CHECK(!o.per_channel || opset >= 13, InvalidArgument, "quantize --per-channel: the model's ",
           "opset ", opset,
           " has no per-axis DequantizeLinear (opset >= 13): convert the model "
           "(onnx.version_converter) or quantize per tensor");
  std::set<std::string> outputs;
  for (const auto& v : g.outputs) outputs.insert(v.name);
  const auto read_by = readers(g);
  QdqPlan p;
  std::set<std::string> planned;
  auto add_activation = [&](const std::string& v) {
    if (!outputs.count(v) && planned.insert(v).second) p.activations.push_back(v);
  };
  for (const auto& n : g.nodes) {
    if (!n.domain.empty() || !o.op_types.count(n.op_type)) continue;
    if (excluded(n, o)) {
      p.notes.push_back(n.label() + " stays float (excluded)");
      continue;
    }
    if (n.inputs.size() < 2 || n.outputs.empty()) continue;
    bool ok =
        is_float32(g, n.inputs[0]) && is_float32(g, n.inputs[1]) && is_float32(g, n.outputs[0]);
    if (!ok) {
      p.notes.push_back(n.label() + " stays float (not float32, or its types are unknown)");
      continue;
    }
    if (n.op_type != "MatMul" && !is_constant(g, n.inputs[1])) {
      p.notes.push_back(n.label() + " stays float (its weight is not a constant)");
      continue;
    }
    if (is_constant(g, n.inputs[0]) && (n.op_type != "MatMul" || is_constant(g, n.inputs[1])))
      continue;
    p.nodes.push_back(n.name);
    for (size_t i = 0; i < 2; ++i)
      if (!is_constant(g, n.inputs[i])) add_activation(n.inputs[i]);
    // The output, or the output of the Relu or Clip (ReLU6) that is its only reader: its 8-bit
    // range then starts at the activation's floor, so the QuantizeLinear's saturation does the
    // clamping and the int8 kernels drop the activation (opt/qdq_fusion.cpp).
    std::string out = n.outputs[0];
    auto it = read_by.find(out);
    if (!outputs.count(out) && it != read_by.end() && it->second.size() == 1) {
      const ir::Node& r = g.nodes[it->second[0]];
      const bool act = r.op_type == "Relu" || (r.op_type == "Clip" && opt::clip_bounds(g, r));
      if (act && r.domain.empty() && r.inputs[0] == out) out = r.outputs[0];
    }
    add_activation(out);
  }
  return p;
}

QdqReport apply_qdq(ir::Graph& g, const QdqPlan& plan, const std::map<std::string, Range>& ranges,
                    const QdqOptions& o) {
  const int opset = default_opset(g);
  Namer name(g);
  QdqReport report;
  std::vector<ir::Node> added;  // placed before the graph's nodes, then sorted
  std::set<std::string> quantized_nodes(plan.nodes.begin(), plan.nodes.end());

  // Activations: T → Q → DQ → T_dequantized, read by everyone but excluded nodes.
  std::map<std::string, float> scale_of_dq;  // dequantized activation → its scale
  for (const auto& t : plan.activations) {
    auto r = ranges.find(t);
    PI_CHECK(r != ranges.end(), Internal, "quantize: no calibrated range for '", t, "'");
    const QuantParams qp = quant_params(r->second, o.symmetric_activations);
    const std::string s = name(t + "_scale"), z = name(t + "_zero_point");
    const std::string q = name(t + "_quantized"), dq = name(t + "_dequantized");
    g.initializers[s] = Tensor::scalar<float>(qp.scale);
    g.initializers[z] = Tensor::scalar<int8_t>(qp.zero_point);
    for (auto& n : g.nodes) {
      if (n.domain.empty() && o.op_types.count(n.op_type) && excluded(n, o)) continue;
      for (auto& in : n.inputs)
        if (in == t) in = dq;
    }
    scale_of_dq[dq] = qp.scale;
    added.push_back(
        make_node("QuantizeLinear", name(t + "_QuantizeLinear"), {t, s, z}, {q}, opset));
    added.push_back(
        make_node("DequantizeLinear", name(t + "_DequantizeLinear"), {q, s, z}, {dq}, opset));
    ++report.activations;
  }

  // Weights (once per weight and axis: a weight two nodes share is stored once) and biases.
  std::map<std::pair<std::string, int>, std::pair<std::string, std::vector<float>>> done;
  std::set<std::string> replaced;
  for (auto& n : g.nodes) {
    if (!quantized_nodes.count(n.name)) continue;
    ++report.nodes;
    std::vector<float> w_scales;
    for (size_t i : weight_inputs(g, n)) {
      const std::string w = n.inputs[i];
      const int axis = o.per_channel ? channel_axis(g, n, i) : -1;
      auto key = std::make_pair(w, axis);
      if (!done.count(key)) {
        const Tensor& wt = g.initializers.at(w);
        QuantizedWeight qw =
            quantize_weight(wt, axis, o.reduce_range ? kReducedWeightMax : kFullWeightMax);
        const std::string qn = name(w + "_quantized"), s = name(w + "_scale"),
                          z = name(w + "_zero_point"), dq = name(w + "_dequantized");
        g.initializers[qn] = qw.q;
        g.initializers[s] = params(qw.scales, axis >= 0);
        g.initializers[z] = params(std::vector<int8_t>(qw.scales.size(), 0), axis >= 0);
        ir::Node d =
            make_node("DequantizeLinear", name(w + "_DequantizeLinear"), {qn, s, z}, {dq}, opset);
        if (axis >= 0) set_int_attr(d, "axis", axis);
        added.push_back(std::move(d));
        report.float_bytes += int64_t(wt.nbytes());
        report.quantized_bytes += int64_t(qw.q.nbytes());
        ++report.weights;
        done[key] = {dq, qw.scales};
      }
      n.inputs[i] = done[key].first;
      if (i == 1) w_scales = done[key].second;
      replaced.insert(w);
    }
    // The bias as int32 on the grid of the product it is added to (scale sx * sw), which is
    // what lets an int8 kernel add it to its int32 accumulators without rescaling.
    if (n.op_type == "MatMul" || n.inputs.size() < 3 || n.inputs[2].empty() || w_scales.empty())
      continue;
    const std::string b = n.inputs[2];
    auto bt = g.initializers.find(b);
    if (bt == g.initializers.end() || bt->second.dtype() != DType::Float32 ||
        bt->second.rank() != 1)
      continue;
    if (n.op_type == "Gemm") {
      const ir::Attribute* alpha = n.attr("alpha");
      const ir::Attribute* beta = n.attr("beta");
      if ((alpha && alpha->f != 1.0f) || (beta && beta->f != 1.0f)) continue;
    }
    auto x = scale_of_dq.find(n.inputs[0]);
    if (x == scale_of_dq.end()) continue;
    const Tensor bias = bt->second;
    const int64_t len = bias.numel();
    if (w_scales.size() != 1 && int64_t(w_scales.size()) != len) continue;
    std::vector<float> scales(static_cast<size_t>(len));
    std::vector<int32_t> q(static_cast<size_t>(len));
    bool fits = true;
    for (int64_t c = 0; c < len; ++c) {
      scales[size_t(c)] = x->second * w_scales[w_scales.size() == 1 ? 0 : size_t(c)];
      const double v = std::nearbyint(double(bias.data<float>()[c]) / double(scales[size_t(c)]));
      fits = fits && std::fabs(v) <= double(std::numeric_limits<int32_t>::max());
      q[size_t(c)] = fits ? int32_t(v) : 0;
    }
    if (!fits) {
      report.notes.push_back(n.label() +
                             ": bias kept in float (as int32 on the scale input × weight "
                             "it would overflow)");
      continue;
    }
    const bool vec = w_scales.size() != 1;
    const std::string qn = name(b + "_quantized"), s = name(b + "_scale"),
                      z = name(b + "_zero_point"), dq = name(b + "_dequantized");
    g.initializers[qn] = Tensor::from_vector<int32_t>({len}, q);
    g.initializers[s] =
        vec ? Tensor::from_vector<float>({len}, scales) : Tensor::scalar<float>(scales[0]);
    g.initializers[z] =
        vec ? Tensor::from_vector<int32_t>({len}, std::vector<int32_t>(size_t(len), 0))
            : Tensor::scalar<int32_t>(0);
    ir::Node d =
        make_node("DequantizeLinear", name(b + "_DequantizeLinear"), {qn, s, z}, {dq}, opset);
    if (vec) set_int_attr(d, "axis", 0);
    added.push_back(std::move(d));
    n.inputs[2] = dq;
    replaced.insert(b);
    report.float_bytes += int64_t(bias.nbytes());
    report.quantized_bytes += int64_t(len) * 4;
    ++report.biases;
  }

  // Float weights nobody reads any more (an excluded node may still read one).
  const auto read_by = readers(g);
  std::set<std::string> outputs;
  for (const auto& v : g.outputs) outputs.insert(v.name);
  for (const auto& w : replaced)
    if (!read_by.count(w) && !outputs.count(w)) g.initializers.erase(w);

  g.nodes.insert(g.nodes.begin(), added.begin(), added.end());
  g.sort_topologically();
  return report;
}

}  // namespace polyinfer::quant
