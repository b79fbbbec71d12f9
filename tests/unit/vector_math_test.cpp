// The vector math of the hand-written kernels — avx2_util.h's exp8 / gelu8 and avx512_math.h's
// exp16 / gelu16 / divide / reductions — against the C library and exact arithmetic: GEMM
// epilogues, the attention kernel's softmax and the fast activations stand on them. Each width
// meets the same checks (the accuracy of fast_util.h's scalar forms, and their edges).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/avx512_math.h"

namespace polyinfer {
namespace {

#ifdef PI_X86_AVX2

// y[0, n) = f(x[0, n)), n a multiple of the width (whole vectors only).
using ArrayFn = std::function<void(const float* x, float* y, size_t n)>;

// fast_exp's accuracy (fast_util.h) over the normal range, and the edges every form keeps: 0
// below the subnormals (-inf included, which a masked softmax relies on), +inf above 88.72,
// NaN kept, exp(0) = 1.
void expect_exp(const ArrayFn& f) {
  std::vector<float> x;
  for (int i = 0; i < 1760; ++i) x.push_back(-87.5f + 0.1f * static_cast<float>(i));
  const float inf = std::numeric_limits<float>::infinity();
  for (float e : {-inf, -200.f, -104.f, 89.f, 1000.f, inf, std::nanf(""), 0.f}) x.push_back(e);
  x.resize(1776);  // whole vectors of 16 (the padding: zeros)
  std::vector<float> y(x.size());
  f(x.data(), y.data(), x.size());
  for (size_t i = 0; i < 1760; ++i)
    EXPECT_NEAR(y[i], std::exp(x[i]), 4e-7f * std::exp(x[i])) << "x = " << x[i];
  const size_t e = 1760;
  EXPECT_EQ(y[e], 0.f);
  EXPECT_EQ(y[e + 1], 0.f);
  EXPECT_EQ(y[e + 2], 0.f);
  EXPECT_EQ(y[e + 3], inf);
  EXPECT_EQ(y[e + 4], inf);
  EXPECT_EQ(y[e + 5], inf);
  EXPECT_TRUE(std::isnan(y[e + 6]));
  EXPECT_EQ(y[e + 7], 1.f);
}

// The epilogues' GELU against the reference kernel's formula (float, the C library's erf),
// and below -3, where that formula's 1 + erf cancels (and the vector erf's absolute error alone
// would be up to 10% of the value at -5), against 0.5 x erfc(-x / sqrt 2) in double: those
// lanes take the tail formula (fast_gelu_erf_tail), a few float ulps from it.
void expect_gelu(const ArrayFn& f) {
  std::vector<float> x, y(1600);
  for (int i = 0; i < 1600; ++i) x.push_back(-8.f + 0.01f * static_cast<float>(i));
  f(x.data(), y.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = 0.5f * x[i] * (1.f + std::erf(x[i] * 0.70710678118654752f));
    if (x[i] < -3.f) {
      const double exact = 0.5 * x[i] * std::erfc(-static_cast<double>(x[i]) / std::sqrt(2.0));
      EXPECT_NEAR(y[i], exact, 5e-7 * std::fabs(exact)) << "x = " << x[i];
    } else {  // erf's absolute error (< 3e-7, fast_util.h) times x / 2, and rounding
      EXPECT_NEAR(y[i], want, 1e-6f * std::fabs(want) + 1.5e-7f * std::fabs(x[i]))
          << "x = " << x[i];
    }
  }
}

template <__m256 (*F)(__m256)> PI_AVX2 void apply8(const float* x, float* y, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, F(_mm256_loadu_ps(x + i)));
}

TEST(Avx2Math, ExpMatchesTheCLibrary) {
  if (!fast::avx2::supported()) GTEST_SKIP() << "needs AVX2 and FMA";
  expect_exp(apply8<fast::avx2::exp8>);
}

TEST(Avx2Math, GeluMatchesTheReferenceFormula) {
  if (!fast::avx2::supported()) GTEST_SKIP() << "needs AVX2 and FMA";
  expect_gelu(apply8<fast::avx2::gelu8>);
}

#endif  // PI_X86_AVX2

#ifdef PI_X86_AVX512

namespace avx512 = fast::avx512;

PI_AVX512 __m512 gelu16_all(__m512 x) { return avx512::gelu16(x); }

template <__m512 (*F)(__m512)> PI_AVX512 void apply16(const float* x, float* y, size_t n) {
  for (size_t i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, F(_mm512_loadu_ps(x + i)));
}

PI_AVX512 void divide16(const float* a, const float* b, float* y, size_t n) {
  for (size_t i = 0; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, avx512::divide(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
}

PI_AVX512 float reduce16(const float* x, bool sum) {
  const __m512 v = _mm512_loadu_ps(x);
  return sum ? avx512::hsum16(v) : avx512::hmax16(v);
}

class Avx512Math : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!avx512::supported()) GTEST_SKIP() << "this CPU has no AVX-512";
  }
};

TEST_F(Avx512Math, ExpMatchesTheCLibrary) { expect_exp(apply16<avx512::exp16>); }

TEST_F(Avx512Math, GeluMatchesTheReferenceFormula) { expect_gelu(apply16<gelu16_all>); }

// The reciprocal estimate and its Newton step: within 2^-22 of the quotient, over divisors of
// both signs and many binades.
TEST_F(Avx512Math, DivideIsCloseToTheQuotient) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mant(1.f, 2.f);
  std::uniform_int_distribution<int> expo(-60, 60);
  std::vector<float> a(4096), b(4096), y(4096);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = mant(rng) * (i % 3 == 0 ? -1.f : 1.f);
    b[i] = std::ldexp(mant(rng), expo(rng)) * (i % 2 == 0 ? -1.f : 1.f);
  }
  divide16(a.data(), b.data(), y.data(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double q = static_cast<double>(a[i]) / b[i];
    EXPECT_NEAR(y[i], q, std::ldexp(std::fabs(q), -22)) << a[i] << " / " << b[i];
  }
}

TEST_F(Avx512Math, HorizontalSumAndMaximum) {
  std::vector<float> x(16);
  for (size_t i = 0; i < 16; ++i) x[i] = static_cast<float>((i * 7) % 16) - 5.f;
  EXPECT_EQ(reduce16(x.data(), true), 120.f - 80.f);
  EXPECT_EQ(reduce16(x.data(), false), 10.f);
  x[11] = 1e6f;  // the maximum in a lane of the upper half
  EXPECT_EQ(reduce16(x.data(), false), 1e6f);
  std::fill(x.begin(), x.end(), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(reduce16(x.data(), false), -std::numeric_limits<float>::infinity());
}

#endif  // PI_X86_AVX512

}  // namespace
}  // namespace polyinfer
