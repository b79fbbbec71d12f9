// avx512_gemm.h's tile for a part-full last 32-column panel (gemm_rows_narrow: 8, 16 or 24 live
// columns as a ymm, a zmm, or both per row) against plain sums, for every row count and live
// column count, with and without a residual Z and an activation (one that the ymm part runs
// through the zmm activation's low half). Outputs it must not write keep their sentinel: the
// panel's zero columns past n are never stored.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "model_builder.h"
#include "providers/cpu/fast/avx512_gemm.h"

namespace polyinfer {
namespace {

#ifdef PI_X86_AVX512_GEMM
// One call of the R-row tile on n live columns of a [K][32] panel, against plain sums.
void check(int R, int n, bool with_z, const cpu::FusedActivation* act) {
  SCOPED_TRACE(::testing::Message() << "rows " << R << ", n " << n << (with_z ? ", Z" : "")
                                    << (act ? ", HardSwish" : ""));
  constexpr int64_t kW = fast::avx512::kPanel;
  const int64_t K = 21, lda = 25, ldc = 37, size = 8 * ldc + 32;
  const std::vector<float> a = test::random_values(8 * lda, 1);
  const std::vector<float> bias = test::random_values(kW, 3);
  const std::vector<float> z = test::random_values(size, 4);
  std::vector<float> b_buf(K * kW + 16);  // 64-byte aligned inside
  float* b = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(b_buf.data()) + 63) & ~63ull);
  const std::vector<float> bv = test::random_values(K * kW, 2);
  std::copy(bv.begin(), bv.end(), b);
  const float kSentinel = 12345.f;
  std::vector<float> c(size, kSentinel);
  fast::avx512::gemm_rows_for(act, n)[R](a.data(), lda, b, K, c.data(), ldc, 8, bias.data(),
                                         with_z ? z.data() : nullptr, act, n);
  std::vector<bool> written(size, false);
  for (int64_t r = 0; r < R; ++r)
    for (int j = 0; j < n; ++j) {
      double want = bias[j];
      for (int64_t k = 0; k < K; ++k) want += double(a[r * lda + k]) * b[k * kW + j];
      const int64_t i = r * ldc + j;
      if (with_z) want += z[i];
      if (act) want = want * std::clamp(want / 6 + 0.5, 0.0, 1.0);
      ASSERT_NEAR(c[i], want, 1e-5 * (1 + std::fabs(want))) << "row " << r << ", column " << j;
      written[i] = true;
    }
  for (int64_t i = 0; i < size; ++i) {
    if (!written[i]) {
      ASSERT_EQ(c[i], kSentinel) << "wrote outside the tile at " << i;
    }
  }
}
#endif

TEST(GemmRowsNarrow, MatchesPlainSumsForEachLiveWidth) {
#ifdef PI_X86_AVX512_GEMM
  if (!fast::avx512::supported()) GTEST_SKIP() << "the zmm tile needs AVX-512";
  cpu::FusedActivation hard_swish;
  hard_swish.kind = cpu::ActKind::HardSwish;
  for (int R = 1; R <= fast::avx512::kTileRows; ++R)
    for (bool with_z : {false, true})
      for (const cpu::FusedActivation* act :
           {&hard_swish, static_cast<cpu::FusedActivation*>(nullptr)})
        for (int n : {24, 21, 17, 16, 9, 8, 5, 1}) check(R, n, with_z, act);
#else
  GTEST_SKIP() << "the zmm tile is x86-64 code";
#endif
}

}  // namespace
}  // namespace polyinfer
