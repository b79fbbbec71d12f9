// Fast ai.polyinfer ChannelAffine: Y = act(X * scale + shift) over channels-last X, one pass
// (the channels-last pass emits it for inference BatchNormalization and the Relu after it, which
// would otherwise be three passes over the tensor: Mul, Add, Relu). Rows of C channels are
// vectorized loops, split over threads. ConcatChannelAffine (fuse-concat-affine) runs the same
// loops over each input's channel slice of the output. Activations other than none, Relu and
// LeakyRelu, and any shape or dtype they do not expect, go to the reference kernel.
#include "ops/activation.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

// y = x * s + b, then max(y, slope * y) — slope 0 is Relu, 1 is no activation, else LeakyRelu
// (for slope < 1, max(y, slope*y) is y above 0 and slope*y below).
// Rows of c channels, read with stride c and written with stride y_stride (a concatenation's
// channel slice when y_stride > c).
PI_FAST_CLONES void affine_rows(const float* __restrict x, float* __restrict y, int64_t rows,
                                int64_t c, int64_t y_stride, const float* __restrict s,
                                const float* __restrict b, float slope) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    float* yr = y + r * y_stride;
#pragma omp simd
    for (int64_t i = 0; i < c; ++i) {
      const float v = xr[i] * s[i] + b[i];
      const float w = v * slope;
      yr[i] = v > w ? v : w;
    }
  }
}

PI_FAST_MATH_END

// The slope of max(y, slope * y) for the activations the fast loops take; refuses the others.
float activation_slope(const KernelInfo& info) {
  const FusedActivation act = FusedActivation::from(info);
  switch (act.kind) {
    case ActKind::None: return 1;
    case ActKind::Relu: return 0;
    case ActKind::LeakyRelu:
      if (!(act.alpha >= 0 && act.alpha <= 1))
        info.unsupported("the fast kernel for LeakyRelu alpha outside [0, 1]");
      return act.alpha;
    default: info.unsupported("the fast kernel for this activation");
  }
  return 1;
}

class FastChannelAffineKernel final : public Kernel {
 public:
  explicit FastChannelAffineKernel(const KernelInfo& info) : ref_(info) {
    require_float_input(info);
    slope_ = activation_slope(info);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& s = ctx.input(1);
    const Tensor& b = ctx.input(2);
    if (x.dtype() != DType::Float32 || x.rank() < 1 || s.dtype() != DType::Float32 ||
        b.dtype() != DType::Float32 || s.shape() != Shape{x.dim(-1)} || b.shape() != s.shape())
      return ref_.run(ctx);  // its error
    Tensor& y = ctx.output(0, DType::Float32, x.shape());
    const int64_t c = x.dim(-1);
    if (x.numel() == 0 || c == 0) return;
    const int64_t rows = x.numel() / c;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    parallel_for(rows, ctx.threads(), std::max<int64_t>(1, kGrain / c),
                 [&](int64_t lo, int64_t hi) {
                   affine_rows(xp + lo * c, yp + lo * c, hi - lo, c, c, s.data<float>(),
                               b.data<float>(), slope_);
                 });
  }

 private:
  RefFallback ref_;
  float slope_ = 1;
};

// ConcatChannelAffine(scale, shift, X1, ..., Xn): each thread takes a range of rows (pixels) and
// writes each input's channel slice of them, so every input is read once and the normalized
// concatenation written once.
class FastConcatChannelAffineKernel final : public Kernel {
 public:
  explicit FastConcatChannelAffineKernel(const KernelInfo& info) : ref_(info) {
    for (size_t i = 2; i < info.num_inputs(); ++i) require_float_input(info, i);
    slope_ = activation_slope(info);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const size_t n = ctx.num_inputs();
    if (n < 3) return ref_.run(ctx);
    const Tensor& x0 = ctx.input(2);
    if (x0.rank() < 1) return ref_.run(ctx);
    Shape ys = x0.shape();
    ys.back() = 0;
    for (size_t i = 2; i < n; ++i) {
      const Tensor& x = ctx.input(i);
      bool ok = x.dtype() == DType::Float32 && x.rank() == x0.rank();
      for (int d = 0; ok && d + 1 < x.rank(); ++d) ok = x.dim(d) == x0.dim(d);
      if (!ok) return ref_.run(ctx);  // its error
      ys.back() += x.dim(-1);
    }
    const Tensor& s = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const int64_t c = ys.back();
    if (s.dtype() != DType::Float32 || b.dtype() != DType::Float32 || s.shape() != Shape{c} ||
        b.shape() != s.shape())
      return ref_.run(ctx);
    Tensor& y = ctx.output(0, DType::Float32, ys);
    if (c == 0 || y.numel() == 0) return;
    const int64_t rows = y.numel() / c;
    float* yp = y.data<float>();
    parallel_for(rows, ctx.threads(), std::max<int64_t>(1, kGrain / c),
                 [&](int64_t lo, int64_t hi) {
                   int64_t offset = 0;
                   for (size_t i = 2; i < n; ++i) {
                     const Tensor& x = ctx.input(i);
                     const int64_t ci = x.dim(-1);
                     affine_rows(x.data<float>() + lo * ci, yp + lo * c + offset, hi - lo, ci, c,
                                 s.data<float>() + offset, b.data<float>() + offset, slope_);
                     offset += ci;
                   }
                 });
  }

 private:
  RefFallback ref_;
  float slope_ = 1;
};

}  // namespace

PI_CPU_FAST_KERNEL("ai.polyinfer", ChannelAffine, 1, 1, FastChannelAffineKernel);
PI_CPU_FAST_KERNEL("ai.polyinfer", ConcatChannelAffine, 1, 1, FastConcatChannelAffineKernel);

}  // namespace polyinfer::fast
