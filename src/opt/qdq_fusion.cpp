// QDQ fusion: the float "fake-quantized" operators of a QDQ model run on the 8-bit values.
//
//   DequantizeLinear(xq) ─┐
//   DequantizeLinear(wq) ─┼─ Conv ─ [Relu | Clip] ─ QuantizeLinear → yq
//   [DequantizeLinear(bq)]┘
// becomes QLinearConv(xq, sx, zx, wq, sw, zw, sy, zy, b32) → yq; likewise
//   DQ(a) · DQ(b) → MatMul → Q                       → QLinearMatMul
//   DQ(a) + DQ(b) → Add [→ Relu/Clip] → Q (same shapes) → ai.polyinfer QLinearAdd (exact: the
//                                                      float nodes' formula, one pass over bytes)
//   DQ → MaxPool / Concat → Q, one scale and zero point → MaxPool / Concat of the bytes (exact)
//   DQ(a) · DQ(B) + C → Gemm [→ Q] (transA 0, alpha 1) → ai.polyinfer QLinearGemm (B as [K, N],
//                                                      C·beta as its int32 bias; float32 out
//                                                      without the Q)
//   other Gemm(.., DQ(constant B), DQ(constant C))    → the constants folded to float
// The DequantizeLinear nodes stay (other readers may need them; dead-node elimination removes
// the rest). The products are standard ONNX but not the same numbers: the float path rounds
// nothing between the product and the QuantizeLinear, the integer one rounds
// (acc + bias)·sx·sw/sy once — the results agree within one output quantization step (the bias
// below adds at most half a step of sx·sw, far below sy).
//
// Conditions: constant scalar activation scales and zero points (u8 or s8); constant int8
// weights with zero point 0 and one scale (or one per output channel: axis 0 for Conv, the
// column axis for MatMul's [K, N] B); the product's output read by the QuantizeLinear alone
// (or by a Relu or constant-bound Clip read by it alone, dropped only where the QuantizeLinear's
// saturation already clamps at its bounds: a Relu when zy is the type's minimum, a ReLU6 when
// the 8-bit range is also at most [0, 6]); Quantize/DequantizeLinear of opset 10 on, in their
// opset-10 form: 8-bit types, no blocks, no output_dtype or precision (the attributes of opsets
// 21-25 that change the arithmetic; a node that sets one stays unfused). The bias (a
// DequantizeLinear'd int32, or a float constant) is requantized to scale sx·sw[m], zero point 0:
// for QDQ exporters' biases (scale sx·sw) that is the same integer.
#include <cmath>
#include <limits>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

// A DequantizeLinear's operands, when they are of the supported forms.
struct Dq {
  std::string q, scale, zp;  // zp may be "" (no zero point input)
  std::vector<double> scales, zps;
  int64_t axis = 1;
};

std::optional<Dq> dequantize_of(const ir::Graph& g, const Uses& u, const std::string& v) {
  const int pi = u.producer(v);
  if (pi < 0) return std::nullopt;
  const ir::Node& n = g.nodes[pi];
  if (n.op_type != "DequantizeLinear" || !n.domain.empty() || n.inputs.size() < 2 ||
      n.attr("block_size") != nullptr || n.attr("output_dtype") != nullptr)
    return std::nullopt;
  Dq d;
  d.q = n.inputs[0];
  d.scale = n.inputs[1];
  d.zp = n.inputs.size() > 2 ? n.inputs[2] : "";
  d.axis = attr_int(n, "axis", 1);
  const Tensor* s = constant(g, d.scale);
  if (!s || s->dtype() != DType::Float32 || s->rank() > 1) return std::nullopt;
  d.scales = to_doubles(*s);
  if (!d.zp.empty()) {
    const Tensor* z = constant(g, d.zp);
    if (!z || z->numel() != s->numel()) return std::nullopt;
    d.zps = to_doubles(*z);
  } else {
    d.zps.assign(d.scales.size(), 0.0);
  }
  for (double x : d.scales)
    if (!(x > 0) || !std::isfinite(x)) return std::nullopt;
  return d;
}

