// com.microsoft FastGelu, BiasGelu, Gelu, QuickGelu and BiasAdd: element-wise activations with an
// optional bias along the last dimension, as ONNX Runtime's transformer optimizer fuses them.
//
//   FastGelu(X, bias?)  y = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))),  v = X + bias
//   BiasGelu(A, B)      y = 0.5 v (1 + erf(v / sqrt 2)),                      v = A + B
//   Gelu(X)             the same without a bias
//   QuickGelu(X)        y = x * sigmoid(alpha x)                              (alpha 1.702)
//   BiasAdd(X, bias, skip)  y = X + bias + skip   (bias [C] along the last dimension of [N, S, C])
//
// A bias holds exactly the last dimension's values. Each is one vectorized pass split over the
// threads, on fast_util.h's vector math: the tanh form is written x * sigmoid(2u) (= 0.5 x (1 +
// tanh u), no cancellation for negative x), and the erf form is redone with std::erf below -3,
// where 1 + erf(v / sqrt 2) is small next to fast_erf's absolute error.
#include <algorithm>
#include <cmath>
#include <string>

#include "providers/cpu/contrib/contrib_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::contrib {
namespace {

using fast::fast_erf;
using fast::fast_sigmoid;

enum class Act { FastGelu, Gelu, QuickGelu, None };

PI_FAST_MATH_BEGIN

// y[i] = act(x[i] + b[i] (+ z[i])) for one row; b and z may be null.
PI_FAST_CLONES void act_row(Act act, const float* __restrict x, const float* __restrict b,
                            const float* __restrict z, float* __restrict y, int64_t n,
                            float alpha) {
  switch (act) {
    case Act::FastGelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        const float v = x[i] + (b ? b[i] : 0.0f);
        y[i] = v * fast_sigmoid(2.0f * 0.79788456080286535588f * (v + 0.044715f * v * v * v));
      }
      break;
    case Act::Gelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        const float v = x[i] + (b ? b[i] : 0.0f);
        y[i] = 0.5f * v * (1.0f + fast_erf(v * 0.70710678118654752440f));
      }
      break;
    case Act::QuickGelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * fast_sigmoid(alpha * x[i]);
      break;
    case Act::None:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] + b[i] + z[i];
      break;
  }
}

PI_FAST_MATH_END

class ContribActKernel final : public Kernel {
 public:
  explicit ContribActKernel(const KernelInfo& info) : who_(info.node().label()) {
    const std::string& op = info.node().op_type;
    if (op == "FastGelu") {
      act_ = Act::FastGelu;
    } else if (op == "QuickGelu") {
      act_ = Act::QuickGelu;
      alpha_ = info.attr_float("alpha", 1.702f);
    } else if (op == "BiasAdd") {
      act_ = Act::None;
    } else {
      act_ = Act::Gelu;  // Gelu, BiasGelu
    }
    bias_input_ = op == "FastGelu" || op == "BiasGelu" || op == "BiasAdd";
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t c = x.rank() == 0 ? 1 : x.shape().back();
    const FloatIn xs(x, who_, "input");
    FloatIn bias, skip;
    if (bias_input_ && ctx.has_input(1)) {
      const Tensor& b = ctx.input(1);
      PI_CHECK(b.numel() == c && b.dtype() == x.dtype(), ShapeMismatch, who_, ": bias ",
               b.describe(), " must hold the last dimension's ", c,
               " values, of the input's dtype");
      bias = FloatIn(b, who_, "bias");
    }
    if (act_ == Act::None) {
      PI_CHECK(bias, InvalidArgument, who_, ": bias is required");
      const Tensor& z = ctx.input(2);
      PI_CHECK(z.shape() == x.shape() && z.dtype() == x.dtype(), ShapeMismatch, who_, ": skip ",
               z.describe(), " must have the input's shape and dtype, ", x.describe());
      skip = FloatIn(z, who_, "skip");
    }
    FloatOut y(ctx, 0, x.dtype(), x.shape());
    const int64_t rows = c == 0 ? 0 : x.numel() / c;
    const float* xp = xs.data();
    const float* bp = bias.data();
    const float* zp = skip.data();
    float* yp = y.data();
    const Act act = act_;
    const float alpha = alpha_;
    const int64_t grain = std::max<int64_t>(1, fast::kGrain / std::max<int64_t>(c, 1));
    fast::parallel_for(rows, ctx.threads(), grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = xp + r * c;
        float* yr = yp + r * c;
        act_row(act, xr, bp, zp ? zp + r * c : nullptr, yr, c, alpha);
        if (act == Act::Gelu)
          for (int64_t i = 0; i < c; ++i) {
            const float v = xr[i] + (bp ? bp[i] : 0.0f);
            if (v < -3.0f) yr[i] = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752440f));
          }
      }
    });
    y.done();
  }

 private:
  Act act_ = Act::Gelu;
  bool bias_input_ = false;
  float alpha_ = 1.702f;
  std::string who_;
};

}  // namespace

PI_MS_KERNEL(FastGelu, ContribActKernel);
PI_MS_KERNEL(BiasGelu, ContribActKernel);
PI_MS_KERNEL(Gelu, ContribActKernel);
PI_MS_KERNEL(QuickGelu, ContribActKernel);
PI_MS_KERNEL(BiasAdd, ContribActKernel);

}  // namespace polyinfer::contrib
