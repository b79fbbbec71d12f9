// Activation functions: Relu, LeakyRelu, PRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid, HardSwish,
// Tanh, Softplus, Softsign, ThresholdedRelu, Shrink, Clip and Mish.
//
// Later versions of these operators only widened their type lists or dropped the legacy
// `consumed_inputs` attribute, except where a kernel reads info.opset(): Clip moved min/max from
// attributes to inputs in opset 11, and PRelu switched to numpy broadcasting in opset 7.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Largest finite value of T, including the 16-bit floats that numeric_limits does not know.
template <class T> double max_finite() {
  if constexpr (std::is_same_v<T, Float16>) {
    return 65504.0;
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return 3.3895313892515355e38;
  } else {
    return static_cast<double>(std::numeric_limits<T>::max());
  }
}
template <class T> double lowest_finite() {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return -max_finite<T>();
  } else {
    return static_cast<double>(std::numeric_limits<T>::lowest());
  }
}

// An activation whose only state is its attributes: Op is constructed from the KernelInfo and
// called on each element in the compute type.
template <class Types, class Op> class MapKernel final : public Kernel {
 public:
  explicit MapKernel(const KernelInfo& info) : op_(info) {}
  void run(KernelContext& ctx) override { map_same_type<Types>(ctx, op_); }

 private:
  Op op_;
};

struct ReluOp {
  explicit ReluOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return x < C(0) ? C(0) : x; }
};

struct LeakyReluOp {
  explicit LeakyReluOp(const KernelInfo& info) : alpha(info.attr_float("alpha", 0.01f)) {}
  template <class C> C operator()(C x) const { return x < C(0) ? C(alpha) * x : x; }
  float alpha;
};

struct EluOp {
  explicit EluOp(const KernelInfo& info) : alpha(info.attr_float("alpha", 1.0f)) {}
  template <class C> C operator()(C x) const { return x < C(0) ? C(alpha) * std::expm1(x) : x; }
  float alpha;
};

struct SeluOp {
  explicit SeluOp(const KernelInfo& info)
      : alpha(info.attr_float("alpha", 1.67326319217681884765625f)),
        gamma(info.attr_float("gamma", 1.05070102214813232421875f)) {}
  template <class C> C operator()(C x) const {
    return C(gamma) * (x > C(0) ? x : C(alpha) * std::expm1(x));
  }
  float alpha;
  float gamma;
};

struct CeluOp {
  explicit CeluOp(const KernelInfo& info) : alpha(info.attr_float("alpha", 1.0f)) {
    PI_CHECK(alpha != 0.0f, InvalidModel, info.node().label(), ": alpha must not be 0");
  }
  template <class C> C operator()(C x) const {
    return x > C(0) ? x : C(alpha) * std::expm1(x / C(alpha));
  }
  float alpha;
};

// Split at 0 so that exp never overflows: both branches only exponentiate non-positive values.
struct SigmoidOp {
  explicit SigmoidOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const {
    if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
    const C e = std::exp(x);
    return e / (C(1) + e);
  }
};

struct HardSigmoidOp {
  explicit HardSigmoidOp(const KernelInfo& info)
      : alpha(info.attr_float("alpha", 0.2f)), beta(info.attr_float("beta", 0.5f)) {}
  template <class C> C operator()(C x) const {
    const C v = C(alpha) * x + C(beta);
    return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);
  }
  float alpha;
  float beta;
};

struct HardSwishOp {
  explicit HardSwishOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const {
    const C v = x / C(6) + C(0.5);
    return x * (v < C(0) ? C(0) : (v > C(1) ? C(1) : v));
  }
};

struct TanhOp {
  explicit TanhOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return std::tanh(x); }
};

// log(1 + exp(x)) without overflow for large x.
template <class C> C softplus(C x) {
  return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

struct SoftplusOp {
  explicit SoftplusOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return softplus(x); }
};

struct SoftsignOp {
  explicit SoftsignOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return x / (C(1) + std::fabs(x)); }
};

