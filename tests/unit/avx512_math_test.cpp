// The AVX-512 vector math (providers/cpu/fast/avx512_math.h) against the C library and exact
// arithmetic: the zmm GEMM tile's epilogues and the attention kernel's softmax stand on it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "providers/cpu/fast/avx512_math.h"

namespace polyinfer {
namespace {

#ifdef PI_X86_AVX512

namespace avx512 = fast::avx512;

enum class Fn { Exp, Gelu, Divide };

// f over an array, 16 lanes at a time (AVX-512 code, called only where the CPU has it).
PI_AVX512 void apply(Fn f, const float* x, const float* b, float* y, size_t n) {
  for (size_t i = 0; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    __m512 r = v;
    if (f == Fn::Exp) r = avx512::exp16(v);
    if (f == Fn::Gelu) r = avx512::gelu16(v);
    if (f == Fn::Divide) r = avx512::divide(v, _mm512_loadu_ps(b + i));
    _mm512_storeu_ps(y + i, r);
  }
}

PI_AVX512 float reduce(const float* x, bool sum) {
  const __m512 v = _mm512_loadu_ps(x);
  return sum ? avx512::hsum16(v) : avx512::hmax16(v);
}

class Avx512Math : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!avx512::supported()) GTEST_SKIP() << "this CPU has no AVX-512";
  }
};

// fast_exp's accuracy (fast_util.h) and the edges exp8 has: 0 below the subnormals (-inf
// included, which a masked softmax relies on), +inf above 88.72, NaN kept.
TEST_F(Avx512Math, ExpMatchesTheCLibrary) {
  std::vector<float> x;
  for (int i = 0; i < 1760; ++i) x.push_back(-87.5f + 0.1f * static_cast<float>(i));
  const float inf = std::numeric_limits<float>::infinity();
  for (float e : {-inf, -200.f, -104.f, 89.f, 1000.f, inf, std::nanf(""), 0.f}) x.push_back(e);
  x.resize(1776);  // whole vectors
  std::vector<float> y(x.size());
  apply(Fn::Exp, x.data(), nullptr, y.data(), x.size());
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

// As avx2::gelu8's test: below -3 the lanes must equal the formula with the C library's erf
// (erf16's absolute error would be up to 10% of the value at -5).
TEST_F(Avx512Math, GeluMatchesTheReferenceFormula) {
  std::vector<float> x, y(1600);
  for (int i = 0; i < 1600; ++i) x.push_back(-8.f + 0.01f * static_cast<float>(i));
  apply(Fn::Gelu, x.data(), nullptr, y.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = 0.5f * x[i] * (1.f + std::erf(x[i] * 0.70710678118654752f));
    if (x[i] < -3.f) {
      EXPECT_EQ(y[i], want) << "x = " << x[i];
    } else {  // erf's absolute error (< 3e-7, fast_util.h) times x / 2, the reciprocal's
      EXPECT_NEAR(y[i], want, 1e-6f * std::fabs(want) + 1.5e-7f * std::fabs(x[i]))
          << "x = " << x[i];
    }
  }
}

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
  apply(Fn::Divide, a.data(), b.data(), y.data(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double q = static_cast<double>(a[i]) / b[i];
    EXPECT_NEAR(y[i], q, std::ldexp(std::fabs(q), -22)) << a[i] << " / " << b[i];
  }
}

TEST_F(Avx512Math, HorizontalSumAndMaximum) {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>((i * 7) % 16) - 5.f;
  EXPECT_EQ(reduce(x.data(), true), 120.f - 80.f);
  EXPECT_EQ(reduce(x.data(), false), 10.f);
  x[11] = 1e6f;  // the maximum in every position of the fold
  EXPECT_EQ(reduce(x.data(), false), 1e6f);
  std::fill(x.begin(), x.end(), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(reduce(x.data(), false), -std::numeric_limits<float>::infinity());
}

#endif  // PI_X86_AVX512

}  // namespace
}  // namespace polyinfer
