// com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization, and
// SimplifiedLayerNormalization (ONNX Runtime registers it in the default domain, opset 1; it is
// registered here in com.microsoft too, where some exporters put it).
//
//   SkipLayerNormalization(input, skip, gamma, beta?, bias?):
//     s = input + skip (+ bias);  output = (s - mean(s)) / sqrt(var(s) + epsilon) * gamma (+ beta)
//   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?):
//     s = input + skip (+ bias);  output = s / sqrt(mean(s^2) + epsilon) * gamma
//   Outputs: output, mean, inv_std_var (float32, input's shape with the last dimension 1),
//   input_skip_bias_sum (s). Both normalize over the last dimension (hidden); skip is shaped as
//   input or broadcasts from its trailing dimensions ([1, S, H] or [S, H] for [B, S, H]).
//   SkipSimplifiedLayerNormalization's mean output is zeros, as ONNX Runtime 1.32 writes it.
//   SimplifiedLayerNormalization(X, scale): RMS normalization over the axes [axis, rank),
//   Y (scale's dtype) = X / sqrt(mean(X^2) + epsilon) * scale; inv_std_var with those axes 1.
//
// One pass per row, rows split over the threads: the sum is formed once (into the sum output
// when it is wanted), and its mean and variance come from two passes over the row in L1.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "providers/cpu/contrib/contrib_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::contrib {
namespace {

// The row statistics: mean (0 for the simplified form) and 1 / sqrt(var + eps), where var is
// the mean square for the simplified form.
struct RowStats {
  float mean = 0, inv = 0;
};

RowStats row_stats(const float* s, int64_t h, float eps, bool simplified) {
  double sum = 0;
  if (!simplified)
    for (int64_t i = 0; i < h; ++i) sum += s[i];
  const float mean = static_cast<float>(sum / static_cast<double>(h));
  double sq = 0;
  for (int64_t i = 0; i < h; ++i) {
    const float d = s[i] - mean;
    sq += static_cast<double>(d) * d;
  }
  const float var = static_cast<float>(sq / static_cast<double>(h));
  return {mean, 1.0f / std::sqrt(var + eps)};
}

// A 1-D parameter of exactly `h` values (gamma, beta, bias), or absent.
FloatIn hidden_param(const KernelContext& ctx, size_t i, int64_t h, const std::string& who,
                     const char* what) {
  if (!ctx.has_input(i)) return FloatIn();
  const Tensor& t = ctx.input(i);
  PI_CHECK(t.numel() == h, ShapeMismatch, who, ": ", what, " has shape ", shape_str(t.shape()),
           "; it must hold the hidden size's ", h, " values");
  return FloatIn(t, who, what);
}

class SkipLayerNormKernel final : public Kernel {
 public:
  explicit SkipLayerNormKernel(const KernelInfo& info)
      : simplified_(info.node().op_type == "SkipSimplifiedLayerNormalization"),
        eps_(info.attr_float("epsilon", 1e-12f)),
        who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& skip = ctx.input(1);
    PI_CHECK(x.rank() >= 2, ShapeMismatch, who_, ": input must be 2-D or 3-D, got ",
             shape_str(x.shape()));
    PI_CHECK(skip.dtype() == x.dtype(), InvalidArgument, who_, ": skip is ",
             dtype_name(skip.dtype()), " but input is ", dtype_name(x.dtype()));
    const int64_t h = x.shape().back();
    // skip: input's shape, or its trailing dimensions with leading 1s ([1, S, H], [S, H]).
    size_t lead = 0;
    while (lead < skip.shape().size() && skip.shape()[lead] == 1) ++lead;
    const Shape tail(skip.shape().begin() + static_cast<int64_t>(lead), skip.shape().end());
    const bool trailing =
        skip.rank() >= 1 && tail.size() <= x.shape().size() &&
        std::equal(tail.begin(), tail.end(), x.shape().end() - static_cast<int64_t>(tail.size())) &&
        skip.shape().back() == h;
    PI_CHECK(trailing, ShapeMismatch, who_, ": skip has shape ", shape_str(skip.shape()),
             ", which is neither input's ", shape_str(x.shape()), " nor its trailing dimensions");
    const size_t gi = 2, bi = simplified_ ? 99 : 3, biasi = simplified_ ? 3 : 4;
    const FloatIn xs(x, who_, "input"), ss(skip, who_, "skip");
    const FloatIn gamma = hidden_param(ctx, gi, h, who_, "gamma");
    PI_CHECK(gamma, InvalidArgument, who_, ": gamma is required");
    const FloatIn beta = simplified_ ? FloatIn() : hidden_param(ctx, bi, h, who_, "beta");
    const FloatIn bias = hidden_param(ctx, biasi, h, who_, "bias");

