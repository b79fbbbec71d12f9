// Element-wise comparisons and logic with numpy broadcasting and a bool output: Equal, Greater,
// Less, GreaterOrEqual, LessOrEqual, And, Or and Xor.
//
// Opset 1 of Equal/Greater/Less/And/Or/Xor used the legacy `broadcast`/`axis` attributes instead
// of numpy broadcasting; later versions only widened the type lists (Equal takes strings from
// opset 19).
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// The value in its compute type; a reference when that is T itself (no string copies).
template <class T> decltype(auto) compute_value(const T& v) {
  if constexpr (std::is_same_v<T, compute_t<T>>) {
    return (v);
  } else {
    return static_cast<compute_t<T>>(v);
  }
}

struct EqualOp {
  template <class C> bool operator()(const C& a, const C& b) const { return a == b; }
};
struct GreaterOp {
  template <class C> bool operator()(const C& a, const C& b) const { return a > b; }
};
struct LessOp {
  template <class C> bool operator()(const C& a, const C& b) const { return a < b; }
};
struct GreaterOrEqualOp {
  template <class C> bool operator()(const C& a, const C& b) const { return a >= b; }
};
struct LessOrEqualOp {
  template <class C> bool operator()(const C& a, const C& b) const { return a <= b; }
};
struct AndOp {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp {
  bool operator()(bool a, bool b) const { return a != b; }
};

// Compares A and B (same dtype, one of Types) in their compute type; the output is bool.
template <class Types, class Op> class CompareKernel final : public Kernel {
 public:
  explicit CompareKernel(const KernelInfo& info)
      : legacy_(info.opset() < 7),
        broadcast_(info.attr_int("broadcast", 0) != 0),
        axis_(info.has_attr("axis") ? std::optional<int64_t>(info.attr_int("axis"))
                                    : std::nullopt) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    Tensor b = ctx.input(1);
    const std::string who = ctx.node().label();
    PI_CHECK(a.dtype() == b.dtype(), InvalidArgument, who, ": A is ", a.describe(), " but B is ",
             b.describe(), "; both must have the same dtype");
    if (legacy_) b = b.reshaped(legacy_b_shape(a.shape(), b.shape(), broadcast_, axis_, who));
    const Shape shape = broadcast_shapes(a.shape(), b.shape(), who.c_str());
    dispatch(Types{}, a.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& y = ctx.output(0, DType::Bool, shape);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      bool* py = y.data<bool>();
      const Op op{};
      if (a.shape() == shape && b.shape() == shape) {
        for (int64_t i = 0, n = y.numel(); i < n; ++i)
          py[i] = op(compute_value(pa[i]), compute_value(pb[i]));
        return;
      }
      const std::vector<int64_t> strides[2] = {broadcast_strides(a.shape(), shape),
                                               broadcast_strides(b.shape(), shape)};
      for_each_broadcast(shape, strides, [&](int64_t i, int64_t ia, int64_t ib) {
        py[i] = op(compute_value(pa[ia]), compute_value(pb[ib]));
      });
    });
  }

 private:
  bool legacy_;
  bool broadcast_;
  std::optional<int64_t> axis_;
};

using BoolTypes = TypeList<bool>;
using EqualTypes = decltype(NumericTypes{} + TypeList<bool, std::string>{});

using EqualKernel = CompareKernel<EqualTypes, EqualOp>;
using GreaterKernel = CompareKernel<NumericTypes, GreaterOp>;
using LessKernel = CompareKernel<NumericTypes, LessOp>;
using GreaterOrEqualKernel = CompareKernel<NumericTypes, GreaterOrEqualOp>;
using LessOrEqualKernel = CompareKernel<NumericTypes, LessOrEqualOp>;
using AndKernel = CompareKernel<BoolTypes, AndOp>;
using OrKernel = CompareKernel<BoolTypes, OrOp>;
using XorKernel = CompareKernel<BoolTypes, XorOp>;

}  // namespace

PI_CPU_KERNEL(Equal, 1, 28, EqualKernel);
PI_CPU_KERNEL(Greater, 1, 28, GreaterKernel);
PI_CPU_KERNEL(Less, 1, 28, LessKernel);
PI_CPU_KERNEL(GreaterOrEqual, 12, 28, GreaterOrEqualKernel);
PI_CPU_KERNEL(LessOrEqual, 12, 28, LessOrEqualKernel);
PI_CPU_KERNEL(And, 1, 28, AndKernel);
PI_CPU_KERNEL(Or, 1, 28, OrKernel);
PI_CPU_KERNEL(Xor, 1, 28, XorKernel);

}  // namespace polyinfer
