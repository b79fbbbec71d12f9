// The fast element-wise kernels (src/providers/cpu/fast/unary.cpp) against the reference ones,
// and the accuracy of their vector math (fast_util.h) against the C library in double.
#include <gtest/gtest.h>

#include <cmath>

#include "oracle.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer {
namespace {

using test::OracleOp;

// Sizes around vector widths and the threading grain.
const std::vector<Shape> kShapes = {{1}, {7}, {17}, {2, 33}, {1000 + 3}, {5, 7, 1000 + 3}};

struct UnaryCase {
  const char* op;
  int opset;
  float lo, hi;       // input range
  double atol, rtol;  // tolerance against the reference
};

const std::vector<UnaryCase> kUnary = {
    {"Relu", 14, -3, 3, 0, 0},
    {"Sigmoid", 13, -30, 30, 1e-7, 1e-6},
    {"Tanh", 13, -12, 12, 1e-7, 1e-6},
    {"Erf", 13, -5, 5, 1e-7, 1e-6},
    {"Exp", 13, -100, 88, 1e-37, 1e-6},
    {"Sqrt", 13, 0, 1000, 0, 0},
    {"HardSwish", 14, -8, 8, 1e-7, 1e-6},
    {"Mish", 18, -30, 30, 1e-7, 1e-6},
};

TEST(FastUnary, MatchesReference) {
  for (const UnaryCase& c : kUnary)
    for (const Shape& s : kShapes) {
      SCOPED_TRACE(std::string(c.op) + " " + shape_str(s));
      const auto r = OracleOp(c.op, c.opset).random(s, c.lo, c.hi).check(c.atol, c.rtol);
      EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
    }
}

TEST(FastUnary, AttributesAreRead) {
  const Shape s = {3, 1000 + 3};
  EXPECT_EQ(
      OracleOp("LeakyRelu", 16).attr("alpha", 0.3f).random(s).check(0, 0).impl.rfind("fast:", 0),
      0u);
  EXPECT_EQ(OracleOp("HardSigmoid", 6)
                .attr("alpha", 0.25f)
                .attr("beta", 0.4f)
                .random(s)
                .check(1e-7, 1e-6)
                .impl.rfind("fast:", 0),
            0u);
  EXPECT_EQ(OracleOp("Clip", 6)
                .attr("min", -0.5f)
                .attr("max", 1.5f)
                .random(s)
                .check(0, 0)
                .impl.rfind("fast:", 0),
            0u);
}

TEST(FastUnary, ClipBoundsAsInputs) {
  const Shape s = {2, 517};
  const Tensor lo = Tensor::scalar<float>(-1.0f), hi = Tensor::scalar<float>(0.5f);
  EXPECT_EQ(OracleOp("Clip", 13).random(s).input(lo).input(hi).check(0, 0).impl.rfind("fast:", 0),
            0u);
  EXPECT_EQ(
      OracleOp("Clip", 13).random(s).input(Tensor()).input(hi).check(0, 0).impl.rfind("fast:", 0),
      0u);
  EXPECT_EQ(OracleOp("Clip", 13).random(s).input(lo).check(0, 0).impl.rfind("fast:", 0), 0u);
  EXPECT_EQ(OracleOp("Clip", 13).random(s).check(0, 0).impl.rfind("fast:", 0), 0u);
  // lo > hi: numpy.clip gives hi everywhere.
  OracleOp("Clip", 13).random(s).input(hi).input(lo).check(0, 0);
}

TEST(FastUnary, GeluBothForms) {
  for (const char* mode : {"none", "tanh"}) {
    SCOPED_TRACE(mode);
    // Absolute tolerance: the reference's own 1 + erf / 1 + tanh cancels for x << 0.
    const auto r = OracleOp("Gelu", 20)
                       .attr("approximate", std::string(mode))
                       .random({7, 1000 + 3}, -8, 8)
                       .check(1e-6, 1e-5);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
    const auto p = OracleOp("Gelu", 1, "ai.polyinfer")
                       .reference_as("Gelu", 20)
                       .attr("approximate", std::string(mode))
                       .random({33}, -8, 8)
                       .check(1e-6, 1e-5);
    EXPECT_EQ(p.impl.rfind("fast:", 0), 0u);
  }
}

// The later-opset operators the optimizer emits below their opsets (ai.polyinfer HardSwish for
// HardSwish-14, Mish for Mish-18) run the same fast loops.
TEST(FastUnary, PolyinferHardSwishAndMish) {
  for (const auto& [op, opset] : {std::pair{"HardSwish", 14}, std::pair{"Mish", 18}}) {
    SCOPED_TRACE(op);
    const auto r = OracleOp(op, 1, "ai.polyinfer")
                       .reference_as(op, opset)
                       .random({3, 1000 + 3}, -10, 10)
                       .check(1e-7, 1e-6);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
  }
}

// Gelu's tail, x < -3, where the fast kernel takes exp(-x^2 / 2) G(2 / x^2) in vector code.
// Against the reference, whose float 1 + erf(x / sqrt 2) cancels there (0 from x = -5.5 on):
// its own error is up to |x| / 2 · 2 · 2^-24 < 1e-6 absolute for |x| <= 16, the tolerance. The
// relative accuracy is FastMath.GeluTailAndMishAgainstLibm's.
TEST(FastUnary, GeluTailAndLargeMagnitudes) {
  const auto tail = OracleOp("Gelu", 20).random({7, 1000 + 3}, -16, -2.5f).check(1e-6, 0);
  EXPECT_EQ(tail.impl.rfind("fast:", 0), 0u);
  // Mostly ordinary values with a few in the tail: blocks with and without tail lanes.
  OracleOp("Gelu", 20).random({5, 1000 + 3}, -3.5f, 3).check(1e-6, 1e-5);
  const Tensor x =
      Tensor::from_vector<float>({12}, {-3.0f, -3.0000002f, -2.9999998f, -20.0f, -20.5f, -1e30f,
                                        1e30f, -1e-30f, 50.0f, -INFINITY, INFINITY, NAN});
  OracleOp("Gelu", 20).input(x).check(1e-6, 1e-6);
  OracleOp("Mish", 18).input(x).check(1e-37, 1e-6);
}

TEST(FastUnary, SpecialValuesMatchTheReference) {
  const float inf = INFINITY;
  const Tensor x = Tensor::from_vector<float>(
      {10}, {0.0f, -0.0f, inf, -inf, NAN, 1e-30f, -1e-30f, 200.0f, -200.0f, -2.5f});
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Sqrt", "HardSwish"}) {
    SCOPED_TRACE(op);
    OracleOp(op, 13 + (std::string(op) == "HardSwish")).input(x).check(1e-37, 1e-6);
  }
}