bool is_8bit(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// Whether clamping to [lo, hi] before QuantizeLinear(scale, zp) to `type` changes nothing the
// quantization's own saturation does not: a value below lo must round to the type's minimum
// anyway (lo/scale at most a quarter step above qmin - zp; a Relu needs zp = qmin), one above hi
// to its maximum. The quarter step keeps float rounding of x/scale on the right side.
bool saturation_clamps(std::pair<float, float> bounds, double scale, double zp, DType type) {
  const double qmin = type == DType::UInt8 ? 0 : -128, qmax = type == DType::UInt8 ? 255 : 127;
  return bounds.first / scale <= qmin - zp + 0.25 && bounds.second / scale >= qmax - zp - 0.25;
}

// A quantized activation: scalar scale and zero point, u8 or s8 data.
bool activation_ok(const ir::Graph& g, const Dq& d) {
  return d.scales.size() == 1 && !d.zp.empty() && is_8bit(elem_type(g, d.zp)) &&
         (elem_type(g, d.q) == DType::Undefined || elem_type(g, d.q) == elem_type(g, d.zp));
}

// Constant int8 weights with zero point 0, per tensor or per channel along `axis`.
bool weights_ok(const ir::Graph& g, const Dq& d, int axis) {
  const Tensor* w = constant(g, d.q);
  if (!w || w->dtype() != DType::Int8 || d.zp.empty()) return false;
  for (double z : d.zps)
    if (z != 0) return false;
  if (d.scales.size() == 1) return true;
  const int64_t a = d.axis < 0 ? d.axis + w->rank() : d.axis;
  return a == axis && static_cast<int64_t>(d.scales.size()) == w->dim(axis);
}

class QdqFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-qdq"; }
  int min_level() const override { return 2; }

  int run(ir::Graph& g) override {
    auto op = g.opsets.find("");
    if (op == g.opsets.end() || op->second < 10) return 0;
    if (!has_op(g, {"DequantizeLinear"})) return 0;
    const Uses u(g);
    NameGen names(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& qn = g.nodes[i];
      if (qn.op_type != "QuantizeLinear" || !qn.domain.empty() || qn.inputs.size() != 3 ||
          qn.outputs.size() != 1 || qn.attr("saturate") || qn.attr("block_size") ||
          qn.attr("output_dtype") || qn.attr("precision"))
        continue;
      const std::optional<double> sy = scalar_constant(g, qn.inputs[1]);
      const std::optional<double> zy = scalar_constant(g, qn.inputs[2]);
      const DType yt = elem_type(g, qn.inputs[2]);
      if (!sy || !zy || !(*sy > 0) || !is_8bit(yt)) continue;
      // Through an optional Relu or Clip that the QuantizeLinear's saturation makes redundant.
      std::string v = qn.inputs[0];
      int pi = u.producer(v);
      int relu = -1;
      if (pi >= 0 && !dead[pi] && g.nodes[pi].domain.empty() && u.single_reader(v)) {
        std::optional<std::pair<float, float>> bounds;
        if (g.nodes[pi].op_type == "Relu") bounds = {0.f, std::numeric_limits<float>::infinity()};
        if (g.nodes[pi].op_type == "Clip") bounds = clip_bounds(g, g.nodes[pi]);
        if (bounds) {
          if (!saturation_clamps(*bounds, *sy, *zy, yt)) continue;
          relu = pi;
          v = g.nodes[pi].inputs[0];
          pi = u.producer(v);
        }
      }
      if (pi < 0 || dead[pi] || !u.single_reader(v)) continue;
      ir::Node& p = g.nodes[pi];
      if (!p.domain.empty() || p.outputs.size() != 1) continue;
      std::optional<ir::Node> fused;
      if (p.op_type == "Conv") fused = conv(g, u, names, p, qn);
      else if (p.op_type == "MatMul")
        fused = matmul(g, u, p, qn);
      else if (p.op_type == "Gemm")
        fused = gemm(g, u, names, p, &qn);
      else if (p.op_type == "Add")
        fused = add(g, u, p, qn);
      else if (p.op_type == "MaxPool" && relu < 0)
        fused = max_pool(g, u, p, qn);
      else if (p.op_type == "Concat" && relu < 0)
        fused = concat(g, u, p, qn);
      if (!fused) continue;
      dead[pi] = true;
      if (relu >= 0) dead[relu] = true;
      qn = std::move(*fused);
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    // The Gemms left over have a float output (a classifier's logits, which QDQ models keep
    // float): QLinearGemm without an output scale, or else float constants.
    const Uses left(g);
    for (ir::Node& n : g.nodes) {
      if (n.op_type != "Gemm" || !n.domain.empty()) continue;
      std::optional<ir::Node> fused;
      if (n.outputs.size() == 1 && elem_type(g, n.outputs[0]) == DType::Float32)
        fused = gemm(g, left, names, n, nullptr);
      if (fused) {
        n = std::move(*fused);
        ++count;
      } else {
        count += fold_gemm_constants(g, left, names, n);
      }
    }
    return count;
  }

 private:
  // A Gemm with no integer form (transA, alpha, a B of another form): its
  // dequantized constant B and C become float initializers, computed once as the
  // DequantizeLinear kernel would (float(q - zp)·s), so the oneDNN float kernel can prepack B
  // instead of the session dequantizing the weights on every run.
  static int fold_gemm_constants(ir::Graph& g, const Uses& u, NameGen& names, ir::Node& gemm) {
    int n = 0;
    for (size_t k = 1; k < gemm.inputs.size() && k < 3; ++k) {
      const std::optional<Dq> d = dequantize_of(g, u, gemm.inputs[k]);
      if (!d) continue;
      const Tensor* q = constant(g, d->q);
      if (!q || q->rank() < 1 ||
          !(q->dtype() == DType::Int8 || q->dtype() == DType::UInt8 || q->dtype() == DType::Int32))
        continue;
      int64_t inner = 1, count = static_cast<int64_t>(d->scales.size());
      if (count > 1) {
        const int64_t axis = d->axis < 0 ? d->axis + q->rank() : d->axis;
        if (axis < 0 || axis >= q->rank() || q->dim(static_cast<int>(axis)) != count) continue;
        for (int dd = static_cast<int>(axis) + 1; dd < q->rank(); ++dd) inner *= q->dim(dd);
      }
      const std::vector<double> qv = to_doubles(*q);
      std::vector<float> f(qv.size());
      for (size_t e = 0; e < qv.size(); ++e) {
        const size_t c = count == 1 ? 0 : static_cast<size_t>((int64_t(e) / inner) % count);
        f[e] = float(qv[e] - d->zps[c]) * float(d->scales[c]);
      }
      const std::string name = names.fresh(gemm.inputs[k] + "_folded");
      g.initializers[name] = Tensor::from_vector<float>(q->shape(), f);
      gemm.inputs[k] = name;
      ++n;
    }
    return n;
  }

  static ir::Node qlinear_node(const ir::Node& p, const ir::Node& q, const std::string& op) {
    ir::Node n;
    n.name = p.name;
    n.op_type = op;
    n.opset = q.opset;
    n.outputs = q.outputs;
    return n;
  }

  // A product's bias `v` ([M] values in real units: a DequantizeLinear'd constant or a float
  // constant, times `beta`) as a new int32[M] initializer at scale sx·sw[m] with zero point 0,
  // what the integer kernels add to their accumulators; nullopt when `v` is none of those or a
  // value overflows int32.
  static std::optional<std::string> int32_bias(ir::Graph& g, const Uses& u, NameGen& names,
                                               const std::string& v, int64_t M, double beta,
                                               const Dq& x, const Dq& w, const std::string& node) {
    std::vector<double> real;
    if (const std::optional<Dq> b = dequantize_of(g, u, v)) {
      const Tensor* bq = constant(g, b->q);
      if (!bq || bq->numel() != M || bq->rank() > 2) return std::nullopt;
      if (b->scales.size() != 1 && static_cast<int64_t>(b->scales.size()) != M) return std::nullopt;
      const std::vector<double> bv = to_doubles(*bq);
      for (int64_t m = 0; m < M; ++m) {
        const size_t k = b->scales.size() == 1 ? 0 : static_cast<size_t>(m);
        real.push_back((bv[m] - b->zps[k]) * b->scales[k]);
      }
    } else if (const Tensor* bf = constant(g, v)) {
      if (bf->dtype() != DType::Float32 || bf->numel() != M || bf->rank() > 2) return std::nullopt;
      real = to_doubles(*bf);
    } else {
      return std::nullopt;
    }
    // Float products, as the exporters compute the bias scale.
    std::vector<int32_t> b32(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m) {
      const float s = float(x.scales[0]) * float(w.scales[w.scales.size() == 1 ? 0 : m]);
      const double r = std::nearbyint(beta * real[m] / double(s));
      if (!(std::fabs(r) < 2147483647.0)) return std::nullopt;
      b32[m] = int32_t(r);
    }
    const std::string name = names.fresh(node + "_bias_int32");
    g.initializers[name] = Tensor::from_vector<int32_t>({M}, b32);
    return name;
  }

  static std::optional<ir::Node> conv(ir::Graph& g, const Uses& u, NameGen& names,
                                      const ir::Node& c, const ir::Node& q) {
    if (c.inputs.size() < 2) return std::nullopt;
    const std::optional<Dq> x = dequantize_of(g, u, c.inputs[0]);
    const std::optional<Dq> w = dequantize_of(g, u, c.inputs[1]);
    if (!x || !w || !activation_ok(g, *x) || !weights_ok(g, *w, 0)) return std::nullopt;
    const int64_t M = constant(g, w->q)->dim(0);
    std::string bias;
    if (c.inputs.size() > 2 && !c.inputs[2].empty()) {
      const std::optional<std::string> b =
          int32_bias(g, u, names, c.inputs[2], M, 1.0, *x, *w, c.name);
      if (!b) return std::nullopt;
      bias = *b;
    }
    ir::Node n = qlinear_node(c, q, "QLinearConv");
    n.inputs = {x->q, x->scale, x->zp, w->q, w->scale, w->zp, q.inputs[1], q.inputs[2]};
    if (!bias.empty()) n.inputs.push_back(bias);
    n.attrs = c.attrs;
    return n;
  }

  // Add of two same-shape dequantized activations (a residual connection): ai.polyinfer
  // QLinearAdd, which computes exactly what the float nodes do, in one pass over bytes.
  static std::optional<ir::Node> add(ir::Graph& g, const Uses& u, const ir::Node& n,
                                     const ir::Node& q) {
    if (n.inputs.size() != 2) return std::nullopt;
    const std::optional<Dq> a = dequantize_of(g, u, n.inputs[0]);
    const std::optional<Dq> b = dequantize_of(g, u, n.inputs[1]);
    if (!a || !b || !activation_ok(g, *a) || !activation_ok(g, *b) ||
        !same_shape(g, n.inputs[0], n.inputs[1]) || !static_shape(g, n.inputs[0]))
      return std::nullopt;
    ir::Node r = poly_node(g, "QLinearAdd", n.name);
    r.outputs = q.outputs;
    r.inputs = {a->q, a->scale, a->zp, b->q, b->scale, b->zp, q.inputs[1], q.inputs[2]};
    return r;
  }

  // DQ → MaxPool → Q with the same scale and zero point (what QDQ exporters write): MaxPool on
  // the 8-bit values. Exact: dequantization is increasing, so the maximum commutes with it, and
  // Q(DQ(v)) = v for the same parameters (float(v - z)·s / s lies far within 0.5 of v - z).
  static std::optional<ir::Node> max_pool(ir::Graph& g, const Uses& u, const ir::Node& n,
                                          const ir::Node& q) {
    if (n.inputs.size() != 1 || (n.outputs.size() > 1 && !n.outputs[1].empty()) ||
        n.opset < 12)  // 8-bit MaxPool from opset 12
      return std::nullopt;
    const std::optional<Dq> x = dequantize_of(g, u, n.inputs[0]);
    if (!x || !same_params(g, *x, q)) return std::nullopt;
    ir::Node r = n;
    r.inputs = {x->q};
    r.outputs = q.outputs;
    return r;
  }

  // True when `d` dequantizes with exactly the parameters `q` (a QuantizeLinear) quantizes with.
  static bool same_params(const ir::Graph& g, const Dq& d, const ir::Node& q) {
    const std::optional<double> sy = scalar_constant(g, q.inputs[1]);
    const std::optional<double> zy = scalar_constant(g, q.inputs[2]);
    return activation_ok(g, d) && elem_type(g, d.zp) == elem_type(g, q.inputs[2]) && sy && zy &&
           float(*sy) == float(d.scales[0]) && *zy == d.zps[0];
  }

  // DQ → Concat → Q with one scale and zero point throughout: Concat of the 8-bit values
  // (exact, as for MaxPool). Concats of differently quantized inputs stay float.
  static std::optional<ir::Node> concat(ir::Graph& g, const Uses& u, const ir::Node& n,
                                        const ir::Node& q) {
    if (n.inputs.empty()) return std::nullopt;
    ir::Node r = n;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const std::optional<Dq> x = dequantize_of(g, u, n.inputs[k]);
      if (!x || !same_params(g, *x, q)) return std::nullopt;
      r.inputs[k] = x->q;
    }
    r.outputs = q.outputs;
    return r;
  }

  static std::optional<ir::Node> matmul(ir::Graph& g, const Uses& u, const ir::Node& mm,
                                        const ir::Node& q) {
    if (mm.inputs.size() != 2) return std::nullopt;
    const std::optional<Dq> a = dequantize_of(g, u, mm.inputs[0]);
    const std::optional<Dq> b = dequantize_of(g, u, mm.inputs[1]);
    if (!a || !b || !activation_ok(g, *a)) return std::nullopt;
    const Tensor* bq = constant(g, b->q);
    if (!bq || bq->rank() != 2 || !weights_ok(g, *b, 1)) return std::nullopt;
    ir::Node n = qlinear_node(mm, q, "QLinearMatMul");
    n.inputs = {a->q, a->scale, a->zp, b->q, b->scale, b->zp, q.inputs[1], q.inputs[2]};
    return n;
  }

  // Gemm(DQ(a), DQ(constant int8 B), C) with transA = 0 and alpha = 1 (a classifier's last
  // layer): ai.polyinfer QLinearGemm over B as [K, N] (transposed here when transB) with C·beta
  // as its int32 bias.
  static std::optional<ir::Node> gemm(ir::Graph& g, const Uses& u, NameGen& names,
                                      const ir::Node& gm, const ir::Node* q) {
    if (gm.inputs.size() < 2 || attr_int(gm, "transA", 0) != 0 || attr_float(gm, "alpha", 1) != 1)
      return std::nullopt;
    const bool trans_b = attr_int(gm, "transB", 0) != 0;
    const std::optional<Dq> a = dequantize_of(g, u, gm.inputs[0]);
    const std::optional<Dq> b = dequantize_of(g, u, gm.inputs[1]);
    if (!a || !b || !activation_ok(g, *a)) return std::nullopt;
    const Tensor* bq = constant(g, b->q);
    if (!bq || bq->rank() != 2 || !weights_ok(g, *b, trans_b ? 0 : 1)) return std::nullopt;
    const int64_t N = bq->dim(trans_b ? 0 : 1), K = bq->dim(trans_b ? 1 : 0);
    std::string bias;
    if (gm.inputs.size() > 2 && !gm.inputs[2].empty()) {
      const std::optional<std::string> c =
          int32_bias(g, u, names, gm.inputs[2], N, attr_float(gm, "beta", 1), *a, *b, gm.name);
      if (!c) return std::nullopt;
      bias = *c;
    }
    std::string weights = b->q;
    if (trans_b) {
      const int8_t* src = bq->data<int8_t>();
      Tensor t = Tensor::empty(DType::Int8, {K, N});
      int8_t* dst = t.data<int8_t>();
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) dst[k * N + n] = src[n * K + k];
      weights = names.fresh(b->q + "_kn");
      g.initializers[weights] = t;
    }
    ir::Node n = poly_node(g, "QLinearGemm", gm.name);
    n.inputs = {a->q,
                a->scale,
                a->zp,
                weights,
                b->scale,
                b->zp,
                q ? q->inputs[1] : "",
                q ? q->inputs[2] : ""};
    if (!bias.empty()) n.inputs.push_back(bias);
    n.outputs = q ? q->outputs : gm.outputs;
    return n;
  }
};

}  // namespace

std::unique_ptr<Pass> make_qdq_fusion() { return std::make_unique<QdqFusion>(); }

}  // namespace polyinfer::opt