    const int64_t rows = h == 0 ? 0 : x.numel() / h;
    const int64_t skip_rows = h == 0 ? 1 : std::max<int64_t>(1, skip.numel() / h);
    Shape stat_shape = x.shape();
    stat_shape.back() = 1;
    FloatOut y(ctx, 0, x.dtype(), x.shape());
    float* mean_out =
        ctx.wants_output(1) ? ctx.output(1, DType::Float32, stat_shape).data<float>() : nullptr;
    float* inv_out =
        ctx.wants_output(2) ? ctx.output(2, DType::Float32, stat_shape).data<float>() : nullptr;
    std::optional<FloatOut> sum;
    if (ctx.wants_output(3)) sum.emplace(ctx, 3, x.dtype(), x.shape());
    float* sum_p = sum ? sum->data() : nullptr;
    const float* xp = xs.data();
    const float* sp = ss.data();
    const float* gp = gamma.data();
    const float* bp = beta.data();
    const float* biasp = bias.data();
    float* yp = y.data();
    const bool simplified = simplified_;
    const float eps = eps_;
    const int64_t grain = std::max<int64_t>(1, fast::kGrain / 4 / std::max<int64_t>(h, 1));
    fast::parallel_for(rows, ctx.threads(), grain, [&](int64_t r0, int64_t r1) {
      std::vector<float> scratch(sum_p ? 0 : static_cast<size_t>(h));
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = xp + r * h;
        const float* sr = sp + (r % skip_rows) * h;
        float* s = sum_p ? sum_p + r * h : scratch.data();
        if (biasp) {
          for (int64_t i = 0; i < h; ++i) s[i] = xr[i] + sr[i] + biasp[i];
        } else {
          for (int64_t i = 0; i < h; ++i) s[i] = xr[i] + sr[i];
        }
        const RowStats st = row_stats(s, h, eps, simplified);
        float* yr = yp + r * h;
        if (bp) {
          for (int64_t i = 0; i < h; ++i) yr[i] = (s[i] - st.mean) * st.inv * gp[i] + bp[i];
        } else {
          for (int64_t i = 0; i < h; ++i) yr[i] = (s[i] - st.mean) * st.inv * gp[i];
        }
        if (mean_out) mean_out[r] = st.mean;
        if (inv_out) inv_out[r] = st.inv;
      }
    });
    y.done();
    if (sum) sum->done();
  }

 private:
  bool simplified_;
  float eps_;
  std::string who_;
};

class SimplifiedLayerNormKernel final : public Kernel {
 public:
  explicit SimplifiedLayerNormKernel(const KernelInfo& info)
      : axis_(info.attr_int("axis", -1)),
        eps_(info.attr_float("epsilon", 1e-5f)),
        who_(info.node().label()) {
    const int64_t stash = info.attr_int("stash_type", 1);
    if (stash != 1) info.unsupported("stash_type=" + std::to_string(stash));
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    PI_CHECK(x.rank() >= 1, ShapeMismatch, who_, ": X must have rank >= 1, got ", x.describe());
    const int64_t axis = normalize_axis(axis_, x.rank(), who_.c_str());
    const int64_t inner = shape_numel(Shape(x.shape().begin() + axis, x.shape().end()));
    PI_CHECK(scale.numel() == inner, ShapeMismatch, who_, ": scale has shape ",
             shape_str(scale.shape()), "; it must hold one value per normalized element (", inner,
             ")");
    const FloatIn xs(x, who_, "X"), ss(scale, who_, "scale");
    Shape stat_shape = x.shape();
    for (int64_t i = axis; i < x.rank(); ++i) stat_shape[i] = 1;
    FloatOut y(ctx, 0, scale.dtype(), x.shape());
    float* inv_out =
        ctx.wants_output(1) ? ctx.output(1, DType::Float32, stat_shape).data<float>() : nullptr;
    const int64_t rows = inner == 0 ? 0 : x.numel() / inner;
    const float* xp = xs.data();
    const float* sp = ss.data();
    float* yp = y.data();
    const float eps = eps_;
    const int64_t grain = std::max<int64_t>(1, fast::kGrain / 4 / std::max<int64_t>(inner, 1));
    fast::parallel_for(rows, ctx.threads(), grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = xp + r * inner;
        const RowStats st = row_stats(xr, inner, eps, true);
        float* yr = yp + r * inner;
        for (int64_t i = 0; i < inner; ++i) yr[i] = xr[i] * st.inv * sp[i];
        if (inv_out) inv_out[r] = st.inv;
      }
    });
    y.done();
  }

 private:
  int64_t axis_;
  float eps_;
  std::string who_;
};

}  // namespace

PI_MS_KERNEL(SkipLayerNormalization, SkipLayerNormKernel);
PI_MS_KERNEL(SkipSimplifiedLayerNormalization, SkipLayerNormKernel);
PI_MS_KERNEL(SimplifiedLayerNormalization, SimplifiedLayerNormKernel);
// ONNX Runtime's own registration: the default domain, from opset 1 on.
PI_CPU_KERNEL(SimplifiedLayerNormalization, 1, 28, SimplifiedLayerNormKernel);

}  // namespace polyinfer::contrib