TEST(FastUnary, DoubleInputsRunTheReferenceKernel) {
  const Tensor x = Tensor::from_vector<double>({3}, {-1.0, 0.5, 2.0});
  EXPECT_EQ(OracleOp("Sigmoid", 13).input(x).check().impl, "reference");
}

// fast_gelu_erf_tail (x <= -3) and fast_mish against double-precision libm, relative error
// where the result is a normal float.
TEST(FastMath, GeluTailAndMishAgainstLibm) {
  const auto rel = [](double a, double r) { return std::fabs(a - r) / std::fabs(r); };
  double e_gelu = 0, e_mish = 0;
  for (double xd = -20; xd <= -3; xd += 0.0001731) {
    const float x = static_cast<float>(xd);
    const double want = 0.5 * x * std::erfc(-static_cast<double>(x) / std::sqrt(2.0));
    if (std::fabs(want) > 1.2e-38)
      e_gelu = std::max(e_gelu, rel(fast::fast_gelu_erf_tail(x), want));
  }
  for (double xd = -85; xd <= 40; xd += 0.000731) {
    const float x = static_cast<float>(xd);
    const double v = x, want = v * std::tanh(std::log1p(std::exp(v)));
    if (std::fabs(want) > 1.2e-38) e_mish = std::max(e_mish, rel(fast::fast_mish(x), want));
  }
  EXPECT_LT(e_gelu, 5e-7);
  EXPECT_LT(e_mish, 1e-6);
}

// The vector math against double-precision libm over a dense sweep, relative error in the range
// where the result is a normal float.
TEST(FastMath, AccuracyAgainstLibm) {
  double e_exp = 0, e_tanh = 0, e_erf = 0, e_sig = 0;
  const auto rel = [](double a, double r) { return std::fabs(a - r) / std::fabs(r); };
  for (double xd = -104; xd <= 89; xd += 0.000731) {
    const float x = static_cast<float>(xd);
    const double ex = std::exp(static_cast<double>(x));
    if (ex > 1.2e-38 && ex < 3.4e38) e_exp = std::max(e_exp, rel(fast::fast_exp(x), ex));
    const double th = std::tanh(static_cast<double>(x));
    if (th != 0) e_tanh = std::max(e_tanh, rel(fast::fast_tanh(x), th));
    const double ef = std::erf(static_cast<double>(x));
    if (ef != 0) e_erf = std::max(e_erf, rel(fast::fast_erf(x), ef));
    const double sg = 1 / (1 + std::exp(-static_cast<double>(x)));
    if (sg > 1.2e-38) e_sig = std::max(e_sig, rel(fast::fast_sigmoid(x), sg));
  }
  EXPECT_LT(e_exp, 2e-7);
  EXPECT_LT(e_tanh, 3e-7);
  EXPECT_LT(e_erf, 6e-7);
  EXPECT_LT(e_sig, 3e-7);
  // Tiny arguments keep their relative accuracy (no 1 - 1 cancellation).
  for (float x : {1e-6f, -3e-5f, 1e-3f, 0.3f}) {
    EXPECT_LT(rel(fast::fast_tanh(x), std::tanh(static_cast<double>(x))), 3e-7) << x;
    EXPECT_LT(rel(fast::fast_erf(x), std::erf(static_cast<double>(x))), 3e-7) << x;
  }
  EXPECT_EQ(fast::fast_exp(100.0f), INFINITY);
  EXPECT_EQ(fast::fast_exp(-200.0f), 0.0f);
  EXPECT_TRUE(std::isnan(fast::fast_exp(NAN)));
  EXPECT_TRUE(std::isnan(fast::fast_tanh(NAN)));
  // Saturation is exact, as in libm: a tanh of 0.99999994 there turned a GELU's 1 + tanh for
  // large negative x into |x| * 3e-8 instead of 0 (GELU(-3e38) = -9e30).
  for (float x : {9.5f, 10.f, 20.f, 1e30f, INFINITY}) {
    EXPECT_EQ(fast::fast_tanh(x), 1.0f) << x;
    EXPECT_EQ(fast::fast_tanh(-x), -1.0f) << x;
  }
}

}  // namespace
}  // namespace polyinfer
