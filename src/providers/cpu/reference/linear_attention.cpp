// LinearAttention (opset 27): attention as a recurrence over a [d_k, d_v] state per key/value
// head, one token at a time (linear attention, RetNet, GLA, DeltaNet, Gated DeltaNet).
//
//   linear:      S = S + k ⊗ v
//   gated:       S = exp(g) * S + k ⊗ v
//   delta:       S = S + k ⊗ β (v - Sᵀk)
//   gated_delta: S = exp(g) * S, then S = S + k ⊗ β (v - Sᵀk)
//   o = scale · qᵀ S        (each query head reads its key/value head's state: GQA)
//
// Q, K, V, decay and beta come packed as [B, T, heads * dim]; the state [B, H_kv, d_k, d_v] is
// past_state or zeros. decay g is per head ([B, T, H_kv]) or per key dimension
// ([B, T, H_kv * d_k]); beta per head ([B, T, H_kv]) or shared ([B, T, 1]). The recurrence runs
// in double, the inputs read once and the outputs rounded once; the spec's reference runs it in
// float32. chunk_size is a hint for chunk-parallel kernels and changes nothing here.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

using LinearFloats = TypeList<float, Float16, BFloat16>;  // the spec's T and S

std::vector<double> doubles(const Tensor& t, const char* who) {
  return dispatch(LinearFloats{}, t.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<float>(p[i]));
    return v;
  });
}

void store(Tensor& t, const std::vector<double>& v, const char* who) {
  dispatch(LinearFloats{}, t.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(static_cast<float>(v[i]));
  });
}

class LinearAttentionKernel final : public Kernel {
 public:
  explicit LinearAttentionKernel(const KernelInfo& info)
      : hq_(info.attr_int("q_num_heads")),
        hkv_(info.attr_int("kv_num_heads")),
        scale_(info.attr_float("scale", 0.0f)),
        who_(info.node().label()) {
    PI_CHECK(hq_ > 0 && hkv_ > 0 && hq_ % hkv_ == 0, InvalidModel, who_, ": q_num_heads (", hq_,
             ") must be a positive multiple of kv_num_heads (", hkv_, ")");
    const std::string rule = info.attr_string("update_rule", "gated_delta");
    PI_CHECK(rule == "linear" || rule == "gated" || rule == "delta" || rule == "gated_delta",
             InvalidModel, who_,
             ": update_rule must be 'linear', 'gated', 'delta' or 'gated_delta', got '", rule, "'");
    gated_ = rule == "gated" || rule == "gated_delta";
    delta_ = rule == "delta" || rule == "gated_delta";
    PI_CHECK(info.has_input(4) == gated_, InvalidModel, who_, ": update_rule '", rule, "' ",
             gated_ ? "needs" : "takes no", " decay input");
    PI_CHECK(info.has_input(5) == delta_, InvalidModel, who_, ": update_rule '", rule, "' ",
             delta_ ? "needs" : "takes no", " beta input");
  }

