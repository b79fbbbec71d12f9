// Fast float32 ReduceSum and ReduceMean over any set of axes: the last axis (ReduceMean(-1) in
// hand-written layer norms), [H, W] of NCHW (a global average pool written as ReduceMean), a
// middle axis (a masked mean over the sequence of [B, S, H]), or everything.
//
// The axes are collapsed (extents of 1 dropped, neighbours of the same kind merged). Where the
// last group is reduced, each output is the sum of contiguous rows, summed by a vectorized loop
// in double; where it is kept, blocks of the output row add whole input rows into doubles,
// vectorized across the block. Sums are in double as the reference's are, so the two round to
// the same float but where a sum lies within double rounding of a float tie. Outputs (or blocks)
// are split over threads. Empty reductions, noop_with_empty_axes, bad axes and other dtypes go
// to the reference kernel.
#include <algorithm>
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

// acc[j] += x[j].
PI_FAST_CLONES void add_row_d(double* __restrict acc, const float* __restrict x, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) acc[i] += static_cast<double>(x[i]);
}

PI_FAST_MATH_END

// A run of input axes, all reduced or all kept, merged: extent and element stride.
struct Group {
  int64_t n, stride;
  bool reduced;
};

// The element offset of index i over `dims` (row-major, each with its stride).
int64_t offset_of(const std::vector<Group>& dims, int64_t i) {
  int64_t off = 0;
  for (size_t d = dims.size(); d-- > 0;) {
    off += (i % dims[d].n) * dims[d].stride;
    i /= dims[d].n;
  }
  return off;
}

// The last group reduced (or nothing left: one element): each output the sum of contiguous rows
// of the last group's length, one per index of the other reduced groups.
void reduce_rows(const std::vector<Group>& g, const float* x, float* y, int64_t outputs, double div,
                 int threads) {
  const int64_t len = g.empty() ? 1 : g.back().n;
  std::vector<Group> kept, red;
  for (size_t i = 0; i + 1 < g.size(); ++i) (g[i].reduced ? red : kept).push_back(g[i]);
  int64_t nr = 1;
  for (const Group& r : red) nr *= r.n;
  parallel_for(outputs, threads, std::max<int64_t>(1, kGrain / (len * nr)),
               [&](int64_t b, int64_t e) {
                 for (int64_t o = b; o < e; ++o) {
                   const float* xo = x + offset_of(kept, o);
                   double s = 0;
                   for (int64_t r = 0; r < nr; ++r) s += row_sum_d(xo + offset_of(red, r), len);
                   y[o] = static_cast<float>(s / div);
                 }
               });
}

// The last group kept (`inner` long): outputs are [kept outer groups, inner]; each block of up
// to kCols inner positions sums rows down the reduced groups into doubles, vectorized across
// the block.
void reduce_columns(const std::vector<Group>& g, const float* x, float* y, double div,
                    int threads) {
  constexpr int64_t kCols = 512;
  const int64_t inner = g.back().n;
  std::vector<Group> kept, red;
  for (size_t i = 0; i + 1 < g.size(); ++i) (g[i].reduced ? red : kept).push_back(g[i]);
  int64_t nr = 1, no = 1;
  for (const Group& r : red) nr *= r.n;
  for (const Group& k : kept) no *= k.n;
  const int64_t blocks = (inner + kCols - 1) / kCols;
  const int64_t grain = std::max<int64_t>(1, kGrain / (nr * std::min(inner, kCols)));
  parallel_for(no * blocks, threads, grain, [&](int64_t b, int64_t e) {
    double acc[kCols];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, j = (t % blocks) * kCols, w = std::min(kCols, inner - j);
      const float* xo = x + offset_of(kept, o) + j;
      std::fill(acc, acc + w, 0.0);
      for (int64_t r = 0; r < nr; ++r) add_row_d(acc, xo + offset_of(red, r), w);
      float* yo = y + o * inner + j;
      for (int64_t i = 0; i < w; ++i) yo[i] = static_cast<float>(acc[i] / div);
    }
  });
}

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
    int64_t count = 1;
    Shape out;
    for (int d = 0; d < rank; ++d) {
      if (reduced[d]) {
        count *= x.shape()[d];
        if (keepdims_) out.push_back(1);
      } else {
        out.push_back(x.shape()[d]);
      }
    }
    if (count == 0) return ref_.run(ctx);  // the identity (0 or NaN) is the reference's business
    Tensor& y = ctx.output(0, DType::Float32, out);
    if (y.numel() == 0) return;
    // The axes collapsed: extents of 1 dropped, neighbours of the same kind merged.
    std::vector<Group> g;
    for (int d = 0; d < rank; ++d) {
      const int64_t n = x.shape()[d];
      if (n == 1) continue;
      if (!g.empty() && g.back().reduced == reduced[d]) {
        g.back().n *= n;
      } else {
        g.push_back({n, 0, reduced[d]});
      }
    }
    int64_t st = 1;
    for (size_t i = g.size(); i-- > 0;) g[i].stride = st, st *= g[i].n;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const double div = Mean ? static_cast<double>(count) : 1.0;  // as the reference: s / count
    if (g.empty() || g.back().reduced) {
      reduce_rows(g, xp, yp, y.numel(), div, ctx.threads());
    } else {
      reduce_columns(g, xp, yp, div, ctx.threads());
    }
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
