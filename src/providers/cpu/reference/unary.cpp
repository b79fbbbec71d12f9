// Element-wise math of one input: Abs, Neg, Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round, Sign,
// the trigonometric and hyperbolic functions, Erf, Not, IsNaN and IsInf.
//
// Version bumps of these operators only widened their type lists (bfloat16, integers, float8) or
// dropped the legacy `consumed_inputs` attribute, so one class covers every version from the
// first through 23. Integer variants wrap on overflow (Abs and Neg of the most negative value
// return it unchanged, as numpy does) instead of relying on undefined signed overflow.
#include <cmath>
#include <string>
#include <type_traits>

#include "core/dispatch.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Applies a predicate to every element of input 0; the output is a bool tensor of its shape.
template <class Types, class F> void map_to_bool(KernelContext& ctx, const F& f) {
  const Tensor& x = ctx.input(0);
  const std::string who = ctx.node().label();
  dispatch(Types{}, x.dtype(), who.c_str(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    Tensor& y = ctx.output(0, DType::Bool, x.shape());
    const T* in = x.data<T>();
    bool* out = y.data<bool>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = f(static_cast<C>(in[i]));
  });
}

// Negation that wraps for signed integers (the negation of INT_MIN is INT_MIN).
template <class C> C negate(C x) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(x));
  } else {
    return -x;
  }
}

struct AbsOp {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return x < C(0) ? negate(x) : x;
    }
  }
};
struct NegOp {
  template <class C> C operator()(C x) const { return negate(x); }
};
struct SignOp {
  // NaN stays NaN; zero keeps its sign.
  template <class C> C operator()(C x) const {
    if (x > C(0)) return C(1);
    if constexpr (!std::is_unsigned_v<C>) {
      if (x < C(0)) return C(-1);
    }
    return x;
  }
};
struct ExpOp {
  template <class C> C operator()(C x) const { return std::exp(x); }
};
struct LogOp {
  template <class C> C operator()(C x) const { return std::log(x); }
};
struct SqrtOp {
  template <class C> C operator()(C x) const { return std::sqrt(x); }
};
struct ReciprocalOp {
  template <class C> C operator()(C x) const { return C(1) / x; }
};
struct FloorOp {
  template <class C> C operator()(C x) const { return std::floor(x); }
};
struct CeilOp {
  template <class C> C operator()(C x) const { return std::ceil(x); }
};
// Halves round to even, as the spec asks; nearbyint does that in the default rounding mode.
struct RoundOp {
  template <class C> C operator()(C x) const { return std::nearbyint(x); }
};
struct SinOp {
  template <class C> C operator()(C x) const { return std::sin(x); }
};
struct CosOp {
  template <class C> C operator()(C x) const { return std::cos(x); }
};
struct TanOp {
  template <class C> C operator()(C x) const { return std::tan(x); }
};
struct AsinOp {
  template <class C> C operator()(C x) const { return std::asin(x); }
};
struct AcosOp {
  template <class C> C operator()(C x) const { return std::acos(x); }
};
struct AtanOp {
  template <class C> C operator()(C x) const { return std::atan(x); }
};
struct SinhOp {
  template <class C> C operator()(C x) const { return std::sinh(x); }
};
struct CoshOp {
  template <class C> C operator()(C x) const { return std::cosh(x); }
};
struct AsinhOp {
  template <class C> C operator()(C x) const { return std::asinh(x); }
};
struct AcoshOp {
  template <class C> C operator()(C x) const { return std::acosh(x); }
};
struct AtanhOp {
  template <class C> C operator()(C x) const { return std::atanh(x); }
};
// Erf is defined for integers too; erf of an integer lies in [-1, 1], so the conversion back is
// always in range.
struct ErfOp {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(std::erf(static_cast<double>(x)));
    } else {
      return std::erf(x);
    }
  }
};

template <class Types, class Op> class UnaryKernel final : public Kernel {
 public:
  explicit UnaryKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override { map_same_type<Types>(ctx, Op{}); }
};

using SignedNumericTypes =
    TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t>;

