// Reductions over axes (ReduceSum, ReduceMean, ReduceMax, ...) and ArgMax/ArgMin.
//
// Axes come from the "axes" attribute up to ReduceSum-11 and the other Reduce ops' version 13,
// and from the optional second input from ReduceSum-13 and the others' version 18 on. An empty
// axes list reduces everything, unless noop_with_empty_axes is set: then every element is
// "reduced" on its own (so ReduceSumSquare squares, ReduceL1 takes |x|, ReduceSum copies).
// Reducing an empty set gives the operation's identity: 0 for the sums, 1 for the product,
// -inf (or the type's lowest value) for max, +inf (or the highest) for min, -inf for the
// log-sums and NaN for the mean.
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include "core/dispatch.h"
#include "core/reduce_axes.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

enum class ReduceOp { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

// A double converted to an integer type without undefined behaviour: NaN becomes 0 and values
// outside the type's range saturate.
template <class T> T saturate_from_double(double v) {
  if constexpr (std::is_floating_point_v<compute_t<T>>) {
    return static_cast<T>(static_cast<compute_t<T>>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

// Integer sums, products and sums of squares wrap like the integer arithmetic of numpy and of
// the other runtimes; doing them in uint64_t gives the same low bits without signed overflow.
constexpr bool wraps(ReduceOp op) {
  return op == ReduceOp::Sum || op == ReduceOp::Prod || op == ReduceOp::L1 ||
         op == ReduceOp::SumSquare;
}

template <ReduceOp Op, class T> struct Accumulator {
  static constexpr bool kFloat = std::is_floating_point_v<compute_t<T>>;
  static constexpr bool kMinMax = Op == ReduceOp::Max || Op == ReduceOp::Min;
  // Floats accumulate in double; integer min/max stay in T; wrapping integer ops use uint64_t;
  // the integer ops that leave the integers (mean, L2, logs) go through double.
  using A = std::conditional_t<
      kFloat, double,
      std::conditional_t<kMinMax, T, std::conditional_t<wraps(Op), uint64_t, double>>>;

  static A init() {
    if constexpr (Op == ReduceOp::Prod) {
      return A(1);
    } else if constexpr (Op == ReduceOp::Max) {
      if constexpr (std::is_same_v<A, double>) return -std::numeric_limits<double>::infinity();
      else if constexpr (std::is_same_v<A, bool>)
        return false;
      else
        return std::numeric_limits<A>::lowest();
    } else if constexpr (Op == ReduceOp::Min) {
      if constexpr (std::is_same_v<A, double>) return std::numeric_limits<double>::infinity();
      else if constexpr (std::is_same_v<A, bool>)
        return true;
      else
        return std::numeric_limits<A>::max();
    } else {
      return A(0);
    }
  }

  // `shift` is the running maximum for LogSumExp (subtracted before exp for stability).
  static void add(A& acc, T raw, double shift) {
    if constexpr (std::is_same_v<A, uint64_t>) {
      // Two's complement image of the value: sums and products mod 2^64 match T's wrap-around.
      const uint64_t u = static_cast<uint64_t>(
          static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(raw));
      if constexpr (Op == ReduceOp::Sum) acc += u;
      if constexpr (Op == ReduceOp::Prod) acc *= u;
      if constexpr (Op == ReduceOp::SumSquare) acc += u * u;
      if constexpr (Op == ReduceOp::L1) {
        if constexpr (std::is_signed_v<T>) acc = raw < 0 ? acc - u : acc + u;
        else
          acc += u;
      }
    } else if constexpr (kMinMax && !std::is_same_v<A, double>) {
      if constexpr (Op == ReduceOp::Max) acc = raw > acc ? raw : acc;
      else
        acc = raw < acc ? raw : acc;
    } else {
      const double v = static_cast<double>(static_cast<compute_t<T>>(raw));
      if constexpr (Op == ReduceOp::Max) {
        if (v > acc || std::isnan(v)) acc = v;  // NaN propagates, as in numpy
      } else if constexpr (Op == ReduceOp::Min) {
        if (v < acc || std::isnan(v)) acc = v;
      } else if constexpr (Op == ReduceOp::Sum || Op == ReduceOp::Mean || Op == ReduceOp::LogSum) {
        acc += v;
      } else if constexpr (Op == ReduceOp::Prod) {
        acc *= v;
      } else if constexpr (Op == ReduceOp::L1) {
        acc += std::fabs(v);
      } else if constexpr (Op == ReduceOp::L2 || Op == ReduceOp::SumSquare) {
        acc += v * v;
      } else if constexpr (Op == ReduceOp::LogSumExp) {
        acc += std::exp(v - shift);
      }
    }
  }

  static T finish(A acc, int64_t count, double shift) {
    if constexpr (std::is_same_v<A, uint64_t>) {
      return static_cast<T>(acc);  // modular conversion (C++20)
    } else if constexpr (!std::is_same_v<A, double>) {
      return acc;
    } else {
      double r = acc;
      if constexpr (Op == ReduceOp::Mean) r = acc / static_cast<double>(count);
      if constexpr (Op == ReduceOp::L2) r = std::sqrt(acc);
      if constexpr (Op == ReduceOp::LogSum) r = std::log(acc);
      if constexpr (Op == ReduceOp::LogSumExp) {
        // An infinite or NaN maximum is the answer itself (and exp(x - inf) would be NaN).
        r = std::isfinite(shift) ? std::log(acc) + shift : shift;
      }
      return saturate_from_double<T>(r);
    }
  }
};

// Reduces x into y. `out_strides` maps an input index to its output offset: the output's strides
// with 0 on the reduced axes; `count` is the number of input elements per output element.
template <ReduceOp Op, class T>
void reduce_typed(const Tensor& x, Tensor& y, const std::vector<int64_t>& out_strides,
                  int64_t count) {
  using Acc = Accumulator<Op, T>;
  const T* in = x.data<T>();
  T* out = y.data<T>();
  const int64_t n = y.numel();
  const std::vector<int64_t> strides[1] = {out_strides};

  std::vector<double> shift(static_cast<size_t>(Op == ReduceOp::LogSumExp ? n : 0),
                            -std::numeric_limits<double>::infinity());
  if constexpr (Op == ReduceOp::LogSumExp) {
    for_each_broadcast(x.shape(), strides, [&](int64_t i, int64_t o) {
      const double v = static_cast<double>(static_cast<compute_t<T>>(in[i]));
      if (v > shift[o] || std::isnan(v)) shift[o] = v;
    });
  }
  // Not std::vector: bool accumulators (ReduceMax/Min of bool) need real references.
  std::unique_ptr<typename Acc::A[]> acc(new typename Acc::A[static_cast<size_t>(n)]);
  for (int64_t o = 0; o < n; ++o) acc[o] = Acc::init();
  for_each_broadcast(x.shape(), strides, [&](int64_t i, int64_t o) {
    Acc::add(acc[o], in[i], shift.empty() ? 0.0 : shift[o]);
  });
  for (int64_t o = 0; o < n; ++o)
    out[o] = Acc::finish(acc[o], count, shift.empty() ? 0.0 : shift[o]);
}

template <ReduceOp Op> constexpr const char* reduce_name() {
  switch (Op) {
    case ReduceOp::Sum: return "ReduceSum";
    case ReduceOp::Mean: return "ReduceMean";
    case ReduceOp::Max: return "ReduceMax";
    case ReduceOp::Min: return "ReduceMin";
    case ReduceOp::Prod: return "ReduceProd";
    case ReduceOp::L1: return "ReduceL1";
    case ReduceOp::L2: return "ReduceL2";
    case ReduceOp::LogSum: return "ReduceLogSum";
    case ReduceOp::LogSumExp: return "ReduceLogSumExp";
    case ReduceOp::SumSquare: return "ReduceSumSquare";
  }
  return "Reduce";
}

template <ReduceOp Op> class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(const KernelInfo& info)
      : label_(info.node().label()),
        // ReduceSum took axes as an input one release before the others (13 vs 18).
        axes_from_input_(info.opset() >= (Op == ReduceOp::Sum ? 13 : 18)),
        axes_attr_(info.attr_ints("axes")),
        keepdims_(info.attr_int("keepdims", 1) != 0),
        noop_with_empty_axes_(info.attr_int("noop_with_empty_axes", 0) != 0) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> axes = axes_attr_;
    if (axes_from_input_) {
      axes.clear();
      if (ctx.has_input(1)) axes = read_int_list(ctx.input(1), label_.c_str());
    }
    const int rank = x.rank();
    const std::vector<bool> reduced =
        reduced_axes(axes, rank, noop_with_empty_axes_, label_.c_str());

    Shape kept = x.shape();  // keepdims form: reduced axes become 1
    Shape out_shape;
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      if (reduced[d]) {
        count *= x.shape()[d];
        kept[d] = 1;
        if (keepdims_) out_shape.push_back(1);
      } else {
        out_shape.push_back(x.shape()[d]);
      }
    }
    std::vector<int64_t> out_strides = strides_of(kept);
    for (int d = 0; d < rank; ++d)
      if (reduced[d]) out_strides[d] = 0;

    Tensor& y = ctx.output(0, x.dtype(), out_shape);
    using Types = std::conditional_t<Op == ReduceOp::Max || Op == ReduceOp::Min,
                                     decltype(NumericTypes{} + TypeList<bool>{}), NumericTypes>;
    dispatch(Types{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      reduce_typed<Op, T>(x, y, out_strides, count);
    });
  }

 private:
  std::string label_;
  bool axes_from_input_;
  std::vector<int64_t> axes_attr_;
  bool keepdims_;
  bool noop_with_empty_axes_;
};

// ArgMax / ArgMin: the index (int64) of the extreme value along one axis.
template <bool IsMax> class ArgKernel final : public Kernel {
 public:
  explicit ArgKernel(const KernelInfo& info)
      : label_(info.node().label()),
        axis_(info.attr_int("axis", 0)),
        keepdims_(info.attr_int("keepdims", 1) != 0),
        select_last_(info.attr_int("select_last_index", 0) != 0) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int rank = x.rank();
    const int64_t axis = normalize_axis(axis_, rank, label_.c_str());
    const Shape& s = x.shape();
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= s[d];
    for (int d = static_cast<int>(axis) + 1; d < rank; ++d) inner *= s[d];
    const int64_t n = s[axis];
    PI_CHECK(n > 0 || outer * inner == 0, InvalidArgument, label_, ": cannot take the arg",
             IsMax ? "max" : "min", " over an empty axis of ", x.describe());

    Shape out_shape;
    for (int d = 0; d < rank; ++d) {
      if (d != axis) out_shape.push_back(s[d]);
      else if (keepdims_)
        out_shape.push_back(1);
    }
    Tensor& y = ctx.output(0, DType::Int64, out_shape);
    int64_t* out = y.data<int64_t>();
    dispatch(NumericTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const T* in = x.data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const T* p = in + o * n * inner + i;
          int64_t best = 0;
          C bv = static_cast<C>(p[0]);
          for (int64_t k = 1; k < n; ++k) {
            const C v = static_cast<C>(p[k * inner]);
            if (better(v, bv)) {
              best = k;
              bv = v;
            }
          }
          out[o * inner + i] = best;
        }
      }
    });
  }

 private:
  // Whether v replaces the current best; NaN counts as the extreme value (numpy's argmax).
  template <class C> bool better(C v, C best) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(best)) return select_last_ && std::isnan(v);
      if (std::isnan(v)) return true;
    }
    if (v == best) return select_last_;
    return IsMax ? v > best : v < best;
  }

  std::string label_;
  int64_t axis_;
  bool keepdims_;
  bool select_last_;
};

