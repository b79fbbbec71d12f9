// Element-wise reductions over any number of inputs with numpy broadcasting: Sum, Mean, Min, Max.
//
// Versions before 8 required equal shapes; numpy broadcasting accepts those too, so one class
// covers every version. Later versions only widened the type lists (integers for Min/Max in 12,
// bfloat16 in 13).
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

struct SumOp {
  template <class C> static C combine(C acc, C x) {
    // Integers wrap (in uint64_t, where overflow is defined) instead of overflowing.
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(x));
    } else {
      return acc + x;
    }
  }
};

struct MeanOp {
  template <class C> static C combine(C acc, C x) { return acc + x; }
};

// NaN wins, as in numpy.maximum/minimum: a NaN input makes that output element NaN.
struct MaxOp {
  template <class C> static C combine(C acc, C x) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(acc) || std::isnan(x)) return std::isnan(acc) ? acc : x;
    }
    return x > acc ? x : acc;
  }
};

struct MinOp {
  template <class C> static C combine(C acc, C x) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(acc) || std::isnan(x)) return std::isnan(acc) ? acc : x;
    }
    return x < acc ? x : acc;
  }
};

template <class Types, class Op> class VariadicKernel final : public Kernel {
 public:
  explicit VariadicKernel(const KernelInfo&) {}

  void run(KernelContext& ctx) override {
    const std::string who = ctx.node().label();
    const size_t n = ctx.num_inputs();
    PI_CHECK(n >= 1, InvalidModel, who, ": needs at least one input");
    std::vector<const Tensor*> inputs;
    std::vector<Shape> shapes;
    for (size_t k = 0; k < n; ++k) {
      inputs.push_back(&ctx.input(k));
      shapes.push_back(inputs.back()->shape());
      PI_CHECK(inputs[k]->dtype() == inputs[0]->dtype(), InvalidArgument, who, ": input ", k,
               " is ", inputs[k]->describe(), " but input 0 is ", inputs[0]->describe(),
               "; all inputs must have the same dtype");
    }
    const Shape shape = broadcast_shapes(shapes, who.c_str());
    const DType dtype = inputs[0]->dtype();
    dispatch(Types{}, dtype, who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      Tensor& y = ctx.output(0, dtype, shape);
      T* out = y.data<T>();
      // Accumulates in the output, rounding after each input as numpy does for 16-bit floats.
      for (size_t k = 0; k < n; ++k) {
        const T* in = inputs[k]->data<T>();
        const std::vector<int64_t> strides[1] = {broadcast_strides(shapes[k], shape)};
        for_each_broadcast(shape, strides, [&](int64_t i, int64_t off) {
          const C v = static_cast<C>(in[off]);
          out[i] = static_cast<T>(k == 0 ? v : Op::combine(static_cast<C>(out[i]), v));
        });
      }
      if constexpr (std::is_same_v<Op, MeanOp>) {
        for (int64_t i = 0, total = y.numel(); i < total; ++i)
          out[i] = static_cast<T>(static_cast<C>(out[i]) / static_cast<C>(n));
      }
    });
  }
};

using SumKernel = VariadicKernel<NumericTypes, SumOp>;
using MeanKernel = VariadicKernel<FloatTypes, MeanOp>;
using MaxKernel = VariadicKernel<NumericTypes, MaxOp>;
using MinKernel = VariadicKernel<NumericTypes, MinOp>;

}  // namespace

PI_CPU_KERNEL(Sum, 1, 28, SumKernel);
PI_CPU_KERNEL(Mean, 1, 28, MeanKernel);
PI_CPU_KERNEL(Max, 1, 28, MaxKernel);
PI_CPU_KERNEL(Min, 1, 28, MinKernel);

}  // namespace polyinfer
