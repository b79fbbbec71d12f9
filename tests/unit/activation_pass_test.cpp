// fast::activate_in_place (src/providers/cpu/fast/activation_pass.cpp), the activation pass the
// oneDNN kernels run after their primitive, against the same formulas in double precision:
// lengths around the vector width and the threading grain, and the values where an exp-based
// formula goes wrong first (overflow, underflow, infinities, NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "providers/cpu/fast/activation_pass.h"

namespace polyinfer {
namespace {

double reference(ActKind k, double x) {
  const double s = 1.0 / (1.0 + std::exp(-x));
  return k == ActKind::Silu ? x * s : s;
}

std::vector<float> inputs(int64_t n) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.f,   -0.f,   1e-30f, -1e-30f, 1.f,    -1.f,   20.f,
                          -20.f, 87.f,   -87.f,  88.8f,   -88.8f, 103.5f, -103.5f,
                          150.f, -150.f, inf,    -inf,    3e38f,  -3e38f};
  for (int64_t i = static_cast<int64_t>(v.size()); i < n; ++i)
    v.push_back(static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 25.0));
  v.resize(static_cast<size_t>(n));
  return v;
}

TEST(ActivationPass, SiluAndSigmoidMatchTheFormulaInDouble) {
  for (ActKind k : {ActKind::Silu, ActKind::Sigmoid})
    for (int64_t n : {1, 15, 16, 17, 20, 1003, 70001})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(k == ActKind::Silu ? "Silu" : "Sigmoid") +
                     " n=" + std::to_string(n) + " threads=" + std::to_string(threads));
        std::vector<float> y = inputs(n);
        const std::vector<float> x = y;
        FusedActivation act;
        act.kind = k;
        fast::activate_in_place(y.data(), n, act, threads);
        for (int64_t i = 0; i < n; ++i) {
          const double want = reference(k, x[i]);
          if (std::isnan(want)) {  // Silu(-inf) = -inf * 0, as the reference kernel computes it
            EXPECT_TRUE(std::isnan(y[i])) << "x=" << x[i];
            continue;
          }
          if (std::isinf(want)) {
            EXPECT_EQ(y[i], want) << "x=" << x[i];
            continue;
          }
          // Near 1e-7 relative (fast_exp's polynomial and one rounding of the division), plus
          // an absolute floor: below x = -88.72 exp(-x) overflows float (in the reference
          // kernel's formula too), giving 0 where the true |x| e^x is below 3e-37.
          EXPECT_NEAR(y[i], want, 4e-7 * std::fabs(want) + 1e-36) << "x=" << x[i];
        }
      }
}

TEST(ActivationPass, NanStaysNan) {
  for (ActKind k : {ActKind::Silu, ActKind::Sigmoid}) {
    std::vector<float> y(33, std::numeric_limits<float>::quiet_NaN());
    FusedActivation act;
    act.kind = k;
    fast::activate_in_place(y.data(), static_cast<int64_t>(y.size()), act, 1);
    for (float v : y) EXPECT_TRUE(std::isnan(v));
  }
}

// Kinds without vector code take FusedActivation::apply, element by element: equal bits.
TEST(ActivationPass, OtherKindsAreTheReferenceFormula) {
  for (ActKind k :
       {ActKind::Relu, ActKind::Clip, ActKind::Tanh, ActKind::Gelu, ActKind::HardSwish}) {
    EXPECT_EQ(fast::activation_pass(k), nullptr);
    FusedActivation act;
    act.kind = k;
    act.alpha = -0.5f;
    act.beta = 2.f;
    std::vector<float> y = inputs(1003);
    const std::vector<float> x = y;
    fast::activate_in_place(y.data(), 1003, act, 2);
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = act.apply(x[i]);
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(y[i]));
      else
        EXPECT_EQ(y[i], want) << "x=" << x[i];
    }
  }
}

TEST(ActivationPass, NamesItsVectorCodeWhereTheCpuHasIt) {
#if defined(__x86_64__) && defined(__GNUC__)
  const bool avx512 = __builtin_cpu_supports("avx512f");
#else
  const bool avx512 = false;
#endif
  EXPECT_EQ(fast::activation_pass(ActKind::Silu) != nullptr, avx512);
  EXPECT_EQ(fast::activation_pass(ActKind::Sigmoid) != nullptr, avx512);
}

}  // namespace
}  // namespace polyinfer
