// Fast float32 Softmax and LogSoftmax over contiguous rows.
//
// Opset 13+ normalizes along `axis`; the fast path takes the last axis (the common case:
// attention scores, classifier heads) and hands any other axis to the reference kernel. Opsets
// 1-12 flatten to 2-D at `axis`, which always gives contiguous rows. Rows are split over threads;
// each row is max-subtracted (no overflow), exponentiated with fast_exp and scaled by 1/sum,
// summed in float (the reference sums in double: results agree to ~1e-6 relative).
#include <cmath>
#include <cstdint>
#include <string>

#include "core/shape_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

PI_FAST_CLONES float row_max(const float* __restrict x, int64_t n) {
  float m = x[0];
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// y = exp(x - m); returns the sum of y.
PI_FAST_CLONES float exp_shifted(const float* __restrict x, float* __restrict y, int64_t n,
                                 float m) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) {
    const float e = fast_exp(x[i] - m);
    y[i] = e;
    s += e;
  }
  return s;
}

// Sum of exp(x - m), nothing stored (LogSoftmax).
PI_FAST_CLONES float sum_exp_shifted(const float* __restrict x, int64_t n, float m) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += fast_exp(x[i] - m);
  return s;
}

PI_FAST_CLONES void scale(float* __restrict y, int64_t n, float k) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] *= k;
}

// y = (x - m) - ls, in that order so a large m does not swallow ls's bits.
PI_FAST_CLONES void shift(const float* __restrict x, float* __restrict y, int64_t n, float m,
                          float ls) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - ls;
}

PI_FAST_MATH_END

template <bool Log> class FastSoftmaxKernel final : public Kernel {
 public:
  explicit FastSoftmaxKernel(const KernelInfo& info)
      : ref_(info),
        flatten_(info.opset() < 13),
        axis_(info.attr_int("axis", info.opset() < 13 ? 1 : -1)) {
    require_float_input(info, 0);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32) return ref_.run(ctx);
    const int rank = x.rank();
    const std::string who = ctx.node().label();
    // The reference kernel reports a bad axis (and the scalar case) in its own words.
    if (rank == 0 || axis_ < -rank || axis_ >= rank) return ref_.run(ctx);
    const int64_t axis = normalize_axis(axis_, rank, who.c_str());
    if (!flatten_ && axis != rank - 1) return ref_.run(ctx);
    int64_t cols = 1;
    for (int d = static_cast<int>(axis); d < rank; ++d) cols *= x.shape()[d];
    Tensor& y = ctx.output(0, DType::Float32, x.shape());
    if (x.numel() == 0 || cols == 0) return;
    const int64_t rows = x.numel() / cols;
    const float* in = x.data<float>();
    float* out = y.data<float>();
    const int64_t grain = std::max<int64_t>(1, kGrain / 4 / cols);
    parallel_for(rows, ctx.threads(), grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const float* xr = in + r * cols;
        float* yr = out + r * cols;
        const float m = row_max(xr, cols);
        if constexpr (Log) {
          shift(xr, yr, cols, m, std::log(sum_exp_shifted(xr, cols, m)));
        } else {
          scale(yr, cols, 1.0f / exp_shifted(xr, yr, cols, m));
        }
      }
    });
  }

 private:
  RefFallback ref_;
  bool flatten_;
  int64_t axis_;
};

using FastSoftmax = FastSoftmaxKernel<false>;
using FastLogSoftmax = FastSoftmaxKernel<true>;

}  // namespace

PI_CPU_FAST_KERNEL("", Softmax, 1, 28, FastSoftmax);
PI_CPU_FAST_KERNEL("", LogSoftmax, 1, 28, FastLogSoftmax);

}  // namespace polyinfer::fast
