// Element-wise arithmetic of two inputs with numpy broadcasting: Add, Sub, Mul, Div, Pow, Mod and
// BitShift.
//
// Integer arithmetic wraps modulo 2^bits (it is done in uint64_t, where overflow is defined), as
// numpy and every mainstream runtime behave. Integer division or remainder by zero is an error.
// Opsets 1-6 of Add/Sub/Mul/Div and opset 1 of Pow use the legacy `broadcast`/`axis` attributes
// instead of numpy broadcasting.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Reads the legacy broadcasting attributes once, at kernel creation.
struct LegacyBroadcast {
  explicit LegacyBroadcast(const KernelInfo& info, int last_legacy_opset)
      : active(info.opset() <= last_legacy_opset),
        broadcast(info.attr_int("broadcast", 0) != 0),
        axis(info.has_attr("axis") ? std::optional<int64_t>(info.attr_int("axis")) : std::nullopt) {
  }

  // B as the numpy rules should see it.
  Tensor adapt(const Tensor& a, const Tensor& b, const std::string& who) const {
    if (!active) return b;
    return b.reshaped(legacy_b_shape(a.shape(), b.shape(), broadcast, axis, who));
  }

  bool active;
  bool broadcast;
  std::optional<int64_t> axis;
};

// out[i] = f(a[ia], b[ib]) over the broadcast of a and b; `out` already has the broadcast shape.
template <class TA, class TB, class TO, class F>
void broadcast_apply(const Tensor& a, const Tensor& b, Tensor& out, const F& f) {
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TO* po = out.data<TO>();
  const Shape& shape = out.shape();
  if (a.shape() == shape && b.shape() == shape) {
    for (int64_t i = 0, n = out.numel(); i < n; ++i) po[i] = f(pa[i], pb[i]);
    return;
  }
  const std::vector<int64_t> strides[2] = {broadcast_strides(a.shape(), shape),
                                           broadcast_strides(b.shape(), shape)};
  for_each_broadcast(shape, strides,
                     [&](int64_t i, int64_t ia, int64_t ib) { po[i] = f(pa[ia], pb[ib]); });
}

// Wrapping integer arithmetic: uint64_t arithmetic is modulo 2^64, and truncating back to T is
// modulo 2^bits (C++20 defines the signed conversion), which is two's-complement wraparound.
template <class T> T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <class T> T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <class T> T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

struct AddOp {
  template <class T> T operator()(T a, T b) const {
    using C = compute_t<T>;
    if constexpr (std::is_integral_v<T>) return wrap_add(a, b);
    else
      return static_cast<T>(static_cast<C>(a) + static_cast<C>(b));
  }
};
struct SubOp {
  template <class T> T operator()(T a, T b) const {
    using C = compute_t<T>;
    if constexpr (std::is_integral_v<T>) return wrap_sub(a, b);
    else
      return static_cast<T>(static_cast<C>(a) - static_cast<C>(b));
  }
};
struct MulOp {
  template <class T> T operator()(T a, T b) const {
    using C = compute_t<T>;
    if constexpr (std::is_integral_v<T>) return wrap_mul(a, b);
    else
      return static_cast<T>(static_cast<C>(a) * static_cast<C>(b));
  }
};
// Integer division truncates toward zero (C semantics, as ONNX Runtime does).
struct DivOp {
  const std::string* who;
  template <class T> T operator()(T a, T b) const {
    using C = compute_t<T>;
    if constexpr (std::is_integral_v<T>) {
      PI_CHECK(b != 0, InvalidArgument, *who, ": integer division by zero");
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return wrap_sub(T(0), a);  // INT_MIN / -1 would overflow
      }
      return static_cast<T>(a / b);
    } else {
      return static_cast<T>(static_cast<C>(a) / static_cast<C>(b));
    }
  }
};

template <class Op> class ArithKernel final : public Kernel {
 public:
  explicit ArithKernel(const KernelInfo& info) : legacy_(info, 6) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const std::string who = ctx.node().label();
    const Tensor b = legacy_.adapt(a, ctx.input(1), who);
    PI_CHECK(a.dtype() == b.dtype(), InvalidArgument, who, ": A is ", a.describe(), " but B is ",
             b.describe(), "; both must have the same dtype");
    const Shape shape = broadcast_shapes(a.shape(), b.shape(), who.c_str());
    dispatch(NumericTypes{}, a.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& y = ctx.output(0, a.dtype(), shape);
      Op op{};
      if constexpr (std::is_same_v<Op, DivOp>) op.who = &who;
      broadcast_apply<T, T, T>(a, b, y, op);
    });
  }

 private:
  LegacyBroadcast legacy_;
};

