// Pad. Opset 1 names the pads 'paddings', 2..10 'pads' (attributes, with a float 'value');
// 11+ take pads and constant_value as inputs, 18+ an optional axes input, 19+ mode=wrap
// (ops/pad_params.h reads them).
// Negative pads crop; reflect/edge/wrap read relative to the whole input, so a crop on one side
// does not change what the other side's padding copies.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "ops/pad.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const KernelInfo& info)
      : attrs_(info), label_(attrs_.label), from_attr_(attrs_.from_attr) {
    mode_ = pad_mode(info, attrs_.mode);
    value_ = attrs_.value;
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int r = x.rank();
    const PadPlan plan = plan_pad(attrs_, ctx);
    const std::vector<int64_t>& before = plan.before;
    const Shape& out = plan.out;
    Tensor& y = ctx.output(0, x.dtype(), out);
    if (y.numel() == 0) return;

    // For each dimension, the input coordinate of every output coordinate (-1: the constant).
    std::vector<std::vector<int64_t>> src_of(r);
    for (int d = 0; d < r; ++d) {
      const int64_t dim = x.shape()[d];
      src_of[d].resize(out[d]);
      for (int64_t o = 0; o < out[d]; ++o) src_of[d][o] = pad_source(mode_, o - before[d], dim);
    }
    const std::vector<int64_t> xs = strides_of(x.shape());

    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T fill{};
      if (from_attr_) {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          // Converting an out-of-range float to an integer is undefined, so reject it.
          const double v = std::trunc(static_cast<double>(value_));
          PI_CHECK(v >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
                       v < static_cast<double>(std::numeric_limits<T>::max()) + 1.0,
                   InvalidModel, label_, ": value ", value_, " does not fit ",
                   dtype_name(x.dtype()));
          fill = static_cast<T>(value_);
        } else if constexpr (!std::is_same_v<T, std::string>) {
          fill = static_cast<T>(value_);
        }
      } else if (ctx.has_input(2)) {
        const Tensor& v = ctx.input(2);
        PI_CHECK(v.dtype() == x.dtype() && v.numel() == 1, InvalidArgument, label_,
                 ": constant_value ", v.describe(), " must be one ", dtype_name(x.dtype()));
        fill = v.data<T>()[0];
      }
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      const int64_t total = y.numel();
      std::vector<int64_t> pos(r, 0);
      for (int64_t i = 0; i < total; ++i) {
        int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < r && inside; ++d) {
          const int64_t s = src_of[d][pos[d]];
          inside = s >= 0;
          off += s * xs[d];
        }
        dst[i] = inside ? src[off] : fill;
        for (int d = r - 1; d >= 0; --d) {
          if (++pos[d] < out[d]) break;
          pos[d] = 0;
        }
      }
    });
  }

 private:
  PadAttrs attrs_;
  std::string label_;
  bool from_attr_;
  PadMode mode_ = PadMode::Constant;
  float value_ = 0;
};

}  // namespace

PI_CPU_KERNEL(Pad, 1, 28, PadKernel);

}  // namespace polyinfer
