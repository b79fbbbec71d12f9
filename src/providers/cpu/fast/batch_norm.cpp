// Fast float32 BatchNormalization, inference form (the running statistics are inputs):
// y = (x - mean[c]) * (scale[c] / sqrt(var[c] + eps)) + bias[c] over [N, C, spatial...].
//
// The per-channel factor is computed once per run; each (n, c) plane is one vectorized loop, and
// planes are split over threads. Training mode, the legacy attributes and any other dtype or
// parameter shape go to the reference kernel (which also reports bad shapes).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

PI_FAST_CLONES void affine_plane(const float* __restrict x, float* __restrict y, int64_t n,
                                 float mean, float k, float b) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * k + b;
}

PI_FAST_MATH_END

class FastBatchNormKernel final : public Kernel {
 public:
  explicit FastBatchNormKernel(const KernelInfo& info)
      : ref_(info), eps_(info.attr_float("epsilon", 1e-5f)) {
    require_float_input(info, 0);
    if (info.opset() >= 14 && info.attr_int("training_mode", 0) != 0)
      info.unsupported("the fast kernel in training_mode");
    if (info.num_outputs() > 1) info.unsupported("the fast kernel with statistics outputs");
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32 || x.rank() < 2) return ref_.run(ctx);
    const int64_t C = x.dim(1);
    for (size_t i = 1; i <= 4; ++i) {
      const Tensor& p = ctx.input(i);
      if (p.dtype() != DType::Float32 || p.shape() != Shape{C}) return ref_.run(ctx);
    }
    const float* scale = ctx.input(1).data<float>();
    const float* bias = ctx.input(2).data<float>();
    const float* mean = ctx.input(3).data<float>();
    const float* var = ctx.input(4).data<float>();
    std::vector<float> k(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) k[c] = scale[c] / std::sqrt(var[c] + eps_);
    Tensor& y = ctx.output(0, DType::Float32, x.shape());
    if (x.numel() == 0) return;
    const int64_t plane = x.numel() / (x.dim(0) * C);
    const int64_t planes = x.dim(0) * C;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    parallel_for(planes, ctx.threads(), std::max<int64_t>(1, kGrain / std::max<int64_t>(1, plane)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t p = b; p < e; ++p) {
                     const int64_t c = p % C;
                     affine_plane(xp + p * plane, yp + p * plane, plane, mean[c], k[c], bias[c]);
                   }
                 });
  }

 private:
  RefFallback ref_;
  float eps_;
};

}  // namespace

// Opsets 6 and below carry is_test/spatial/consumed_inputs: the reference kernel keeps those.
PI_CPU_FAST_KERNEL("", BatchNormalization, 7, 28, FastBatchNormKernel);

}  // namespace polyinfer::fast
