// avx512_gemm.h's tile for a part-full last 32-column panel (gemm_rows_narrow: 8, 16 or 24 live
// columns as a ymm, a zmm, or both per row) against plain sums, for every row count and live
// column count, with and without a residual Z and an activation (one that the ymm part runs
// through the zmm activation's low half). Outputs it must not write keep their sentinel: the
// panel's zero columns past n are never stored.
#include <gtest/gtest.h>

#include <algorithm>
#include "gemm_tile_check.h"
#include "providers/cpu/fast/avx512_gemm.h"

namespace polyinfer {
namespace {

#ifdef PI_X86_AVX512_GEMM
// One call of the R-row tile on n live columns of a [K][32] panel, against plain sums.
void check(int R, int n, bool with_z, const FusedActivation* act) {
  SCOPED_TRACE(::testing::Message() << "rows " << R << ", n " << n << (with_z ? ", Z" : "")
                                    << (act ? ", HardSwish" : ""));
  constexpr int64_t kLdc = 37;
  test::check_gemm_tile(
      fast::avx512::gemm_rows_for(act, n)[R], R, n, fast::avx512::kPanel, 21, 25, kLdc, 8,
      8 * kLdc + 32, with_z, act, [](int64_t r, int j) { return r * kLdc + j; },
      [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); });
}
#endif

TEST(GemmRowsNarrow, MatchesPlainSumsForEachLiveWidth) {
#ifdef PI_X86_AVX512_GEMM
  if (!fast::avx512::supported()) GTEST_SKIP() << "the zmm tile needs AVX-512";
  FusedActivation hard_swish;
  hard_swish.kind = ActKind::HardSwish;
  for (int R = 1; R <= fast::avx512::kTileRows; ++R)
    for (bool with_z : {false, true})
      for (const FusedActivation* act : {&hard_swish, static_cast<FusedActivation*>(nullptr)})
        for (int n : {24, 21, 17, 16, 9, 8, 5, 1}) check(R, n, with_z, act);
#else
  GTEST_SKIP() << "the zmm tile is x86-64 code";
#endif
}

}  // namespace
}  // namespace polyinfer
