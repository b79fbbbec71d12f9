// The fast Pow kernel (src/providers/cpu/fast/pow.cpp) against the reference one: each
// specialised exponent with the special values (zeros, infinities, NaN, negatives), other
// exponent dtypes, integers past 3, general exponents, a broadcast exponent, and what it leaves
// to the reference kernel.
#include <gtest/gtest.h>

#include <cmath>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

// Values that meet every special case of pow, then ordinary ones (a tail past the vectors).
Tensor bases() {
  std::vector<float> v = {0.0f,   -0.0f, INFINITY, -INFINITY, NAN,   1.0f,   -1.0f,
                          1e-30f, 1e30f, -1e-30f,  -1e30f,    3e38f, 1e-45f, -2.5f};
  for (int i = 0; i < 1003; ++i)
    v.push_back(std::ldexp(1.0f + 0.37f * (i % 7), i % 41 - 20) * (i % 3 == 0 ? -1.0f : 1.0f));
  return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
}

TEST(FastPow, SpecialisedExponentsBitForBit) {
  // 2, 1, 0, -1 and +-0.5 are the reference's double pow rounded once, exactly.
  for (float e : {2.0f, 1.0f, 0.0f, -1.0f, 0.5f, -0.5f}) {
    SCOPED_TRACE(e);
    const auto r = OracleOp("Pow", 15).input(bases()).input(Tensor::scalar<float>(e)).check(0, 0);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  }
}

TEST(FastPow, IntegerExponentsWithinOneRounding) {
  // Products in double, rounded once: at most one float rounding away from pow's.
  for (float e : {3.0f, 4.0f, -2.0f, -3.0f, 7.0f, 64.0f, -64.0f}) {
    SCOPED_TRACE(e);
    const auto r =
        OracleOp("Pow", 15).input(bases()).input(Tensor::scalar<float>(e)).check(0, 1.2e-7);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  }
}

TEST(FastPow, GeneralAndOtherExponentTypes) {
  for (float e : {1.5f, -2.25f, 65.0f, 0.3f, INFINITY, -INFINITY, NAN}) {
    SCOPED_TRACE(e);
    const auto r = OracleOp("Pow", 15).input(bases()).input(Tensor::scalar<float>(e)).check(0, 0);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  }
  // An int64 exponent (exporters write Pow(x, 2) that way), a [1]-shaped one, opset 7.
  auto r = OracleOp("Pow", 15).input(bases()).input(Tensor::scalar<int64_t>(2)).check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  r = OracleOp("Pow", 7)
          .random({4, 300})
          .input(Tensor::from_vector<float>({1}, {3.0f}))
          .threads(3)
          .check(0, 1.2e-7);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  // Above the threading grain.
  r = OracleOp("Pow", 15).random({70000}).input(Tensor::scalar<float>(2.0f)).threads(2).check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
}

TEST(FastPow, BroadcastExponentTensor) {
  for (const auto& [a, b] : std::vector<std::pair<Shape, Shape>>{
           {{3, 17}, {17}}, {{2, 5, 1}, {1, 4}}, {{0, 3}, {3}}, {{7}, {7}}, {{1}, {5}}}) {
    SCOPED_TRACE(shape_str(a) + " ^ " + shape_str(b));
    const auto r = OracleOp("Pow", 15).random(a, 0.1f, 4.0f).random(b, -3.0f, 3.0f).check(0, 0);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  }
}

TEST(FastPow, OtherBasesAndExponentsAreTheReferenceKernels) {
  const Tensor i = Tensor::from_vector<int32_t>({3}, {1, -2, 3});
  EXPECT_EQ(OracleOp("Pow", 15).input(i).input(Tensor::scalar<int32_t>(2)).check(0, 0).impl,
            "reference");
  // A float32 base with an int64 exponent tensor of several elements: declined at run time.
  const auto r = OracleOp("Pow", 15)
                     .random({2, 3})
                     .input(Tensor::from_vector<int64_t>({3}, {1, 2, 3}))
                     .check(0, 0);
  EXPECT_EQ(r.impl, "reference (fast path declined)");
}

}  // namespace
}  // namespace polyinfer
