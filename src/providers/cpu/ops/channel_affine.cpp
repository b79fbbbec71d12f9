// ai.polyinfer ChannelAffine(X, scale, shift) → Y = act(X * scale + shift), scale and shift 1-D
// over X's last dimension: inference BatchNormalization (and the activation after it) in
// channels-last form, as the channels-last pass emits it (docs/optimizer.md). Written from its
// definition: the oracle for the fast kernel.
#include "providers/cpu/ops/fused_activation.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

class ChannelAffineKernel final : public Kernel {
 public:
  explicit ChannelAffineKernel(const KernelInfo& info)
      : act_(FusedActivation::from(info)), who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor& shift = ctx.input(2);
    PI_CHECK(x.dtype() == DType::Float32 && scale.dtype() == DType::Float32 &&
                 shift.dtype() == DType::Float32,
             UnsupportedOp, who_, ": ChannelAffine is float32 only, got ", x.describe());
    PI_CHECK(x.rank() >= 1, ShapeMismatch, who_, ": X ", x.describe(), " has no channel axis");
    const int64_t c = x.dim(-1);
    PI_CHECK(scale.shape() == Shape{c} && shift.shape() == Shape{c}, ShapeMismatch, who_,
             ": scale ", scale.describe(), " and shift ", shift.describe(),
             " must be 1-D of X's last dimension ", c);
    Tensor& y = ctx.output(0, DType::Float32, x.shape());
    const float* xp = x.data<float>();
    const float* s = scale.data<float>();
    const float* b = shift.data<float>();
    float* yp = y.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) yp[i] = act_.apply(xp[i] * s[i % c] + b[i % c]);
  }

 private:
  FusedActivation act_;
  std::string who_;
};

}  // namespace

PI_CPU_INTERNAL_KERNEL(ChannelAffine, 1, 1, ChannelAffineKernel);

}  // namespace polyinfer::cpu