  void run(KernelContext& ctx) override {
    const char* who = who_.c_str();
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    PI_CHECK(q.rank() == 3 && k.rank() == 3 && v.rank() == 3, ShapeMismatch, who_,
             ": query, key and value must be [batch, length, heads * dim], got ", q.describe(),
             ", ", k.describe(), ", ", v.describe());
    PI_CHECK(k.dtype() == q.dtype() && v.dtype() == q.dtype(), InvalidArgument, who_,
             ": query, key and value must have one dtype, got ", q.describe(), ", ", k.describe(),
             ", ", v.describe());
    const int64_t B = q.dim(0), T = q.dim(1);
    PI_CHECK(q.dim(2) % hq_ == 0 && v.dim(2) % hkv_ == 0, ShapeMismatch, who_, ": query ",
             q.describe(), " and value ", v.describe(), " must split into ", hq_, " and ", hkv_,
             " heads");
    const int64_t dk = q.dim(2) / hq_, dv = v.dim(2) / hkv_, group = hq_ / hkv_;
    PI_CHECK(
        k.dim(0) == B && k.dim(1) == T && v.dim(0) == B && v.dim(1) == T && k.dim(2) == hkv_ * dk,
        ShapeMismatch, who_, ": key ", k.describe(), " and value ", v.describe(), " must be [", B,
        ", ", T, ", ", hkv_, " * dim] with the query's head size ", dk);

    // Per-step gate values: decay per head (width 1) or per key dimension (width dk); beta per
    // head or one for all heads.
    std::vector<double> g, beta;
    int64_t g_width = 0, beta_heads = 0;
    if (gated_) {
      const Tensor& d = ctx.input(4);
      PI_CHECK(d.dtype() == q.dtype() && d.rank() == 3 && d.dim(0) == B && d.dim(1) == T &&
                   (d.dim(2) == hkv_ || d.dim(2) == hkv_ * dk),
               ShapeMismatch, who_, ": decay must be [", B, ", ", T, ", ", hkv_, "] or [", B, ", ",
               T, ", ", hkv_ * dk, "] of the query's dtype, got ", d.describe());
      g_width = d.dim(2) / hkv_;
      g = doubles(d, who);
    }
    if (delta_) {
      const Tensor& be = ctx.input(5);
      PI_CHECK(be.dtype() == q.dtype() && be.rank() == 3 && be.dim(0) == B && be.dim(1) == T &&
                   (be.dim(2) == hkv_ || be.dim(2) == 1),
               ShapeMismatch, who_, ": beta must be [", B, ", ", T, ", ", hkv_, "] or [", B, ", ",
               T, ", 1] of the query's dtype, got ", be.describe());
      beta_heads = be.dim(2);
      beta = doubles(be, who);
    }
    DType state_type = q.dtype();
    std::vector<double> S(static_cast<size_t>(B * hkv_ * dk * dv), 0.0);
    if (ctx.has_input(3)) {
      const Tensor& p = ctx.input(3);
      const Shape want{B, hkv_, dk, dv};
      PI_CHECK(p.shape() == want, ShapeMismatch, who_, ": past_state must be [", B, ", ", hkv_,
               ", ", dk, ", ", dv, "], got ", p.describe());
      state_type = p.dtype();
      S = doubles(p, who);
    }
    const std::vector<double> Q = doubles(q, who), K = doubles(k, who), V = doubles(v, who);
    const double scale = scale_ != 0.0f ? double(scale_) : 1.0 / std::sqrt(double(dk));

    std::vector<double> out(static_cast<size_t>(B * T * hq_ * dv), 0.0);
    std::vector<double> u(static_cast<size_t>(dv));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < hkv_; ++h) {
        double* s = S.data() + (b * hkv_ + h) * dk * dv;  // [dk][dv]
        for (int64_t t = 0; t < T; ++t) {
          const int64_t bt = b * T + t;
          const double* kt = K.data() + (bt * hkv_ + h) * dk;
          const double* vt = V.data() + (bt * hkv_ + h) * dv;
          if (gated_) {
            const double* gt = g.data() + (bt * hkv_ + h) * g_width;
            for (int64_t d = 0; d < dk; ++d) {
              const double f = std::exp(gt[g_width == 1 ? 0 : d]);
              for (int64_t m = 0; m < dv; ++m) s[d * dv + m] *= f;
            }
          }
          if (delta_) {
            const double bet = beta[size_t(bt * beta_heads + (beta_heads == 1 ? 0 : h))];
            for (int64_t m = 0; m < dv; ++m) {
              double read = 0;  // (Sᵀk)[m]
              for (int64_t d = 0; d < dk; ++d) read += s[d * dv + m] * kt[d];
              u[size_t(m)] = bet * (vt[m] - read);
            }
          } else {
            std::copy(vt, vt + dv, u.begin());
          }
          for (int64_t d = 0; d < dk; ++d)
            for (int64_t m = 0; m < dv; ++m) s[d * dv + m] += kt[d] * u[size_t(m)];
          for (int64_t r = 0; r < group; ++r) {
            const int64_t hq = h * group + r;  // query heads share their kv head in order
            const double* qt = Q.data() + (bt * hq_ + hq) * dk;
            double* o = out.data() + (bt * hq_ + hq) * dv;
            for (int64_t d = 0; d < dk; ++d)
              for (int64_t m = 0; m < dv; ++m) o[m] += qt[d] * s[d * dv + m];
            for (int64_t m = 0; m < dv; ++m) o[m] *= scale;
          }
        }
      }
    store(ctx.output(0, q.dtype(), {B, T, hq_ * dv}), out, who);
    if (ctx.wants_output(1)) store(ctx.output(1, state_type, {B, hkv_, dk, dv}), S, who);
  }

 private:
  int64_t hq_, hkv_;
  float scale_;
  bool gated_ = false, delta_ = false;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(LinearAttention, 27, 28, LinearAttentionKernel);

}  // namespace polyinfer
