// GlobalMaxPool and GlobalAveragePool on float32 X [N, C, D1, ...] (NCHW, any spatial rank):
// each channel's pixels are contiguous, so every output is one vectorized reduction over a row
// of X, and threads take rows. Why not oneDNN's: on NCHW it has only simple_nchw, one scalar
// loop per channel (magika's [1, 128, 2048] max pool ran at 0.25 GFLOP/s, 11% of its run).
//
// The maximum is the reference kernel's: std::max from -infinity, so NaN never wins (a row of
// NaN gives -infinity); only the sign of an equal zero may differ, as lanes meet in another
// order. The average sums in 16 lanes (another order than the reference's one accumulator)
// and divides by the pixel count.
#include <algorithm>
#include <limits>

#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

constexpr int kLanes = 16;

PI_FAST_CLONES float row_max(const float* __restrict x, int64_t n) {
  float acc[kLanes];
  std::fill(acc, acc + kLanes, -std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) acc[l] = acc[l] < x[i + l] ? x[i + l] : acc[l];
  }
  float r = -std::numeric_limits<float>::infinity();
  for (int l = 0; l < kLanes; ++l) r = r < acc[l] ? acc[l] : r;
  for (; i < n; ++i) r = r < x[i] ? x[i] : r;
  return r;
}

PI_FAST_CLONES float row_sum(const float* __restrict x, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) acc[l] += x[i + l];
  }
  float r = 0;
  for (int l = 0; l < kLanes; ++l) r += acc[l];
  for (; i < n; ++i) r += x[i];
  return r;
}

PI_FAST_MATH_END

template <bool kMax> class FastGlobalPool final : public Kernel {
 public:
  // A known int8/uint8 maximum goes on to oneDNN (the table's next row).
  explicit FastGlobalPool(const KernelInfo& info) : ref_(info) { require_float_input(info); }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32 || x.rank() < 3) return ref_.run(ctx);
    Shape ys(static_cast<size_t>(x.rank()), 1);
    ys[0] = x.shape()[0];
    ys[1] = x.shape()[1];
    Tensor& y = ctx.output(0, DType::Float32, ys);
    const int64_t rows = ys[0] * ys[1];
    if (rows == 0) return;
    const int64_t n = x.numel() / rows;
    if (n == 0) return ref_.run(ctx);  // the reference's NaN mean / -inf max of no pixels
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const int threads = x.numel() < kSerial ? 1 : std::max(1, ctx.threads());
    parallel_for(rows, threads, 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        yp[r] = kMax ? row_max(xp + r * n, n) : row_sum(xp + r * n, n) / static_cast<float>(n);
    });
  }

 private:
  static constexpr int64_t kSerial = 1 << 16;  // elements below which one thread does it all
  RefFallback ref_;
};

}  // namespace

PI_CPU_CANDIDATE("", GlobalMaxPool, 1, 28, "global_pool", FastGlobalPool<true>);
PI_CPU_CANDIDATE("", GlobalAveragePool, 1, 28, "global_pool", FastGlobalPool<false>);

}  // namespace polyinfer::fast
