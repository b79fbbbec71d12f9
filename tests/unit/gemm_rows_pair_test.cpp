// avx512_gemm.h's tile over two adjacent 32-column panels (gemm_rows_pair: up to 6 rows x 64
// columns, the second panel `hi` floats after the first) against plain sums, for every row
// count and for a second panel full and part full, with and without a residual Z, an
// activation and lines fetched ahead. Outputs past the n live columns keep their sentinel.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "gemm_tile_check.h"
#include "providers/cpu/fast/avx512_gemm.h"

namespace polyinfer {
namespace {

#ifdef PI_X86_AVX512_GEMM
void check(int R, int n, int64_t K, bool with_z, const FusedActivation* act, bool ahead) {
  SCOPED_TRACE(::testing::Message()
               << "rows " << R << ", n " << n << ", K " << K << (with_z ? ", Z" : "")
               << (act ? ", HardSwish" : "") << (ahead ? ", fetching ahead" : ""));
  constexpr int64_t kLdc = 71, kP = fast::avx512::kPanel;
  // What is fetched ahead has no effect on the sums; the lines lie in a buffer of their own.
  const std::vector<float> next(2 * K * kP);
  const auto tile = [&](const float* a, int64_t lda, const float* b, int64_t k, float* c,
                        int64_t ldc, int64_t hi, const float* bias, const float* z,
                        const FusedActivation* f, int cols) {
    fast::avx512::gemm_rows_pair_for(act)[R](a, lda, b, k, c, ldc, hi, bias, z, f, cols,
                                             ahead ? next.data() : nullptr, ahead ? 2 * k : 0);
  };
  test::check_gemm_tile(
      tile, R, n, 2 * kP, K, K + 3, kLdc, K * kP, 6 * kLdc + 64, with_z, act,
      [](int64_t r, int j) { return r * kLdc + j; },
      [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); }, kP);
}
#endif

TEST(GemmRowsPair, MatchesPlainSumsOverBothPanels) {
#ifdef PI_X86_AVX512_GEMM
  if (!fast::avx512::supported()) GTEST_SKIP() << "the zmm tile needs AVX-512";
  FusedActivation hard_swish;
  hard_swish.kind = ActKind::HardSwish;
  for (int R = 1; R <= fast::avx512::kPairRows; ++R)
    for (bool with_z : {false, true})
      for (const FusedActivation* act : {&hard_swish, static_cast<FusedActivation*>(nullptr)})
        for (int n : {64, 57, 48, 33})
          for (int64_t K : {1, 19})
            for (bool ahead : {false, true}) check(R, n, K, with_z, act, ahead);
#else
  GTEST_SKIP() << "the zmm tile is x86-64 code";
#endif
}

}  // namespace
}  // namespace polyinfer
