// avx512_gemm.h's 16-column zmm tile (gemm_rows16) against plain sums, in both output layouts:
// contiguous columns (the narrow 1x1 convolutions, Winograd's GEMMs; a part-filled panel under
// a mask) and planes of 8 columns (the fused expansion's ring rows), for every row count, with
// and without a residual Z and an activation. Outputs it must not write keep their sentinel.
#include <gtest/gtest.h>

#include <algorithm>

#include "gemm_tile_check.h"
#include "providers/cpu/fast/avx512_gemm.h"

namespace polyinfer {
namespace {

#ifdef PI_X86_AVX512_GEMM
// Where column j of row r lands: contiguous (hi = 8) or in planes of 8 columns hi floats apart.
int64_t at(int64_t r, int j, int64_t ldc, int64_t hi) {
  return hi == 8 ? r * ldc + j : r * ldc + j / 8 * hi + j % 8;
}

// One call of the R-row tile on n columns, output rows ldc floats apart, against plain sums.
void check(int R, int n, int64_t ldc, int64_t hi, bool with_z, const FusedActivation* act) {
  SCOPED_TRACE(::testing::Message() << "hi " << hi << ", rows " << R << ", n " << n
                                    << (with_z ? ", Z" : "") << (act ? ", Relu" : ""));
  test::check_gemm_tile(
      fast::avx512::gemm_rows16_for(act)[R], R, n, 16, 19, 23, ldc, hi, 8 * ldc + 2 * hi + 16,
      with_z, act, [ldc, hi](int64_t r, int j) { return at(r, j, ldc, hi); },
      [](double v) { return std::max(v, 0.0); });
}
#endif

TEST(GemmRows16, MatchesPlainSumsInBothLayouts) {
#ifdef PI_X86_AVX512_GEMM
  if (!fast::avx512::supported()) GTEST_SKIP() << "the zmm tile needs AVX-512";
  FusedActivation relu;
  relu.kind = ActKind::Relu;
  for (int R = 1; R <= fast::avx512::kTileRows; ++R)
    for (bool with_z : {false, true})
      for (const FusedActivation* act : {&relu, static_cast<FusedActivation*>(nullptr)}) {
        for (int n : {16, 13, 8, 1}) check(R, n, 21, 8, with_z, act);  // contiguous
        for (int n : {16, 8}) check(R, n, 8, 72, with_z, act);         // planes of 8
      }
#else
  GTEST_SKIP() << "the zmm tile is x86-64 code";
#endif
}

// The multi-panel forms (gemm_rows16_multi: 4 panels of up to 6 rows, 2 of up to 8, packed one
// after the other) in both output layouts, contiguous (Winograd's GEMMs; the last panel full,
// part full or not reached) and planes of 8 columns (the fused expansion's ring rows).
#ifdef PI_X86_AVX512_GEMM
template <int kP> void check_multi() {
  FusedActivation relu;
  relu.kind = ActKind::Relu;
  constexpr int64_t kLdc = 69, kK = 13, kW = 16 * kP, kHi = 72;
  for (int R = 1; R <= fast::avx512::multi_rows(kP); ++R)
    for (bool with_z : {false, true})
      for (const FusedActivation* act : {&relu, static_cast<FusedActivation*>(nullptr)})
        for (int64_t hi : {int64_t{8}, kHi})
          for (int n : {kW, kW - 8, kW - 14, kW - 23}) {
            if (hi != 8 && n % 8 != 0) continue;  // planes take whole 8-column groups
            SCOPED_TRACE(::testing::Message()
                         << kP << " panels, rows " << R << ", n " << n << ", hi " << hi
                         << (with_z ? ", Z" : "") << (act ? ", Relu" : ""));
            // Planes as the ring's: a row (pixel) 8 floats into each plane.
            const int64_t ldc = hi == 8 ? kLdc : 8;
            test::check_gemm_tile(
                fast::avx512::gemm_rows16_multi_for<kP>(act)[R], R, n, kW, kK, kK + 2, ldc, hi,
                8 * kLdc + 2 * kP * kHi + 16, with_z, act,
                [hi, ldc](int64_t r, int j) { return at(r, j, ldc, hi); },
                [](double v) { return std::max(v, 0.0); }, 16);
          }
}
#endif

TEST(GemmRows16Multi, MatchesPlainSumsOverTwoAndFourPanels) {
#ifdef PI_X86_AVX512_GEMM
  if (!fast::avx512::supported()) GTEST_SKIP() << "the zmm tile needs AVX-512";
  check_multi<2>();
  check_multi<4>();
#else
  GTEST_SKIP() << "the zmm tile is x86-64 code";
#endif
}

}  // namespace
}  // namespace polyinfer
