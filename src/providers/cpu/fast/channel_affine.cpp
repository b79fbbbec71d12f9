// Fast ai.polyinfer ChannelAffine: Y = act(X * scale + shift) over channels-last X, one pass
// (the channels-last pass emits it for inference BatchNormalization and the Relu after it, which
// would otherwise be three passes over the tensor: Mul, Add, Relu). Rows of C channels are
// vectorized loops, split over threads. Activations other than none, Relu and LeakyRelu, and
// any shape or dtype it does not expect, go to the reference kernel.
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/ops/fused_activation.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

// y = x * s + b, then max(y, slope * y) — slope 0 is Relu, 1 is no activation, else LeakyRelu
// (for slope < 1, max(y, slope*y) is y above 0 and slope*y below).
PI_FAST_CLONES void affine_rows(const float* __restrict x, float* __restrict y, int64_t rows,
                                int64_t c, const float* __restrict s, const float* __restrict b,
                                float slope) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    float* yr = y + r * c;
#pragma omp simd
    for (int64_t i = 0; i < c; ++i) {
      const float v = xr[i] * s[i] + b[i];
      const float w = v * slope;
      yr[i] = v > w ? v : w;
    }
  }
}

PI_FAST_MATH_END

class FastChannelAffineKernel final : public Kernel {
 public:
  explicit FastChannelAffineKernel(const KernelInfo& info) : ref_(info) {
    require_float_input(info);
    const cpu::FusedActivation act = cpu::FusedActivation::from(info);
    switch (act.kind) {
      case cpu::ActKind::None: slope_ = 1; break;
      case cpu::ActKind::Relu: slope_ = 0; break;
      case cpu::ActKind::LeakyRelu:
        if (!(act.alpha >= 0 && act.alpha <= 1)) info.unsupported("the fast kernel for LeakyRelu alpha outside [0, 1]");
        slope_ = act.alpha;
        break;
      default: info.unsupported("the fast kernel for this activation");
    }
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
    parallel_for(rows, ctx.threads(), std::max<int64_t>(1, kGrain / c), [&](int64_t lo, int64_t hi) {
      affine_rows(xp + lo * c, yp + lo * c, hi - lo, c, s.data<float>(), b.data<float>(), slope_);
    });
  }

 private:
  RefFallback ref_;
  float slope_ = 1;
};

}  // namespace

PI_CPU_FAST_KERNEL("ai.polyinfer", ChannelAffine, 1, 1, FastChannelAffineKernel);

}  // namespace polyinfer::fast