using AddKernel = ArithKernel<AddOp>;
using SubKernel = ArithKernel<SubOp>;
using MulKernel = ArithKernel<MulOp>;
using DivKernel = ArithKernel<DivOp>;

// base^exp for integers by repeated squaring, wrapping like the other integer ops. A negative
// exponent gives the truncated value of 1/base^|exp|: 0 unless |base| is 1.
template <class T, class E> T int_pow(T base, E exp) {
  if constexpr (std::is_signed_v<E>) {
    if (exp < 0) {
      if (base == T(1)) return T(1);
      if constexpr (std::is_signed_v<T>) {
        if (base == T(-1)) return (exp % 2 == 0) ? T(1) : T(-1);
      }
      return T(0);
    }
  }
  uint64_t result = 1;
  uint64_t b = static_cast<uint64_t>(base);
  uint64_t e = static_cast<uint64_t>(exp);
  while (e != 0) {
    if (e & 1u) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<T>(result);
}

// Pow allows the exponent to have another dtype than the base (opset 12 on); the output has the
// base's dtype. Mixed integer/float powers are computed in double.
template <class T, class E> T pow_value(T base, E exp) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
    return int_pow(base, exp);
  } else {
    const double r = std::pow(static_cast<double>(static_cast<compute_t<T>>(base)),
                              static_cast<double>(static_cast<compute_t<E>>(exp)));
    if constexpr (std::is_integral_v<T>) return saturate_to_int<T>(r);
    else
      return static_cast<T>(static_cast<compute_t<T>>(r));
  }
}

// The exponent as int64, uint64 or double, whichever holds every value of its dtype exactly, so
// pow_value sees the same values while the loop is instantiated for 12 base types x 3 exponent
// types instead of 12 x 12 (Pow was most of this file's compile time, the library's longest).
Tensor widen_exponent(const Tensor& y, const char* who) {
  Tensor out;
  dispatch(NumericTypes{}, y.dtype(), who, [&](auto tag) {
    using E = typename decltype(tag)::type;
    using W = std::conditional_t<!std::is_integral_v<E>, double,
                                 std::conditional_t<std::is_signed_v<E>, int64_t, uint64_t>>;
    const E* p = y.data<E>();
    std::vector<W> v(static_cast<size_t>(y.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<W>(static_cast<compute_t<E>>(p[i]));
    out = Tensor::from_vector<W>(y.shape(), v);
  });
  return out;
}

class PowKernel final : public Kernel {
 public:
  explicit PowKernel(const KernelInfo& info) : legacy_(info, 6) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::string who = ctx.node().label();
    const Tensor y = legacy_.adapt(x, ctx.input(1), who);
    const Shape shape = broadcast_shapes(x.shape(), y.shape(), who.c_str());
    const Tensor wide = widen_exponent(y, who.c_str());
    dispatch(NumericTypes{}, x.dtype(), who.c_str(), [&](auto base_tag) {
      using T = typename decltype(base_tag)::type;
      dispatch(TypeList<double, int64_t, uint64_t>{}, wide.dtype(), who.c_str(), [&](auto exp_tag) {
        using E = typename decltype(exp_tag)::type;
        Tensor& z = ctx.output(0, x.dtype(), shape);
        broadcast_apply<T, E, T>(x, wide, z, [](T b, E e) { return pow_value(b, e); });
      });
    });
  }

 private:
  LegacyBroadcast legacy_;
};

// A - floor(A / B) * B for floats, the divisor's sign (Mod-28's fmod=0, numpy's mod): C's fmod is
// exact, and moving a remainder of the wrong sign by one B gives it. This form meets each of the
// spec's special cases: a zero result takes B's sign, an infinite A or a zero B gives NaN, an
// infinite B returns a finite A of its sign and B itself otherwise, NaN propagates.
template <class C> C floor_mod(C a, C b) {
  C r = std::fmod(a, b);
  if (r != C(0)) {
    if ((r < C(0)) != (b < C(0))) r += b;
  } else {
    r = std::copysign(C(0), b);
  }
  return r;
}

// Mod: fmod=0 is the remainder with the divisor's sign (Python's %; for floats defined from
// Mod-28 on, and taken at every opset); fmod=1 is C's fmod (the dividend's sign).
class ModKernel final : public Kernel {
 public:
  explicit ModKernel(const KernelInfo& info) : fmod_(info.attr_int("fmod", 0)) {
    PI_CHECK(fmod_ == 0 || fmod_ == 1, InvalidModel, info.node().label(),
             ": fmod must be 0 or 1, got ", fmod_);
  }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const std::string who = ctx.node().label();
    PI_CHECK(a.dtype() == b.dtype(), InvalidArgument, who, ": A is ", a.describe(), " but B is ",
             b.describe(), "; both must have the same dtype");
    const Shape shape = broadcast_shapes(a.shape(), b.shape(), who.c_str());
    const bool c_style = fmod_ == 1;
    dispatch(NumericTypes{}, a.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      Tensor& y = ctx.output(0, a.dtype(), shape);
      broadcast_apply<T, T, T>(a, b, y, [&](T x, T d) -> T {
        if constexpr (std::is_integral_v<T>) {
          PI_CHECK(d != 0, InvalidArgument, who, ": integer modulo by zero");
          if constexpr (std::is_signed_v<T>) {
            if (d == -1) return T(0);  // INT_MIN % -1 would overflow
          }
          T r = static_cast<T>(x % d);
          if constexpr (std::is_signed_v<T>) {
            if (!c_style && r != 0 && ((r < 0) != (d < 0))) r = static_cast<T>(r + d);
          }
          return r;
        } else {
          const C r = c_style ? std::fmod(static_cast<C>(x), static_cast<C>(d))
                              : floor_mod(static_cast<C>(x), static_cast<C>(d));
          return static_cast<T>(r);
        }
      });
    });
  }

 private:
  int64_t fmod_;
};

