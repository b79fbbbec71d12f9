// avx512_gemm.h's 16-column zmm tile (gemm_rows16) against plain sums, in both output layouts:
// contiguous columns (the narrow 1x1 convolutions, Winograd's GEMMs; a part-filled panel under
// a mask) and planes of 8 columns (the fused expansion's ring rows), for every row count, with
// and without a residual Z and an activation. Outputs it must not write keep their sentinel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "model_builder.h"
#include "providers/cpu/fast/avx512_gemm.h"

namespace polyinfer {
namespace {

#ifdef PI_X86_AVX512_GEMM
// Where column j of row r lands: contiguous (hi = 8) or in planes of 8 columns hi floats apart.
int64_t at(int64_t r, int j, int64_t ldc, int64_t hi) {
  return hi == 8 ? r * ldc + j : r * ldc + j / 8 * hi + j % 8;
}

// One call of the R-row tile on n columns, output rows ldc floats apart, against plain sums.
void check(int R, int n, int64_t ldc, int64_t hi, bool with_z, const cpu::FusedActivation* act) {
  SCOPED_TRACE(::testing::Message() << "hi " << hi << ", rows " << R << ", n " << n
                                    << (with_z ? ", Z" : "") << (act ? ", Relu" : ""));
  const int64_t K = 19, lda = 23, size = 8 * ldc + 2 * hi + 16;
  const std::vector<float> a = test::random_values(8 * lda, 1);
  const std::vector<float> bias = test::random_values(16, 3);
  const std::vector<float> z = test::random_values(size, 4);
  std::vector<float> b_buf(K * 16 + 16);  // 64-byte aligned inside
  float* b = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(b_buf.data()) + 63) & ~63ull);
  const std::vector<float> bv = test::random_values(K * 16, 2);
  std::copy(bv.begin(), bv.end(), b);
  const float kSentinel = 12345.f;
  std::vector<float> c(size, kSentinel);
  fast::avx512::gemm_rows16_for(act)[R](a.data(), lda, b, K, c.data(), ldc, hi, bias.data(),
                                        with_z ? z.data() : nullptr, act, n);
  std::vector<bool> written(size, false);
  for (int64_t r = 0; r < R; ++r)
    for (int j = 0; j < n; ++j) {
      double want = bias[j];
      for (int64_t k = 0; k < K; ++k) want += double(a[r * lda + k]) * b[k * 16 + j];
      const int64_t i = at(r, j, ldc, hi);
      if (with_z) want += z[i];
      if (act) want = std::max(want, 0.0);
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

TEST(GemmRows16, MatchesPlainSumsInBothLayouts) {
#ifdef PI_X86_AVX512_GEMM
  if (!fast::avx512::supported()) GTEST_SKIP() << "the zmm tile needs AVX-512";
  cpu::FusedActivation relu;
  relu.kind = cpu::ActKind::Relu;
  for (int R = 1; R <= fast::avx512::kTileRows; ++R)
    for (bool with_z : {false, true})
      for (const cpu::FusedActivation* act : {&relu, static_cast<cpu::FusedActivation*>(nullptr)}) {
        for (int n : {16, 13, 8, 1}) check(R, n, 21, 8, with_z, act);  // contiguous
        for (int n : {16, 8}) check(R, n, 8, 72, with_z, act);           // planes of 8
      }
#else
  GTEST_SKIP() << "the zmm tile is x86-64 code";
#endif
}

}  // namespace
}  // namespace polyinfer
