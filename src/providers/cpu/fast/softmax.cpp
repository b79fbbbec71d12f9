// Fast float32 Softmax and LogSoftmax along any axis.
//
// Opsets 1-12 flatten to 2-D at `axis`, and opset 13+ along the last axis (attention scores,
// classifier heads) gives contiguous rows: rows are split over threads; each row is
// max-subtracted (no overflow), exponentiated with fast_exp and scaled by 1/sum, summed in float
// (the reference sums in double: results agree to ~1e-6 relative). Opset 13+ along another axis
// (a YOLO head's distribution over 16 bins, [1, 4, 16, 8400] along axis 2) sees the input as
// [outer, d, inner] and works on blocks of up to kCols inner positions at once, vectorized
// across them: the max, the sum of exponentials and the scaling each one pass down the d rows of
// the block, one value per column kept in a small array.
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

constexpr int64_t kCols = 256;

// Softmax (or LogSoftmax) down the d rows (`stride` apart) of w <= kCols columns.
template <bool Log>
PI_FAST_CLONES void softmax_cols(const float* __restrict x, float* __restrict y, int64_t d,
                                 int64_t stride, int64_t w) {
  float m[kCols], s[kCols];
#pragma omp simd
  for (int64_t j = 0; j < w; ++j) m[j] = x[j], s[j] = 0;
  for (int64_t k = 1; k < d; ++k) {
    const float* xr = x + k * stride;
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) m[j] = xr[j] > m[j] ? xr[j] : m[j];
  }
  for (int64_t k = 0; k < d; ++k) {
    const float* xr = x + k * stride;
    float* yr = y + k * stride;
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) {
      const float e = fast_exp(xr[j] - m[j]);
      if constexpr (!Log) yr[j] = e;
      s[j] += e;
    }
  }
  if constexpr (Log) {
    for (int64_t j = 0; j < w; ++j) s[j] = __builtin_logf(s[j]);
    for (int64_t k = 0; k < d; ++k) {
      const float* xr = x + k * stride;
      float* yr = y + k * stride;
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) yr[j] = (xr[j] - m[j]) - s[j];
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) s[j] = 1.0f / s[j];
    for (int64_t k = 0; k < d; ++k) {
      float* yr = y + k * stride;
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) yr[j] *= s[j];
    }
  }
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
    if (!flatten_ && axis != rank - 1) return run_axis(ctx, x, axis);
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
  // Along a middle axis: [outer, d, inner], blocks of kCols columns split over threads.
  void run_axis(KernelContext& ctx, const Tensor& x, int64_t axis) {
    const Shape& xs = x.shape();
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= xs[k];
    for (size_t k = static_cast<size_t>(axis) + 1; k < xs.size(); ++k) inner *= xs[k];
    const int64_t d = xs[axis];
    Tensor& y = ctx.output(0, DType::Float32, xs);
    if (x.numel() == 0) return;
    const int64_t blocks = (inner + kCols - 1) / kCols;
    const float* in = x.data<float>();
    float* out = y.data<float>();
    const int64_t grain = std::max<int64_t>(1, kGrain / 4 / (d * std::min(inner, kCols)));
    parallel_for(outer * blocks, ctx.threads(), grain, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / blocks, j = (t % blocks) * kCols;
        const int64_t off = o * d * inner + j;
        softmax_cols<Log>(in + off, out + off, d, inner, std::min(kCols, inner - j));
      }
    });
  }

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
