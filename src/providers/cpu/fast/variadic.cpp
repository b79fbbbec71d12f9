// Fast Max and Min (opset 8+, numpy broadcasting of any number of inputs) for float32, int32
// and int64: a Keras ReLU exported as Max(x, 0), a clamp Min(Max(x, lo), hi).
//
// The output is the broadcast of all inputs. Inputs 0 and 1 are combined into it by one pass of
// the broadcast machinery (fast/broadcast.h); every further input is combined into it by one
// more pass, as the reference kernel folds them. NaN wins as in the reference (numpy.maximum):
// `x > acc || x != x ? x : acc` picks the same element bit for bit, signed zeros included.
// Other dtypes, opsets 1-7 (no broadcasting) and mismatched dtypes go to the reference kernel.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/shape_util.h"
#include "providers/cpu/fast/broadcast.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

template <class T> PI_FAST_INLINE bool nan_value(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return __builtin_isnan(x);
  } else {
    return false;
  }
}
struct MaxOp {
  template <class T> static PI_FAST_INLINE T f(T acc, T x) {
    return x > acc || nan_value(x) ? x : acc;
  }
};
struct MinOp {
  template <class T> static PI_FAST_INLINE T f(T acc, T x) {
    return x < acc || nan_value(x) ? x : acc;
  }
};

// `rows` runs of n outputs; A (the accumulator, possibly y itself) and B contiguous along the run
// (VA, VB) or one value per run. No __restrict: y may be A (same index); omp simd vectorizes.
template <class T, class Op, bool VA, bool VB>
PI_FAST_CLONES void minmax_rows(const T* a, int64_t sa, const T* b, int64_t sb, T* y, int64_t rows,
                                int64_t n) {
  for (int64_t r = 0; r < rows; ++r, a += sa, b += sb, y += n) {
    const T a0 = a[0], b0 = b[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = Op::f(VA ? a[i] : a0, VB ? b[i] : b0);
  }
}

PI_FAST_MATH_END

template <class T, class Op>
using RowsFn = void (*)(const T*, int64_t, const T*, int64_t, T*, int64_t, int64_t);

// y = Op(a, b) over the broadcast of a and b to y's shape.
template <class T, class Op>
void combine(const T* a, const Shape& as, const T* b, const Shape& bs, T* y, const Shape& ys,
             int threads) {
  static constexpr RowsFn<T, Op> kFns[4] = {
      minmax_rows<T, Op, false, false>, minmax_rows<T, Op, false, true>,
      minmax_rows<T, Op, true, false>, minmax_rows<T, Op, true, true>};
  const BroadcastPlan<2> p = plan_broadcast<2>({&as, &bs}, ys);
  const RowsFn<T, Op> fn = kFns[(p.vec(0) ? 2 : 0) + (p.vec(1) ? 1 : 0)];
  const int64_t ra = p.row_stride(0), rb = p.row_stride(1);
  for_each_run(p, shape_numel(ys), threads, kGrain,
               [&](const std::array<int64_t, 2>& o, int64_t i, int64_t rows, int64_t len) {
                 fn(a + o[0], ra, b + o[1], rb, y + i, rows, len);
               });
}

template <class Op> class FastMinMaxKernel final : public Kernel {
 public:
  explicit FastMinMaxKernel(const KernelInfo& info) : ref_(info) {
    if (info.opset() < 8) info.unsupported("the fast kernel before opset 8 (no broadcasting)");
    for (size_t i = 0; i < info.num_inputs(); ++i) {
      const ir::TypeInfo* t = info.input_type(i);
      if (t && t->kind == ir::TypeInfo::Kind::Tensor && t->elem != DType::Undefined &&
          t->elem != DType::Float32 && t->elem != DType::Int32 && t->elem != DType::Int64)
        info.unsupported(std::string("the fast kernel for ") + dtype_name(t->elem));
    }
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const size_t n = ctx.num_inputs();
    if (n == 0) return ref_.run(ctx);
    std::vector<const Tensor*> in;
    std::vector<Shape> shapes;
    for (size_t k = 0; k < n; ++k) {
      if (!ctx.has_input(k) || !ctx.value(k).is_tensor()) return ref_.run(ctx);
      in.push_back(&ctx.input(k));
      shapes.push_back(in.back()->shape());
    }
    const DType t = in[0]->dtype();
    if (t != DType::Float32 && t != DType::Int32 && t != DType::Int64) return ref_.run(ctx);
    for (const Tensor* x : in)
      if (x->dtype() != t) return ref_.run(ctx);
    const std::string who = ctx.node().label();
    const Shape shape = broadcast_shapes(shapes, who.c_str());
    Tensor& y = ctx.output(0, t, shape);
    if (y.numel() == 0) return;
    if (t == DType::Float32) return fold<float>(in, y, ctx.threads());
    if (t == DType::Int32) return fold<int32_t>(in, y, ctx.threads());
    fold<int64_t>(in, y, ctx.threads());
  }

 private:
  template <class T>
  static void fold(const std::vector<const Tensor*>& in, Tensor& y, int threads) {
    T* py = y.data<T>();
    if (in.size() == 1) {
      std::memcpy(py, in[0]->data<T>(), y.nbytes());
      return;
    }
    combine<T, Op>(in[0]->data<T>(), in[0]->shape(), in[1]->data<T>(), in[1]->shape(), py,
                   y.shape(), threads);
    for (size_t k = 2; k < in.size(); ++k)
      combine<T, Op>(py, y.shape(), in[k]->data<T>(), in[k]->shape(), py, y.shape(), threads);
  }

  RefFallback ref_;
};

using FastMax = FastMinMaxKernel<MaxOp>;
using FastMin = FastMinMaxKernel<MinOp>;

}  // namespace

PI_CPU_FAST_KERNEL("", Max, 8, 28, FastMax);
PI_CPU_FAST_KERNEL("", Min, 8, 28, FastMin);

}  // namespace polyinfer::fast
