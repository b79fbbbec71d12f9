// The fast Max/Min kernels (src/providers/cpu/fast/variadic.cpp) against the reference ones:
// broadcast patterns, three and four inputs, int32/int64, NaN and signed zeros, threading, and
// what they leave to the reference kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "oracle.h"
#include "oracle_exact.h"

namespace polyinfer {
namespace {

using test::OracleOp;

struct Case {
  std::vector<Shape> shapes;
};

const std::vector<Case> kCases = {
    {{{1}, {1}}},
    {{{1003}, {1003}}},                    // a tail after full vectors
    {{{17}, {}}},                          // a Relu as Max(x, 0)
    {{{}, {33}}},                          // scalar first
    {{{2, 7, 768}, {768}}},                // per-column
    {{{2, 17, 7, 5}, {1, 17, 1, 1}}},      // per-channel
    {{{4, 1, 7}, {1, 5, 7}}},              // both broadcast
    {{{7, 1}, {1, 9}}},                    // outer product
    {{{0, 5}, {5}}},                       // empty
    {{{64, 1003}, {1003}}},                // above the threading grain
    {{{3, 5}, {5}, {3, 1}}},               // three inputs
    {{{1}, {1}, {4, 6}}},                  // the first two both broadcast along every run
    {{{2, 3, 1, 5}, {3, 4, 1}, {5}, {}}},  // four inputs
    {{{8, 64, 9, 9}, {1, 64, 1, 1}, {8, 1, 9, 9}}},
};

class FastMinMax : public ::testing::TestWithParam<const char*> {};

TEST_P(FastMinMax, MatchesReferenceOverBroadcastPatterns) {
  for (const Case& c : kCases) {
    std::string trace;
    for (const Shape& s : c.shapes) trace += shape_str(s) + " ";
    SCOPED_TRACE(trace);
    for (int threads : {1, 3}) {
      OracleOp op(GetParam(), 13);
      for (const Shape& s : c.shapes) op.random(s);
      const auto r = op.threads(threads).check(0, 0);  // a choice: bit for bit
      EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
    }
  }
}

TEST_P(FastMinMax, IntegersAndTheirExtremes) {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  const Tensor a = Tensor::from_vector<int64_t>({5}, {lo, hi, -1, 0, 7});
  const Tensor b = Tensor::from_vector<int64_t>({5}, {hi, lo, 0, -1, 7});
  auto r = OracleOp(GetParam(), 13).input(a).input(b).check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  std::vector<int32_t> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i * 2654435761u);
  const Tensor c = Tensor::from_vector<int32_t>({10, 100}, v);
  const Tensor d =
      Tensor::from_vector<int32_t>({100}, std::vector<int32_t>(v.begin() + 7, v.begin() + 107));
  const std::string impl = test::check_bytes(OracleOp(GetParam(), 13).input(c).input(d), {c, d});
  EXPECT_EQ(impl.rfind("fast:", 0), 0u) << impl;
}

TEST_P(FastMinMax, NaNWinsAndSignedZerosKeepTheReferencesPick) {
  const float nan = NAN, inf = INFINITY;
  const Tensor a = Tensor::from_vector<float>({8}, {nan, 1.0f, nan, -0.0f, 0.0f, inf, -inf, 2.0f});
  const Tensor b = Tensor::from_vector<float>({8}, {1.0f, nan, nan, 0.0f, -0.0f, -inf, inf, 2.0f});
  const auto r = OracleOp(GetParam(), 13).input(a).input(b).check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
}

TEST_P(FastMinMax, OneInputIsACopy) {
  EXPECT_EQ(OracleOp(GetParam(), 13).random({3, 7}).check(0, 0).impl.rfind("fast:", 0), 0u);
}

TEST_P(FastMinMax, OtherTypesAndOldOpsetsAreTheReferenceKernels) {
  const Tensor a = Tensor::from_vector<double>({3}, {1, -2, 3});
  EXPECT_EQ(OracleOp(GetParam(), 13).input(a).input(a).check(0, 0).impl, "reference");
  EXPECT_EQ(OracleOp(GetParam(), 6).random({3}).random({3}).check(0, 0).impl, "reference");
}

INSTANTIATE_TEST_SUITE_P(Ops, FastMinMax, ::testing::Values("Max", "Min"));

}  // namespace
}  // namespace polyinfer
