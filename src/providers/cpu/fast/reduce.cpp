// Fast float32 ReduceSum and ReduceMean over trailing axes: the last axis (ReduceMean(-1) in
// hand-written layer norms, pooled BERT outputs), [H, W] of NCHW (a global average pool written as
// ReduceMean), or everything. Those make each output element the sum of one contiguous row.
//
// Rows are split over threads; each row is summed by a vectorized loop in double (so long rows
// and sums that cancel lose nothing). Other axis sets, empty reductions and other dtypes go to the
// reference kernel.
#include <cstdint>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

PI_FAST_CLONES double row_sum_d(const float* __restrict x, int64_t n) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]);
  return s;
}

PI_FAST_MATH_END

template <bool Mean> class FastReduceKernel final : public Kernel {
 public:
  explicit FastReduceKernel(const KernelInfo& info)
      : ref_(info),
        axes_from_input_(info.opset() >= (Mean ? 18 : 13)),
        axes_attr_(info.attr_ints("axes")),
        keepdims_(info.attr_int("keepdims", 1) != 0),
        noop_(info.attr_int("noop_with_empty_axes", 0) != 0) {
    require_float_input(info, 0);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int rank = x.rank();
    if (x.dtype() != DType::Float32 || rank == 0) return ref_.run(ctx);
    std::vector<int64_t> axes = axes_attr_;
    if (axes_from_input_) {
      axes.clear();
      if (ctx.has_input(1)) {
        const Tensor& a = ctx.input(1);
        if (a.dtype() != DType::Int64) return ref_.run(ctx);
        axes = a.to_vector<int64_t>();
      }
    }
    // Which axes are reduced; anything odd (out of range, repeated, noop) is the reference's.
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
    if (axes.empty() && noop_) return ref_.run(ctx);
    for (int64_t a : axes) {
      if (a < -rank || a >= rank) return ref_.run(ctx);
      const int64_t ax = a < 0 ? a + rank : a;
      if (reduced[ax]) return ref_.run(ctx);
      reduced[ax] = true;
    }
    int first = rank;  // the reduced axes must be exactly [first, rank)
    while (first > 0 && reduced[first - 1]) --first;
    for (int d = 0; d < first; ++d)
      if (reduced[d]) return ref_.run(ctx);
    int64_t count = 1;
    Shape out;
    for (int d = 0; d < rank; ++d) {
      if (d >= first) {
        count *= x.shape()[d];
        if (keepdims_) out.push_back(1);
      } else {
        out.push_back(x.shape()[d]);
      }
    }
    if (count == 0) return ref_.run(ctx);  // the identity (0 or NaN) is the reference's business
    Tensor& y = ctx.output(0, DType::Float32, out);
    const int64_t rows = x.numel() / count;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    parallel_for(rows, ctx.threads(), std::max<int64_t>(1, kGrain / count),
                 [&](int64_t b, int64_t e) {
                   for (int64_t r = b; r < e; ++r) {
                     const double s = row_sum_d(xp + r * count, count);
                     yp[r] = static_cast<float>(Mean ? s / static_cast<double>(count) : s);
                   }
                 });
  }

 private:
  RefFallback ref_;
  bool axes_from_input_;
  std::vector<int64_t> axes_attr_;
  bool keepdims_;
  bool noop_;
};

using FastReduceSum = FastReduceKernel<false>;
using FastReduceMean = FastReduceKernel<true>;

}  // namespace

PI_CPU_FAST_KERNEL("", ReduceSum, 1, 28, FastReduceSum);
PI_CPU_FAST_KERNEL("", ReduceMean, 1, 28, FastReduceMean);

}  // namespace polyinfer::fast
