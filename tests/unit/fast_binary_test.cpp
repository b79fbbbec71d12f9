// The fast Add/Sub/Mul/Div kernels (src/providers/cpu/fast/binary.cpp) against the reference
// ones, over every common broadcast pattern, odd sizes and tails, and above the threading grain.
#include <gtest/gtest.h>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

struct BinaryCase {
  Shape a, b;
};

const std::vector<BinaryCase> kCases = {
    {{1}, {1}},                        // one element
    {{7}, {7}},                        // same shape, shorter than a vector
    {{17}, {}},                        // vector op scalar
    {{}, {33}},                        // scalar op vector
    {{1003}, {1003}},                  // a tail after full vectors
    {{2, 7, 768}, {768}},              // bias add along the last dim
    {{3, 5, 33}, {1, 1, 33}},          // the same with explicit 1s
    {{2, 17, 7, 5}, {1, 17, 1, 1}},    // per-channel scale [N,C,H,W] * [1,C,1,1]
    {{2, 17, 7, 5}, {17, 1, 1}},       // per-channel, rank-3 B
    {{3, 33, 1}, {3, 33, 17}},         // A broadcast along the last dim
    {{4, 1, 7}, {1, 5, 7}},            // both broadcast (outer product of rows)
    {{7, 1}, {1, 9}},                  // outer product
    {{5, 3}, {5, 1}},                  // short inner runs
    {{2, 3, 1, 5}, {3, 4, 1}},         // mixed
    {{1, 1, 1}, {1}},                  // all ones
    {{3, 4}, {1, 1}},                  // vector op a one-value tensor of the same rank
    {{1}, {3, 4}},                     // a one-value tensor of lower rank op vector
    {{1, 1, 1}, {5}},                  // a one-value tensor of higher rank: broadcast
    {{300 * 211}, {1}},                // threaded vector op scalar
    {{0, 5}, {5}},                     // empty output
    {{64, 1000 + 3}, {1000 + 3}},      // above the threading grain, with a tail
    {{300, 211}, {300, 211}},          // threaded same-shape
    {{8, 64, 9, 9}, {1, 64, 1, 1}},    // threaded per-channel
    {{2, 30, 31, 72}, {2, 1, 1, 72}},  // threaded squeeze-and-excitation scale, NHWC
};

class FastBinary : public ::testing::TestWithParam<const char*> {};

TEST_P(FastBinary, MatchesReferenceOverBroadcastPatterns) {
  for (const BinaryCase& c : kCases) {
    SCOPED_TRACE(shape_str(c.a) + " op " + shape_str(c.b));
    // Divisors kept away from 0 so that relative comparisons stay meaningful.
    auto op = OracleOp(GetParam(), 14).random(c.a).random(c.b, 0.5f, 4.0f);
    const auto r = op.check(0, 0);  // the same float operation: bit-identical results
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
  }
}

TEST_P(FastBinary, AlsoAtOpset7AndWithThreadsOne) {
  const auto r = OracleOp(GetParam(), 7).random({4, 17, 300}).random({300}).threads(1).check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
}

// Three threads start their ranges inside runs and carry across every outer dimension.
TEST_P(FastBinary, ThreadRangesStartingInsideRuns) {
  for (const BinaryCase& c :
       {BinaryCase{{8, 64, 9, 9}, {1, 64, 1, 1}}, BinaryCase{{2, 30, 31, 72}, {2, 1, 1, 72}},
        BinaryCase{{3, 1, 7, 1000}, {1, 5, 1, 1000}}}) {
    SCOPED_TRACE(shape_str(c.a) + " op " + shape_str(c.b));
    const auto r =
        OracleOp(GetParam(), 14).random(c.a).random(c.b, 0.5f, 4.0f).threads(3).check(0, 0);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, FastBinary, ::testing::Values("Add", "Sub", "Mul", "Div"));

TEST(FastBinarySpecial, DivisionByZeroAndInfinitiesMatchTheReference) {
  const float inf = INFINITY;
  const Tensor a = Tensor::from_vector<float>({6}, {1.0f, -1.0f, 0.0f, inf, -inf, NAN});
  const Tensor b = Tensor::from_vector<float>({6}, {0.0f, 0.0f, 0.0f, inf, 2.0f, 1.0f});
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    SCOPED_TRACE(op);
    OracleOp(op, 14).input(a).input(b).check(0, 0);
    OracleOp(op, 14).input(a).input(Tensor::scalar<float>(0.0f)).check(0, 0);
  }
}

TEST(FastBinaryFallback, OtherDtypesAndLegacyOpsetsRunTheReferenceKernel) {
  const Tensor a = Tensor::from_vector<int64_t>({3}, {1, -2, 3});
  const Tensor b = Tensor::from_vector<int64_t>({3}, {4, 5, -6});
  const auto r = OracleOp("Add", 14).input(a).input(b).check();
  EXPECT_EQ(r.impl, "reference");
  EXPECT_EQ(OracleOp("Add", 6).random({3}).random({3}).check().impl, "reference");
}

TEST(FastBinaryFallback, IncompatibleShapesAreAnErrorNamingTheNode) {
  auto op = OracleOp("Mul", 14).random({3, 4}).random({5});
  try {
    op.check();
    FAIL() << "expected a shape error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("oracle_node"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace polyinfer