struct ThresholdedReluOp {
  explicit ThresholdedReluOp(const KernelInfo& info) : alpha(info.attr_float("alpha", 1.0f)) {}
  template <class C> C operator()(C x) const { return x > C(alpha) ? x : C(0); }
  float alpha;
};

struct MishOp {
  explicit MishOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return x * std::tanh(softplus(x)); }
};

// Shrink is defined for integers too: the arithmetic happens in double and the result is
// truncated back, saturating at the type's range.
struct ShrinkOp {
  explicit ShrinkOp(const KernelInfo& info)
      : lambd(info.attr_float("lambd", 0.5f)), bias(info.attr_float("bias", 0.0f)) {}
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      const double v = static_cast<double>(x);
      if (v < -lambd) return saturate_to_int<C>(v + bias);
      if (v > lambd) return saturate_to_int<C>(v - bias);
      return C(0);
    } else {
      if (x < C(-lambd)) return x + C(bias);
      if (x > C(lambd)) return x - C(bias);
      return C(0);
    }
  }
  float lambd;
  float bias;
};

using SignedNumericTypes =
    TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t>;

using ReluKernel = MapKernel<SignedNumericTypes, ReluOp>;
using LeakyReluKernel = MapKernel<FloatTypes, LeakyReluOp>;
using EluKernel = MapKernel<FloatTypes, EluOp>;
using SeluKernel = MapKernel<FloatTypes, SeluOp>;
using CeluKernel = MapKernel<FloatTypes, CeluOp>;
using SigmoidKernel = MapKernel<FloatTypes, SigmoidOp>;
using HardSigmoidKernel = MapKernel<FloatTypes, HardSigmoidOp>;
using HardSwishKernel = MapKernel<FloatTypes, HardSwishOp>;
using TanhKernel = MapKernel<FloatTypes, TanhOp>;
using SoftplusKernel = MapKernel<FloatTypes, SoftplusOp>;
using SoftsignKernel = MapKernel<FloatTypes, SoftsignOp>;
using ThresholdedReluKernel = MapKernel<FloatTypes, ThresholdedReluOp>;
using MishKernel = MapKernel<FloatTypes, MishOp>;
using ShrinkKernel = MapKernel<NumericTypes, ShrinkOp>;

// PRelu: y = x < 0 ? slope * x : x, with slope broadcast onto x (never the other way).
class PReluKernel final : public Kernel {
 public:
  explicit PReluKernel(const KernelInfo& info) : legacy_(info.opset() < 7) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor slope = ctx.input(1);
    const std::string who = ctx.node().label();
    PI_CHECK(x.dtype() == slope.dtype(), InvalidArgument, who, ": X is ", x.describe(),
             " but slope is ", slope.describe(), "; both must have the same dtype");
    // Before opset 7 a 1-D slope of X's channel count applied per channel (axis 1), the way the
    // old Caffe2/PyTorch exporters used it.
    if (legacy_ && slope.rank() == 1 && x.rank() >= 2 && slope.numel() != 1 &&
        slope.dim(0) == x.dim(1)) {
      Shape s(static_cast<size_t>(x.rank() - 1), 1);
      s[0] = slope.dim(0);
      slope = slope.reshaped(s);
    }
    const Shape out = broadcast_shapes(x.shape(), slope.shape(), who.c_str());
    PI_CHECK(out == x.shape(), ShapeMismatch, who, ": slope ", shape_str(slope.shape()),
             " does not broadcast to X ", shape_str(x.shape()));
    dispatch(NumericTypes{}, x.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      Tensor& y = ctx.output(0, x.dtype(), out);
      const T* px = x.data<T>();
      const T* ps = slope.data<T>();
      T* py = y.data<T>();
      const std::vector<int64_t> strides[2] = {broadcast_strides(x.shape(), out),
                                               broadcast_strides(slope.shape(), out)};
      for_each_broadcast(out, strides, [&](int64_t i, int64_t ix, int64_t is) {
        const C v = static_cast<C>(px[ix]);
        if constexpr (std::is_integral_v<C>) {
          // Wrapping multiply: signed overflow would be undefined.
          py[i] = v < C(0) ? static_cast<T>(static_cast<uint64_t>(v) *
                                            static_cast<uint64_t>(static_cast<C>(ps[is])))
                           : px[ix];
        } else {
          py[i] = v < C(0) ? static_cast<T>(static_cast<C>(ps[is]) * v) : px[ix];
        }
      });
    });
  }

 private:
  bool legacy_;
};

