// One call of a GEMM register tile (fast::avx2::GemmRowsFn: avx512_gemm.h's gemm_rows16 and
// gemm_rows_narrow, ...; or a callable with its parameters) against plain sums, for the tiles'
// own tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "model_builder.h"
#include "providers/cpu/fast/avx2_util.h"

namespace polyinfer::test {

#ifdef PI_X86_AVX2

// Runs `tile` on R rows and n columns of random weights (64-byte aligned): one [K][W] panel,
// or W / panel adjacent [K][panel] ones (a tile over several panels, `hi` their stride),
// output rows ldc floats apart with the tile's `hi`, column j of row r at at(r, j); a random
// residual Z when with_z. Checks each output against bias + the sums (in double) + Z, through
// ref_act (the activation's reference, given a double), and that every other float of the
// output buffer (size floats) keeps its sentinel.
template <class Tile, class At, class RefAct>
void check_gemm_tile(Tile tile, int R, int n, int64_t W, int64_t K, int64_t lda, int64_t ldc,
                     int64_t hi, int64_t size, bool with_z, const FusedActivation* act, At at,
                     RefAct ref_act, int64_t panel = 0) {
  if (panel == 0) panel = W;
  const std::vector<float> a = random_values(R * lda, 1);
  const std::vector<float> bias = random_values(W, 3);
  const std::vector<float> z = random_values(size, 4);
  std::vector<float> b_buf(K * W + 16);  // 64-byte aligned inside
  float* b = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(b_buf.data()) + 63) & ~63ull);
  const std::vector<float> bv = random_values(K * W, 2);
  std::copy(bv.begin(), bv.end(), b);
  const float kSentinel = 12345.f;
  std::vector<float> c(size, kSentinel);
  tile(a.data(), lda, b, K, c.data(), ldc, hi, bias.data(), with_z ? z.data() : nullptr, act, n);
  std::vector<bool> written(size, false);
  for (int64_t r = 0; r < R; ++r)
    for (int j = 0; j < n; ++j) {
      double want = bias[j];
      for (int64_t k = 0; k < K; ++k)
        want += double(a[r * lda + k]) * b[j / panel * K * panel + k * panel + j % panel];
      const int64_t i = at(r, j);
      if (with_z) want += z[i];
      if (act) want = ref_act(want);
      ASSERT_NEAR(c[i], want, 1e-5 * (1 + std::fabs(want))) << "row " << r << ", column " << j;
      written[i] = true;
    }
  for (int64_t i = 0; i < size; ++i) {
    if (!written[i]) {
      ASSERT_EQ(c[i], kSentinel) << "wrote outside the tile at " << i;
    }
  }
}

#endif  // PI_X86_AVX2

}  // namespace polyinfer::test
