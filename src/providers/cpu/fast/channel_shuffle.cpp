// Fast ai.polyinfer ConcatChannelShuffle (definition in reference/channel_shuffle.cpp) for
// ShuffleNet's two groups: each output row interleaves a run of X1's channels with the same run
// of X2's, 8 + 8 floats into 16 per step on AVX2 (unpack, then a lane permute), one pass that
// reads each input once and writes each output once. The unfused Concat, Transpose and two
// Slices moved every value three times (docs/kernels.md has the share of ShuffleNetV2's run).
// Other group counts, element sizes and CPUs without AVX2 go to the reference kernel.
#include <algorithm>
#include <cstring>
#include <vector>

#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

#ifdef PI_X86_AVX2
// y[2i] = a[i], y[2i + 1] = b[i] for i < n (any 4-byte elements: only moved).
PI_AVX2 void interleave(const float* a, const float* b, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 va = _mm256_loadu_ps(a + i), vb = _mm256_loadu_ps(b + i);
    const __m256 lo = _mm256_unpacklo_ps(va, vb);  // a0 b0 a1 b1 | a4 b4 a5 b5
    const __m256 hi = _mm256_unpackhi_ps(va, vb);  // a2 b2 a3 b3 | a6 b6 a7 b7
    _mm256_storeu_ps(y + 2 * i, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(y + 2 * i + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
  }
  for (; i < n; ++i) {
    y[2 * i] = a[i];
    y[2 * i + 1] = b[i];
  }
}
#endif

class FastConcatChannelShuffle final : public Kernel {
 public:
  explicit FastConcatChannelShuffle(const KernelInfo& info) : ref_(info) {}
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
#ifdef PI_X86_AVX2
    const size_t S = ctx.num_outputs();
    if (ctx.num_inputs() != 2 || !avx2::supported()) return ref_.run(ctx);
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (dtype_size(a.dtype()) != 4 || a.dtype() != b.dtype() || a.shape() != b.shape() ||
        a.rank() < 1)
      return ref_.run(ctx);
    const int64_t cg = a.dim(-1), part = 2 * cg / static_cast<int64_t>(S);
    // Each output takes whole pairs (a[k], b[k]); ShuffleNet's halves always do.
    if (part * static_cast<int64_t>(S) != 2 * cg || part % 2 != 0) return ref_.run(ctx);
    const int64_t rows = a.numel() / std::max<int64_t>(cg, 1), pairs = part / 2;
    Shape ys = a.shape();
    ys.back() = part;
    std::vector<float*> ys_data(S);
    for (size_t s = 0; s < S; ++s)
      ys_data[s] = static_cast<float*>(ctx.output(s, a.dtype(), ys).raw_data());
    const float* ap = static_cast<const float*>(a.raw_data());
    const float* bp = static_cast<const float*>(b.raw_data());
    parallel_for(rows, ctx.threads(), std::max<int64_t>(1, kGrain / std::max<int64_t>(1, 2 * cg)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (size_t s = 0; s < S; ++s) {
                       const int64_t k0 = static_cast<int64_t>(s) * pairs;
                       interleave(ap + r * cg + k0, bp + r * cg + k0, pairs, ys_data[s] + r * part);
                     }
                 });
#else
    ref_.run(ctx);
#endif
  }

 private:
  RefFallback ref_;
};

}  // namespace

PI_CPU_FAST_KERNEL("ai.polyinfer", ConcatChannelShuffle, 1, 1, FastConcatChannelShuffle);

}  // namespace polyinfer::fast