using AbsKernel = UnaryKernel<NumericTypes, AbsOp>;
using NegKernel = UnaryKernel<SignedNumericTypes, NegOp>;
using SignKernel = UnaryKernel<NumericTypes, SignOp>;
using ExpKernel = UnaryKernel<FloatTypes, ExpOp>;
using LogKernel = UnaryKernel<FloatTypes, LogOp>;
using SqrtKernel = UnaryKernel<FloatTypes, SqrtOp>;
using ReciprocalKernel = UnaryKernel<FloatTypes, ReciprocalOp>;
using FloorKernel = UnaryKernel<FloatTypes, FloorOp>;
using CeilKernel = UnaryKernel<FloatTypes, CeilOp>;
using RoundKernel = UnaryKernel<FloatTypes, RoundOp>;
using SinKernel = UnaryKernel<FloatTypes, SinOp>;
using CosKernel = UnaryKernel<FloatTypes, CosOp>;
using TanKernel = UnaryKernel<FloatTypes, TanOp>;
using AsinKernel = UnaryKernel<FloatTypes, AsinOp>;
using AcosKernel = UnaryKernel<FloatTypes, AcosOp>;
using AtanKernel = UnaryKernel<FloatTypes, AtanOp>;
using SinhKernel = UnaryKernel<FloatTypes, SinhOp>;
using CoshKernel = UnaryKernel<FloatTypes, CoshOp>;
using AsinhKernel = UnaryKernel<FloatTypes, AsinhOp>;
using AcoshKernel = UnaryKernel<FloatTypes, AcoshOp>;
using AtanhKernel = UnaryKernel<FloatTypes, AtanhOp>;
using ErfKernel = UnaryKernel<NumericTypes, ErfOp>;

class NotKernel final : public Kernel {
 public:
  explicit NotKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    map_to_bool<TypeList<bool>>(ctx, [](bool x) { return !x; });
  }
};

class IsNaNKernel final : public Kernel {
 public:
  explicit IsNaNKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    map_to_bool<FloatTypes>(ctx, [](auto x) { return std::isnan(x); });
  }
};

class IsInfKernel final : public Kernel {
 public:
  explicit IsInfKernel(const KernelInfo& info)
      : negative_(info.attr_int("detect_negative", 1) != 0),
        positive_(info.attr_int("detect_positive", 1) != 0) {}
  void run(KernelContext& ctx) override {
    map_to_bool<FloatTypes>(
        ctx, [this](auto x) { return std::isinf(x) && (x > 0 ? positive_ : negative_); });
  }

 private:
  bool negative_;
  bool positive_;
};

}  // namespace

PI_CPU_KERNEL(Abs, 1, 28, AbsKernel);
PI_CPU_KERNEL(Neg, 1, 28, NegKernel);
PI_CPU_KERNEL(Sign, 9, 28, SignKernel);
PI_CPU_KERNEL(Exp, 1, 28, ExpKernel);
PI_CPU_KERNEL(Log, 1, 28, LogKernel);
PI_CPU_KERNEL(Sqrt, 1, 28, SqrtKernel);
PI_CPU_KERNEL(Reciprocal, 1, 28, ReciprocalKernel);
PI_CPU_KERNEL(Floor, 1, 28, FloorKernel);
PI_CPU_KERNEL(Ceil, 1, 28, CeilKernel);
PI_CPU_KERNEL(Round, 11, 28, RoundKernel);
PI_CPU_KERNEL(Sin, 7, 28, SinKernel);
PI_CPU_KERNEL(Cos, 7, 28, CosKernel);
PI_CPU_KERNEL(Tan, 7, 28, TanKernel);
PI_CPU_KERNEL(Asin, 7, 28, AsinKernel);
PI_CPU_KERNEL(Acos, 7, 28, AcosKernel);
PI_CPU_KERNEL(Atan, 7, 28, AtanKernel);
PI_CPU_KERNEL(Sinh, 9, 28, SinhKernel);
PI_CPU_KERNEL(Cosh, 9, 28, CoshKernel);
PI_CPU_KERNEL(Asinh, 9, 28, AsinhKernel);
PI_CPU_KERNEL(Acosh, 9, 28, AcoshKernel);
PI_CPU_KERNEL(Atanh, 9, 28, AtanhKernel);
PI_CPU_KERNEL(Erf, 9, 28, ErfKernel);
PI_CPU_KERNEL(Not, 1, 28, NotKernel);
PI_CPU_KERNEL(IsNaN, 9, 28, IsNaNKernel);
PI_CPU_KERNEL(IsInf, 10, 28, IsInfKernel);

}  // namespace polyinfer