// BitShift on unsigned and (BitShift-28) signed integers. A signed right shift is arithmetic;
// a left shift works on the bit pattern and drops what passes the sign bit. A shift by a negative
// amount or by the bit width or more gives what the sign extension alone gives (-1 for a right
// shift of a negative X, 0 otherwise), where C++ would be undefined.
class BitShiftKernel final : public Kernel {
 public:
  explicit BitShiftKernel(const KernelInfo& info) {
    const std::string dir = info.attr_string("direction");
    if (dir == "LEFT") {
      left_ = true;
    } else if (dir == "RIGHT") {
      left_ = false;
    } else {
      fail(ErrorCode::InvalidModel, info.node().label(), ": direction must be LEFT or RIGHT, got '",
           dir, "'");
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const std::string who = ctx.node().label();
    PI_CHECK(a.dtype() == b.dtype(), InvalidArgument, who, ": X is ", a.describe(), " but Y is ",
             b.describe(), "; both must have the same dtype");
    const Shape shape = broadcast_shapes(a.shape(), b.shape(), who.c_str());
    const bool left = left_;
    dispatch(IntTypes{}, a.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& y = ctx.output(0, a.dtype(), shape);
      broadcast_apply<T, T, T>(a, b, y, [left](T x, T s) -> T {
        bool out_of_range = false;
        if constexpr (std::is_signed_v<T>) out_of_range = s < 0;
        if (out_of_range || static_cast<uint64_t>(s) >= sizeof(T) * 8) {
          if constexpr (std::is_signed_v<T>) {
            if (!left && x < 0) return T(-1);
          }
          return T(0);
        }
        return left ? static_cast<T>(static_cast<uint64_t>(x) << s) : static_cast<T>(x >> s);
      });
    });
  }

 private:
  bool left_ = true;
};

}  // namespace

PI_CPU_KERNEL(Add, 1, 28, AddKernel);
PI_CPU_KERNEL(Sub, 1, 28, SubKernel);
PI_CPU_KERNEL(Mul, 1, 28, MulKernel);
PI_CPU_KERNEL(Div, 1, 28, DivKernel);
PI_CPU_KERNEL(Pow, 1, 28, PowKernel);
PI_CPU_KERNEL(Mod, 10, 28, ModKernel);
PI_CPU_KERNEL(BitShift, 11, 28, BitShiftKernel);

}  // namespace polyinfer
