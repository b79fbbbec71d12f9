// FlexAttention (ai.onnx.preview, opset 1): scaled dot-product attention over 4-D inputs with two
// user graphs, PyTorch's flex_attention:
//
//   scores = (Q·√scale)(K·√scale)ᵀ           in T1, then cast to the softmax precision P
//   scores = score_mod(scores)               if given: [B, Hq, L, S] of P in and out
//   probs  = softmax(scores)                 over the keys, in P
//   probs  = prob_mod(probs)                 if given
//   Y      = probs · V                       in P, cast back to T1
//
// P is softmax_precision, or double for double inputs and float32 for the others. Grouped heads:
// query head h reads key/value head h / (Hq / Hkv). Masks are the score_mod's business (it writes
// -inf). Values are held in double and rounded to T1 or P at those steps (attention_math.h).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/attention_math.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

using attention_math::from_double;
using attention_math::Round;
using attention_math::rounding;
using attention_math::to_double;

class FlexAttentionKernel final : public Kernel {
 public:
  explicit FlexAttentionKernel(const KernelInfo& info)
      : has_scale_(info.has_attr("scale")),
        scale_(info.attr_float("scale", 0.0f)),
        who_(info.node().label()) {
    if (info.has_attr("softmax_precision")) {
      const int64_t p = info.attr_int("softmax_precision");
      PI_CHECK(p == 1 || p == 10 || p == 11 || p == 16, InvalidModel, who_,
               ": softmax_precision must be 1 (float), 10 (float16), 11 (double) or 16 "
               "(bfloat16), got ",
               p);
      precision_ = static_cast<DType>(p);
    }
    if (info.has_attr("score_mod")) score_mod_ = info.subgraph("score_mod");
    if (info.has_attr("prob_mod")) prob_mod_ = info.subgraph("prob_mod");
  }

  void run(KernelContext& ctx) override {
    const char* who = who_.c_str();
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    PI_CHECK(q.rank() == 4 && k.rank() == 4 && v.rank() == 4, ShapeMismatch, who_,
             ": Q, K and V must be 4-D [batch, heads, sequence, head size], got ", q.describe(),
             ", ", k.describe(), ", ", v.describe());
    PI_CHECK(k.dtype() == q.dtype() && v.dtype() == q.dtype(), InvalidArgument, who_,
             ": Q, K and V must have one dtype, got ", q.describe(), ", ", k.describe(), ", ",
             v.describe());
    const int64_t B = q.dim(0), Hq = q.dim(1), L = q.dim(2), E = q.dim(3);
    const int64_t Hkv = k.dim(1), S = k.dim(2), Ev = v.dim(3);
    PI_CHECK(k.dim(0) == B && v.dim(0) == B && v.dim(1) == Hkv && v.dim(2) == S && k.dim(3) == E,
             ShapeMismatch, who_, ": Q ", q.describe(), ", K ", k.describe(), " and V ",
             v.describe(), " do not agree on batch, heads, sequence length or head size");
    PI_CHECK(Hkv > 0 && Hq % Hkv == 0, ShapeMismatch, who_, ": query heads (", Hq,
             ") must be a multiple of key/value heads (", Hkv, ")");
    const int64_t group = Hq / Hkv;

    const DType t1 = q.dtype();
    const DType p_type = precision_ != DType::Undefined ? precision_
                         : t1 == DType::Float64         ? DType::Float64
                                                        : DType::Float32;
    const Round rt = rounding(t1), rp = rounding(p_type);

    // √scale is taken in float32 and cast to T1, as the spec's reference does; a negative scale
    // (no square root) multiplies the product instead.
    const double scale = has_scale_ ? double(scale_) : 1.0 / std::sqrt(double(E));
    const bool split_scale = scale >= 0;
    std::vector<double> Q = to_double(q, who), K = to_double(k, who);
    if (split_scale) {
      const double s = rt(std::sqrt(static_cast<float>(scale)));
      for (double& x : Q) x = rt(x * s);
      for (double& x : K) x = rt(x * s);
    }
    const Shape scores_shape{B, Hq, L, S};
    std::vector<double> scores(static_cast<size_t>(B * Hq * L * S));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h)
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < S; ++j) {
            const double* qr = Q.data() + ((b * Hq + h) * L + i) * E;
            const double* kr = K.data() + ((b * Hkv + h / group) * S + j) * E;
            double dot = 0;
            for (int64_t d = 0; d < E; ++d) dot += qr[d] * kr[d];
            scores[size_t(((b * Hq + h) * L + i) * S + j)] =
                rp(rt(split_scale ? dot : dot * scale));
          }

    if (score_mod_) scores = modify(*score_mod_, "score_mod", scores, scores_shape, p_type, ctx);
    std::vector<double> row(static_cast<size_t>(S));
    for (int64_t r = 0; r < B * Hq * L; ++r) {
      std::copy_n(scores.begin() + r * S, S, row.begin());
      attention_math::softmax(row, p_type);
      std::copy(row.begin(), row.end(), scores.begin() + r * S);
    }
    if (prob_mod_) scores = modify(*prob_mod_, "prob_mod", scores, scores_shape, p_type, ctx);

    std::vector<double> V = to_double(v, who);
    for (double& x : V) x = rp(x);
    std::vector<double> y(static_cast<size_t>(B * Hq * L * Ev), 0.0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h)
        for (int64_t i = 0; i < L; ++i) {
          double* yr = y.data() + ((b * Hq + h) * L + i) * Ev;
          const double* pr = scores.data() + ((b * Hq + h) * L + i) * S;
          for (int64_t j = 0; j < S; ++j) {
            const double* vr = V.data() + ((b * Hkv + h / group) * S + j) * Ev;
            for (int64_t e = 0; e < Ev; ++e) yr[e] += pr[j] * vr[e];
          }
          for (int64_t e = 0; e < Ev; ++e) yr[e] = rt(rp(yr[e]));
        }
    from_double(ctx.output(0, t1, {B, Hq, L, Ev}), y, who);
  }

 private:
  // Runs a modifier graph on `x` (a [B, Hq, L, S] tensor of `type`) and returns its output, which
  // must have the same shape and type.
  std::vector<double> modify(SubgraphRunner& graph, const char* name, const std::vector<double>& x,
                             const Shape& shape, DType type, KernelContext& ctx) const {
    Tensor in = Tensor::empty(type, shape);
    from_double(in, x, who_.c_str());
    const std::vector<Value> out = graph.run({Value(in)}, ctx.scope());
    PI_CHECK(out.size() == 1 && out[0].is_tensor(), InvalidModel, who_, ": ", name,
             " must produce one tensor");
    const Tensor& t = out[0].tensor();
    PI_CHECK(t.dtype() == type && t.shape() == shape, InvalidModel, who_, ": ", name,
             " must return its input's type and shape ", dtype_name(type), shape_str(shape),
             ", got ", t.describe());
    return to_double(t, who_.c_str());
  }

  bool has_scale_;
  float scale_;
  DType precision_ = DType::Undefined;
  std::unique_ptr<SubgraphRunner> score_mod_, prob_mod_;
  std::string who_;
};

}  // namespace

PI_REGISTER_KERNEL("cpu", "ai.onnx.preview", FlexAttention, 1, 1, FlexAttentionKernel);

}  // namespace polyinfer