// Clip: opsets 1-10 take min/max as float attributes (default: float's lowest/largest), opset 11
// on as optional scalar inputs of X's dtype. A missing bound input is the type's lowest/largest
// finite value, as the spec says (so an infinite input is clipped to the largest finite value).
class ClipKernel final : public Kernel {
 public:
  explicit ClipKernel(const KernelInfo& info) : attr_form_(info.opset() < 11) {
    if (attr_form_) {
      min_ = info.attr_float("min", std::numeric_limits<float>::lowest());
      max_ = info.attr_float("max", std::numeric_limits<float>::max());
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::string who = ctx.node().label();
    dispatch(NumericTypes{}, x.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      C lo = static_cast<C>(lowest_finite<T>());
      C hi = static_cast<C>(max_finite<T>());
      if (attr_form_) {
        PI_CHECK(!std::is_integral_v<C>, UnsupportedOp, who, ": integer inputs need opset 12");
        lo = static_cast<C>(min_);
        hi = static_cast<C>(max_);
      } else {
        if (ctx.has_input(1)) lo = bound<T>(ctx.input(1), x, who, "min");
        if (ctx.has_input(2)) hi = bound<T>(ctx.input(2), x, who, "max");
      }
      Tensor& y = ctx.output(0, x.dtype(), x.shape());
      const T* in = x.data<T>();
      T* out = y.data<T>();
      // max then min, as numpy.clip: when lo > hi every element becomes hi; NaN stays NaN.
      for (int64_t i = 0, n = x.numel(); i < n; ++i) {
        C v = static_cast<C>(in[i]);
        if (v < lo) v = lo;
        if (v > hi) v = hi;
        out[i] = static_cast<T>(v);
      }
    });
  }

 private:
  template <class T>
  static compute_t<T> bound(const Tensor& b, const Tensor& x, const std::string& who,
                            const char* name) {
    PI_CHECK(b.dtype() == x.dtype(), InvalidArgument, who, ": ", name, " is ", b.describe(),
             " but the input is ", x.describe(), "; they must have the same dtype");
    PI_CHECK(b.numel() == 1, InvalidArgument, who, ": ", name, " must be a scalar, got ",
             b.describe());
    return static_cast<compute_t<T>>(b.data<T>()[0]);
  }

  bool attr_form_;
  float min_ = 0;
  float max_ = 0;
};

}  // namespace

PI_CPU_KERNEL(Relu, 1, 28, ReluKernel);
PI_CPU_KERNEL(LeakyRelu, 1, 28, LeakyReluKernel);
PI_CPU_KERNEL(PRelu, 1, 28, PReluKernel);
PI_CPU_KERNEL(Elu, 1, 28, EluKernel);
PI_CPU_KERNEL(Selu, 1, 28, SeluKernel);
PI_CPU_KERNEL(Celu, 12, 28, CeluKernel);
PI_CPU_KERNEL(Sigmoid, 1, 28, SigmoidKernel);
PI_CPU_KERNEL(HardSigmoid, 1, 28, HardSigmoidKernel);
PI_CPU_KERNEL(HardSwish, 14, 28, HardSwishKernel);
PI_CPU_KERNEL(Tanh, 1, 28, TanhKernel);
PI_CPU_KERNEL(Softplus, 1, 28, SoftplusKernel);
PI_CPU_KERNEL(Softsign, 1, 28, SoftsignKernel);
PI_CPU_KERNEL(ThresholdedRelu, 10, 28, ThresholdedReluKernel);
PI_CPU_KERNEL(Shrink, 9, 28, ShrinkKernel);
PI_CPU_KERNEL(Clip, 1, 28, ClipKernel);
PI_CPU_KERNEL(Mish, 18, 28, MishKernel);

}  // namespace polyinfer
