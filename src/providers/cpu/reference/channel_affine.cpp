// ai.polyinfer ChannelAffine(X, scale, shift) → Y = act(X * scale + shift), scale and shift 1-D
// over X's last dimension: inference BatchNormalization (and the activation after it) in
// channels-last form, as the channels-last pass emits it (docs/optimizer.md); and
// ConcatChannelAffine(scale, shift, X1, ..., Xn), the same over the concatenation of the Xi along
// their last axis. Written from their definitions: the oracle for the fast kernels.
#include "ops/activation.h"
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

class ConcatChannelAffineKernel final : public Kernel {
 public:
  explicit ConcatChannelAffineKernel(const KernelInfo& info)
      : act_(FusedActivation::from(info)), who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& scale = ctx.input(0);
    const Tensor& shift = ctx.input(1);
    PI_CHECK(ctx.num_inputs() >= 3, InvalidModel, who_,
             ": ConcatChannelAffine needs scale, shift "
             "and at least one X");
    const Tensor& x0 = ctx.input(2);
    PI_CHECK(x0.rank() >= 1, ShapeMismatch, who_, ": X ", x0.describe(), " has no channel axis");
    Shape ys = x0.shape();
    ys.back() = 0;
    for (size_t i = 2; i < ctx.num_inputs(); ++i) {
      const Tensor& x = ctx.input(i);
      PI_CHECK(x.dtype() == DType::Float32, UnsupportedOp, who_,
               ": ConcatChannelAffine is float32 only, got ", x.describe());
      bool same = x.rank() == x0.rank();
      for (int d = 0; same && d + 1 < x.rank(); ++d) same = x.dim(d) == x0.dim(d);
      PI_CHECK(same, ShapeMismatch, who_, ": X", i - 1, " ", x.describe(), " differs from X1 ",
               x0.describe(), " outside the last axis");
      ys.back() += x.dim(-1);
    }
    const int64_t c = ys.back();
    PI_CHECK(scale.dtype() == DType::Float32 && shift.dtype() == DType::Float32 &&
                 scale.shape() == Shape{c} && shift.shape() == Shape{c},
             ShapeMismatch, who_, ": scale ", scale.describe(), " and shift ", shift.describe(),
             " must be float32 1-D of the concatenation's last dimension ", c);
    Tensor& y = ctx.output(0, DType::Float32, ys);
    if (c == 0) return;
    const int64_t rows = shape_numel(ys) / c;
    const float* s = scale.data<float>();
    const float* b = shift.data<float>();
    float* yp = y.data<float>();
    int64_t offset = 0;
    for (size_t i = 2; i < ctx.num_inputs(); ++i) {
      const Tensor& x = ctx.input(i);
      const int64_t ci = x.dim(-1);
      const float* xp = x.data<float>();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < ci; ++k)
          yp[r * c + offset + k] = act_.apply(xp[r * ci + k] * s[offset + k] + b[offset + k]);
      offset += ci;
    }
  }

 private:
  FusedActivation act_;
  std::string who_;
};

}  // namespace

PI_CPU_INTERNAL_KERNEL(ChannelAffine, 1, 1, ChannelAffineKernel);
PI_CPU_INTERNAL_KERNEL(ConcatChannelAffine, 1, 1, ConcatChannelAffineKernel);

}  // namespace polyinfer::cpu