using ReduceSumKernel = ReduceKernel<ReduceOp::Sum>;
using ReduceMeanKernel = ReduceKernel<ReduceOp::Mean>;
using ReduceMaxKernel = ReduceKernel<ReduceOp::Max>;
using ReduceMinKernel = ReduceKernel<ReduceOp::Min>;
using ReduceProdKernel = ReduceKernel<ReduceOp::Prod>;
using ReduceL1Kernel = ReduceKernel<ReduceOp::L1>;
using ReduceL2Kernel = ReduceKernel<ReduceOp::L2>;
using ReduceLogSumKernel = ReduceKernel<ReduceOp::LogSum>;
using ReduceLogSumExpKernel = ReduceKernel<ReduceOp::LogSumExp>;
using ReduceSumSquareKernel = ReduceKernel<ReduceOp::SumSquare>;
using ArgMaxKernel = ArgKernel<true>;
using ArgMinKernel = ArgKernel<false>;

}  // namespace

// One class per op covers every version: the attribute/input form of axes is chosen by opset,
// and the later versions (ReduceMax/Min-20: bool; the rest: more types) only widen the types.
PI_CPU_KERNEL(ReduceSum, 1, 28, ReduceSumKernel);
PI_CPU_KERNEL(ReduceMean, 1, 28, ReduceMeanKernel);
PI_CPU_KERNEL(ReduceMax, 1, 28, ReduceMaxKernel);
PI_CPU_KERNEL(ReduceMin, 1, 28, ReduceMinKernel);
PI_CPU_KERNEL(ReduceProd, 1, 28, ReduceProdKernel);
PI_CPU_KERNEL(ReduceL1, 1, 28, ReduceL1Kernel);
PI_CPU_KERNEL(ReduceL2, 1, 28, ReduceL2Kernel);
PI_CPU_KERNEL(ReduceLogSum, 1, 28, ReduceLogSumKernel);
PI_CPU_KERNEL(ReduceLogSumExp, 1, 28, ReduceLogSumExpKernel);
PI_CPU_KERNEL(ReduceSumSquare, 1, 28, ReduceSumSquareKernel);
PI_CPU_KERNEL(ArgMax, 1, 28, ArgMaxKernel);
PI_CPU_KERNEL(ArgMin, 1, 28, ArgMinKernel);

}  // namespace polyinfer
