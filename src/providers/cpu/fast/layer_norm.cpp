// Fast float32 LayerNormalization (ONNX opset 17+, and the optimizer's ai.polyinfer
// LayerNormalization opset 1, which is the same operator for models below opset 17).
//
// Each row of prod(shape[axis:]) elements is normalized by one thread: mean, then variance of
// the deviations (two passes: no cancellation), then y = (x - mean) * inv_std * scale + bias in
// one vectorized pass. Scale and bias must hold exactly one element per row position (the usual
// [hidden] vectors); other broadcasts, stash_type=double and non-float inputs go to the
// reference kernel.
#include <cmath>
#include <cstdint>
#include <string>

#include "core/shape_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

// The row reductions keep kLanes partial sums (4 ymm or 2 zmm accumulators once vectorized):
// with the one vector of a plain simd reduction, each add waited for the last (3-4 cycles a
// vector; docs/kernels.md).
constexpr int64_t kLanes = 32;

PI_FAST_CLONES float row_sum(const float* __restrict x, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
#pragma omp simd
    for (int64_t j = 0; j < kLanes; ++j) acc[j] += x[i + j];
  float s = 0;
  for (; i < n; ++i) s += x[i];
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

PI_FAST_CLONES float row_sq_dev(const float* __restrict x, int64_t n, float mean) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
#pragma omp simd
    for (int64_t j = 0; j < kLanes; ++j) {
      const float d = x[i + j] - mean;
      acc[j] += d * d;
    }
  float s = 0;
  for (; i < n; ++i) s += (x[i] - mean) * (x[i] - mean);
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

// y = (x - mean) * inv * scale + bias (bias may be null).
PI_FAST_CLONES void normalize_row(const float* __restrict x, const float* __restrict scale,
                                  const float* __restrict bias, float* __restrict y, int64_t n,
                                  float mean, float inv) {
  if (bias) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i] + bias[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i];
  }
}

PI_FAST_MATH_END

// True when p (scale or bias) holds one float32 per position of the normalized block, in order:
// its shape is the block's shape with leading 1s added or dropped.
bool per_position(const Tensor& p, const Shape& block, int64_t inner) {
  if (p.dtype() != DType::Float32 || p.numel() != inner) return false;
  const Shape& s = p.shape();
  size_t i = s.size(), j = block.size();
  while (i > 0 && j > 0) {
    if (s[i - 1] != block[j - 1]) return false;
    --i, --j;
  }
  for (; i > 0; --i)
    if (s[i - 1] != 1) return false;
  for (; j > 0; --j)
    if (block[j - 1] != 1) return false;
  return true;
}

class FastLayerNormKernel final : public Kernel {
 public:
  explicit FastLayerNormKernel(const KernelInfo& info)
      : ref_(info, "LayerNormalization", 17),
        axis_(info.attr_int("axis", -1)),
        eps_(info.attr_float("epsilon", 1e-5f)) {
    require_float_input(info, 0);
    if (info.attr_int("stash_type", 1) != 1) info.unsupported("the fast kernel for stash_type!=1");
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int rank = x.rank();
    if (x.dtype() != DType::Float32 || rank == 0 || axis_ < -rank || axis_ >= rank ||
        !ctx.has_input(1))
      return ref_.run(ctx);
    const int64_t axis = normalize_axis(axis_, rank, ctx.node().label().c_str());
    const Shape block(x.shape().begin() + axis, x.shape().end());
    const int64_t inner = shape_numel(block);
    const Tensor& scale = ctx.input(1);
    const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    if (inner == 0 || !per_position(scale, block, inner) ||
        (bias && !per_position(*bias, block, inner)))
      return ref_.run(ctx);
    const int64_t outer = x.numel() / inner;
    Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
    stat_shape.resize(x.shape().size(), 1);
    Tensor& y = ctx.output(0, DType::Float32, x.shape());
    float* mean_out =
        ctx.wants_output(1) ? ctx.output(1, DType::Float32, stat_shape).data<float>() : nullptr;
    float* inv_out =
        ctx.wants_output(2) ? ctx.output(2, DType::Float32, stat_shape).data<float>() : nullptr;
    const float* xp = x.data<float>();
    const float* sp = scale.data<float>();
    const float* bp = bias ? bias->data<float>() : nullptr;
    float* yp = y.data<float>();
    const float eps = eps_;
    const int64_t grain = std::max<int64_t>(1, kGrain / 4 / inner);
    parallel_for(outer, ctx.threads(), grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const float* xr = xp + o * inner;
        const float mean = row_sum(xr, inner) / static_cast<float>(inner);
        const float var = row_sq_dev(xr, inner, mean) / static_cast<float>(inner);
        const float inv = 1.0f / std::sqrt(var + eps);
        normalize_row(xr, sp, bp, yp + o * inner, inner, mean, inv);
        if (mean_out) mean_out[o] = mean;
        if (inv_out) inv_out[o] = inv;
      }
    });
  }

 private:
  RefFallback ref_;
  int64_t axis_;
  float eps_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", LayerNormalization, 17, 28, FastLayerNormKernel);
PI_CPU_FAST_KERNEL("ai.polyinfer", LayerNormalization, 1, 1, FastLayerNormKernel);

}  // namespace polyinfer::fast
