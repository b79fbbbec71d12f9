// The fast comparison, logic and Where kernels (src/providers/cpu/fast/compare.cpp) against the
// reference ones: broadcast patterns, float32/int32/int64 with NaN, signed zeros and the int64
// extremes, bool logic, Not, Where of 1- to 8-byte values, threading, and what they leave to the
// reference kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "oracle.h"
#include "oracle_exact.h"

namespace polyinfer {
namespace {

using test::check_bytes;
using test::OracleOp;

Tensor bools(const Shape& s, uint32_t seed) {
  std::vector<uint8_t> v(static_cast<size_t>(shape_numel(s)));
  uint32_t x = seed * 2654435761u + 1;
  for (uint8_t& b : v) {
    x = x * 1664525u + 1013904223u;
    b = (x >> 28) & 1;
  }
  return Tensor::from_host(DType::Bool, s, v.data(), v.size());
}

// Small integers (many ties) of a type.
template <class T> Tensor ints(const Shape& s, uint32_t seed) {
  std::vector<T> v(static_cast<size_t>(shape_numel(s)));
  uint32_t x = seed * 2654435761u + 7;
  for (T& e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<T>(static_cast<int32_t>(x >> 29) - 4);
  }
  return Tensor::from_vector<T>(s, v);
}

// The fast kernel's bytes against the reference's; returns the impl.
std::string exact(const char* op, int opset, const std::vector<Tensor>& ins, int threads = 1) {
  OracleOp o(op, opset);
  for (const Tensor& t : ins) o.input(t);
  return check_bytes(o.threads(threads), ins, threads);
}
bool fast(const std::string& impl) { return impl.rfind("fast:", 0) == 0; }

const std::vector<std::pair<Shape, Shape>> kShapes = {
    {{1}, {1}},           {{1003}, {1003}},          {{17}, {}},       {{}, {33}},
    {{2, 7, 768}, {768}}, {{4, 1, 7}, {1, 5, 7}},    {{7, 1}, {1, 9}}, {{0, 5}, {5}},
    {{64, 1003}, {1003}}, {{2, 3, 1, 5}, {3, 4, 1}},
};

class FastCompare : public ::testing::TestWithParam<const char*> {};

TEST_P(FastCompare, FloatsAndIntegersOverBroadcastPatterns) {
  for (const auto& [a, b] : kShapes) {
    SCOPED_TRACE(shape_str(a) + " op " + shape_str(b));
    // Small integers (in every type) so that equal pairs occur.
    const int threads = shape_numel(a) > 10000 ? 3 : 1;
    EXPECT_TRUE(fast(exact(GetParam(), 13, {ints<float>(a, 1), ints<float>(b, 2)}, threads)));
    EXPECT_TRUE(fast(exact(GetParam(), 13, {ints<int32_t>(a, 3), ints<int32_t>(b, 4)})));
    EXPECT_TRUE(fast(exact(GetParam(), 13, {ints<int64_t>(a, 5), ints<int64_t>(b, 6)}, threads)));
  }
}

TEST_P(FastCompare, NaNInfinitiesSignedZerosAndInt64Extremes) {
  const float nan = NAN, inf = INFINITY;
  const Tensor a = Tensor::from_vector<float>({7}, {nan, 1.0f, nan, -0.0f, inf, -inf, 2.0f});
  const Tensor b = Tensor::from_vector<float>({7}, {1.0f, nan, nan, 0.0f, inf, inf, 2.0f});
  EXPECT_TRUE(fast(exact(GetParam(), 13, {a, b})));
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  // 2^53 + 1 and 2^53 are one double apart: compared as integers, not as doubles.
  const Tensor c = Tensor::from_vector<int64_t>({6}, {lo, hi, (1LL << 53) + 1, -1, 0, lo + 1});
  const Tensor d = Tensor::from_vector<int64_t>({6}, {hi, lo, 1LL << 53, -1, lo, lo});
  EXPECT_TRUE(fast(exact(GetParam(), 13, {c, d})));
  EXPECT_TRUE(fast(exact(GetParam(), 13, {c, Tensor::scalar<int64_t>(lo)})));
}

TEST_P(FastCompare, OtherTypesAndOldOpsetsAreTheReferenceKernels) {
  const Tensor a = Tensor::from_vector<double>({3}, {1, -2, 3});
  EXPECT_EQ(exact(GetParam(), 13, {a, a}), "reference");
  const Tensor u = Tensor::from_vector<uint8_t>({3}, {1, 2, 3});
  EXPECT_EQ(exact(GetParam(), 13, {u, u}), "reference");
}

INSTANTIATE_TEST_SUITE_P(Ops, FastCompare,
                         ::testing::Values("Equal", "Less", "Greater", "LessOrEqual",
                                           "GreaterOrEqual"));

TEST(FastCompareBool, EqualOfBools) {
  EXPECT_TRUE(fast(exact("Equal", 13, {bools({5, 33}, 1), bools({33}, 2)})));
  // Less of bools: refused at creation; the reference kernel reports the dtype.
  EXPECT_THROW(exact("Less", 13, {bools({5}, 1), bools({5}, 2)}), Error);
}

class FastLogic : public ::testing::TestWithParam<const char*> {};

TEST_P(FastLogic, OverBroadcastPatterns) {
  for (const auto& [a, b] : kShapes) {
    SCOPED_TRACE(shape_str(a) + " op " + shape_str(b));
    EXPECT_TRUE(fast(exact(GetParam(), 7, {bools(a, 1), bools(b, 2)}, 2)));
  }
  EXPECT_EQ(exact(GetParam(), 1, {bools({4}, 1), bools({4}, 2)}), "reference");
}

INSTANTIATE_TEST_SUITE_P(Ops, FastLogic, ::testing::Values("And", "Or", "Xor"));

TEST(FastNot, MatchesTheReference) {
  for (const Shape& s : {Shape{1}, Shape{1003}, Shape{0, 3}, Shape{300, 300}})
    EXPECT_TRUE(fast(exact("Not", 1, {bools(s, 3)}, 2)));
}

struct WhereCase {
  Shape c, x, y;
};

TEST(FastWhere, OverBroadcastPatternsAndElementSizes) {
  const std::vector<WhereCase> cases = {
      {{1}, {1}, {1}},
      {{1003}, {1003}, {1003}},
      {{1003}, {}, {1003}},
      {{1003}, {1003}, {}},
      {{}, {17}, {17}},
      {{4, 1}, {1, 9}, {}},
      {{2, 1, 7}, {3, 1}, {7}},
      {{1, 1, 5}, {2, 3, 1}, {}},
      {{0, 4}, {4}, {4}},
      {{64, 1003}, {1003}, {}},
      {{8, 1, 300}, {8, 40, 300}, {1, 40, 1}},
  };
  for (const WhereCase& w : cases) {
    SCOPED_TRACE(shape_str(w.c) + " ? " + shape_str(w.x) + " : " + shape_str(w.y));
    const Tensor c = bools(w.c, 4);
    const int threads = 3;
    EXPECT_TRUE(fast(exact(
        "Where", 16, {c, test::random_tensor(w.x, 1), test::random_tensor(w.y, 2)}, threads)));
    EXPECT_TRUE(fast(exact("Where", 16, {c, ints<int64_t>(w.x, 1), ints<int64_t>(w.y, 2)})));
    EXPECT_TRUE(fast(exact("Where", 9, {c, bools(w.x, 5), bools(w.y, 6)})));
    EXPECT_TRUE(fast(exact("Where", 16,
                           {c, test::to_half(test::random_tensor(w.x, 3)),
                            test::to_half(test::random_tensor(w.y, 4))})));
  }
  // NaN and -0 move as bits.
  const Tensor x = Tensor::from_vector<float>({3}, {NAN, -0.0f, INFINITY});
  const Tensor y = Tensor::from_vector<float>({3}, {0.0f, 1.0f, -INFINITY});
  EXPECT_TRUE(fast(exact("Where", 16, {bools({3}, 9), x, y})));
}

TEST(FastWhere, ANonBoolConditionIsTheReferenceKernels) {
  // The reference rejects it with its own error; the fast kernel is not even placed.
  const Tensor c = Tensor::from_vector<uint8_t>({2}, {1, 0});
  const Tensor x = Tensor::from_vector<float>({2}, {1, 2});
  EXPECT_THROW(OracleOp("Where", 16).input(c).input(x).input(x).check(), Error);
}

}  // namespace
}  // namespace polyinfer
