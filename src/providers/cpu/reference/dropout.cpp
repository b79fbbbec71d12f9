// Dropout. Before opset 12 it is evaluated as in inference (Y = X, mask all true), as inference
// runtimes do whatever is_test says. From 12 the optional inputs ratio (default 0.5) and
// training_mode (default false) decide: in training mode each element is kept when a uniform
// draw in [0, 1) is >= ratio, and kept elements are scaled by 1 / (1 - ratio).
//
// The draws come from MT19937 seeded with the 'seed' attribute and turned into doubles with 53
// random bits (two 32-bit outputs, 27 + 26 bits), the generator and conversion numpy's
// RandomState uses, so that a given seed reproduces the ONNX reference outputs. Without a seed
// the generator is seeded from std::random_device.
#include <random>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

double uniform01(std::mt19937& gen) {
  const uint32_t a = gen() >> 5, b = gen() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(const KernelInfo& info)
      : label_(info.node().label()),
        opset_(info.opset()),
        has_seed_(info.has_attr("seed")),
        seed_(info.attr_int("seed", 0)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    bool training = false;
    double ratio = 0.5;
    if (opset_ >= 12) {
      if (ctx.has_input(1)) ratio = read_scalar(ctx.input(1), label_.c_str());
      if (ctx.has_input(2)) training = read_scalar(ctx.input(2), label_.c_str()) != 0;
    }
    // Before opset 10 the mask has the input's type; from 10 it is bool.
    const DType mask_type = opset_ < 10 ? x.dtype() : DType::Bool;
    if (!training || ratio == 0) {
      ctx.set_output(0, x);
      if (ctx.wants_output(1)) {
        Tensor& m = ctx.output(1, mask_type, x.shape());
        dispatch(NumericTypes{} + TypeList<bool>{}, mask_type, label_.c_str(), [&](auto tag) {
          using M = typename decltype(tag)::type;
          std::fill_n(m.data<M>(), m.numel(), static_cast<M>(1));
        });
      }
      return;
    }
    PI_CHECK(ratio > 0 && ratio < 1, InvalidArgument, label_, ": ratio ", ratio,
             " must be in [0, 1) in training mode");
    std::mt19937 gen(has_seed_ ? static_cast<uint32_t>(seed_) : std::random_device{}());
    std::vector<bool> keep(static_cast<size_t>(x.numel()));
    for (size_t i = 0; i < keep.size(); ++i) keep[i] = uniform01(gen) >= ratio;
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    dispatch(FloatTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const C scale = static_cast<C>(1.0 / (1.0 - ratio));
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      for (size_t i = 0; i < keep.size(); ++i)
        // Multiplying by the 0/1 mask, not selecting, keeps the sign of a dropped -x as the
        // reference does.
        dst[i] = static_cast<T>(static_cast<C>(src[i]) * C(keep[i] ? 1 : 0) * scale);
    });
    if (ctx.wants_output(1)) {
      bool* m = ctx.output(1, DType::Bool, x.shape()).data<bool>();
      for (size_t i = 0; i < keep.size(); ++i) m[i] = keep[i];
    }
  }

 private:
  std::string label_;
  int opset_;
  bool has_seed_;
  int64_t seed_;
};

}  // namespace

PI_CPU_KERNEL(Dropout, 1, 28, DropoutKernel);

}  // namespace polyinfer
