// Gelu (opset 20): the Gaussian error linear unit, exact (erf) or with the tanh approximation.
//
//   approximate="none": y = 0.5 * x * (1 + erf(x / sqrt(2)))
//   approximate="tanh": y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
#include <cmath>
#include <string>

#include "core/dispatch.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class GeluKernel final : public Kernel {
 public:
  explicit GeluKernel(const KernelInfo& info) {
    const std::string mode = info.attr_string("approximate", "none");
    if (mode == "tanh") {
      tanh_ = true;
    } else if (mode != "none") {
      info.unsupported("approximate=" + mode);
    }
  }

  void run(KernelContext& ctx) override {
    if (tanh_) {
      map_same_type<FloatTypes>(ctx, [](auto x) {
        using C = decltype(x);
        // sqrt(2 / pi), written out so that float and double each get their own precision.
        const C k = static_cast<C>(0.79788456080286535587989211986876);
        return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
      });
    } else {
      map_same_type<FloatTypes>(ctx, [](auto x) {
        using C = decltype(x);
        const C inv_sqrt2 = static_cast<C>(0.70710678118654752440084436210485);
        return C(0.5) * x * (C(1) + std::erf(x * inv_sqrt2));
      });
    }
  }

 private:
  bool tanh_ = false;
};

}  // namespace

PI_CPU_KERNEL(Gelu, 20, 28, GeluKernel);

}  // namespace polyinfer
