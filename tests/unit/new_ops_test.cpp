// The reference kernels of operators and semantics added with opsets 24-28, at their edges: Mod
// with fmod=0 on floats (signed zeros, infinities, NaN), BitShift on signed types past the bit
// width, CumProd exclusive and reverse, TensorScatter's circular wrap, BitCast, and
// LpNormalization of a zero vector. Expected values come from a naive loop in the test or, where
// written in, from numpy / onnx.reference (the comment beside them says how).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "model_builder.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

// ONNX TensorProto element types.
constexpr int kFloat = 1, kInt8 = 3, kUint16 = 4, kInt32 = 6, kInt64 = 7, kDouble = 11;

// Runs the one-node model `b` on the reference kernels and returns its first output.
Tensor run_ref(const test::ModelBuilder& b, const std::map<std::string, Value>& feeds) {
  const std::string bytes = b.bytes();
  SessionOptions opts;
  opts.providers = {"cpu-ref"};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), opts);
  return s.run(feeds)[0].tensor();
}

template <class T>
std::vector<T> run_mod(int elem, int64_t fmod, const std::vector<T>& a, const std::vector<T>& b) {
  const int64_t n = static_cast<int64_t>(a.size());
  test::ModelBuilder m(28);
  m.input("a", {n}, elem).input("b", {n}, elem).output("y", {n}, elem);
  m.node("Mod", {"a", "b"}, {"y"}, "mod");
  test::set_int(test::last_node(m), "fmod", fmod);
  return run_ref(m, {{"a", Tensor::from_vector<T>({n}, a)}, {"b", Tensor::from_vector<T>({n}, b)}})
      .template to_vector<T>();
}

template <class T> void check_floor_mod() {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> a = {0, -0.0, 0,   -0.0, inf, -inf, 5, 5,        -5,       -5,
                            3, -3,   nan, 1,    5.5, -5.5, 4, T(1e-30), T(-1e-30)};
  const std::vector<T> b = {2,    2,   -2, -2,  3,  3, 0,  -0.0, inf, -inf,
                            -inf, inf, 1,  nan, -2, 2, -2, 1,    1};
  // numpy.mod(a, b) of these values (float32 and float64 alike); NaN where `nan` is written.
  const std::vector<T> want = {0,    0,   -0.0, -0.0, nan,  nan, nan,  nan,      inf, -5,
                               -inf, inf, nan,  nan,  -0.5, 0.5, -0.0, T(1e-30), 1};
  const std::vector<T> got = run_mod<T>(std::is_same_v<T, float> ? kFloat : kDouble, 0, a, b);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("mod(" + std::to_string(a[i]) + ", " + std::to_string(b[i]) + ")");
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]);
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << "sign of " << got[i];
    }
  }
}

TEST(NewOpsMod, FloorModSpecialCasesFloat) { check_floor_mod<float>(); }
TEST(NewOpsMod, FloorModSpecialCasesDouble) { check_floor_mod<double>(); }

TEST(NewOpsMod, FmodKeepsTheDividendsSign) {
  const auto inf = std::numeric_limits<float>::infinity();
  const std::vector<float> got =
      run_mod<float>(kFloat, 1, {5.5f, -5.5f, 3, -3}, {-2, 2, inf, -inf});
  EXPECT_EQ(got, (std::vector<float>{1.5f, -1.5f, 3, -3}));
}

template <class T>
std::vector<T> run_shift(int elem, const std::string& dir, const std::vector<T>& x,
                         const std::vector<T>& y) {
  const int64_t n = static_cast<int64_t>(x.size());
  test::ModelBuilder m(28);
  m.input("x", {n}, elem).input("y", {n}, elem).output("z", {n}, elem);
  m.node("BitShift", {"x", "y"}, {"z"}, "shift");
  test::set_string(test::last_node(m), "direction", dir);
  return run_ref(m, {{"x", Tensor::from_vector<T>({n}, x)}, {"y", Tensor::from_vector<T>({n}, y)}})
      .template to_vector<T>();
}

// Expected values: onnx.reference's BitShift (onnx 1.23.2, the BitShift-28 semantics) run on the
// same inputs.
TEST(NewOpsBitShift, SignedShiftsPastTheWidthAndNegative) {
  const std::vector<int8_t> x8 = {1, -1, -128, 64, 127, -7, 5, -5, 3, -3};
  const std::vector<int8_t> y8 = {1, 1, 1, 1, 7, 8, 9, -1, -3, 100};
  EXPECT_EQ(run_shift<int8_t>(kInt8, "LEFT", x8, y8),
            (std::vector<int8_t>{2, -2, 0, -128, -128, 0, 0, 0, 0, 0}));
  EXPECT_EQ(run_shift<int8_t>(kInt8, "RIGHT", x8, y8),
            (std::vector<int8_t>{0, -1, -64, 32, 0, -1, 0, -1, 0, -1}));

  const int32_t lo = std::numeric_limits<int32_t>::min();
  const std::vector<int32_t> x32 = {1, -1, lo, 0x40000000, -7, 5, -5, -9};
  const std::vector<int32_t> y32 = {31, 31, 1, 1, 32, 33, -1, 2};
  EXPECT_EQ(run_shift<int32_t>(kInt32, "LEFT", x32, y32),
            (std::vector<int32_t>{lo, lo, 0, lo, 0, 0, 0, -36}));
  EXPECT_EQ(run_shift<int32_t>(kInt32, "RIGHT", x32, y32),
            (std::vector<int32_t>{0, -1, -1073741824, 536870912, -1, 0, -1, -3}));
}

TEST(NewOpsBitShift, Uint16PastTheWidth) {
  const std::vector<uint16_t> x = {1, 0x8000, 0xFFFF, 3};
  const std::vector<uint16_t> y = {15, 1, 16, 17};
  EXPECT_EQ(run_shift<uint16_t>(kUint16, "LEFT", x, y), (std::vector<uint16_t>{32768, 0, 0, 0}));
  EXPECT_EQ(run_shift<uint16_t>(kUint16, "RIGHT", x, y), (std::vector<uint16_t>{0, 16384, 0, 0}));
}

template <class T>
std::vector<T> run_cumprod(int elem, const std::vector<int64_t>& shape, const std::vector<T>& x,
                           int64_t axis, bool exclusive, bool reverse) {
  test::ModelBuilder m(26);
  m.input("x", shape, elem).output("y", shape, elem);
  m.int64_initializer("axis", {}, {axis});
  m.node("CumProd", {"x", "axis"}, {"y"}, "cumprod");
  test::set_int(test::last_node(m), "exclusive", exclusive ? 1 : 0);
  test::set_int(test::last_node(m), "reverse", reverse ? 1 : 0);
  return run_ref(m, {{"x", Tensor::from_vector<T>(Shape(shape.begin(), shape.end()), x)}})
      .template to_vector<T>();
}

TEST(NewOpsCumProd, ExclusiveReverseAgainstNaiveProducts) {
  const std::vector<int64_t> shape = {2, 3, 4};
  const std::vector<float> x = test::random_values(24, 7, 0.5f, 2.0f);
  for (const bool exclusive : {false, true}) {
    for (const bool reverse : {false, true}) {
      SCOPED_TRACE(std::string("exclusive=") + (exclusive ? "1" : "0") +
                   " reverse=" + (reverse ? "1" : "0"));
      const std::vector<float> got = run_cumprod<float>(kFloat, shape, x, -2, exclusive, reverse);
      ASSERT_EQ(got.size(), x.size());
      // Each output is the product of the elements its scan has seen, recomputed from scratch.
      for (int64_t o = 0; o < 2; ++o)
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t i = 0; i < 4; ++i) {
            double p = 1;
            for (int64_t k = 0; k < 3; ++k) {
              const bool seen =
                  reverse ? k > j || (!exclusive && k == j) : k < j || (!exclusive && k == j);
              if (seen) p *= x[static_cast<size_t>((o * 3 + k) * 4 + i)];
            }
            EXPECT_NEAR(got[static_cast<size_t>((o * 3 + j) * 4 + i)], p, 1e-5 * std::fabs(p));
          }
    }
  }
}

TEST(NewOpsCumProd, IntegersWrap) {
  // 65536 * 65536 = 2^32 wraps int32 to 0 (numpy.cumprod on int32 gives the same).
  EXPECT_EQ(run_cumprod<int32_t>(kInt32, {4}, {65536, 65536, 3, -1}, 0, false, false),
            (std::vector<int32_t>{65536, 0, 0, 0}));
  EXPECT_EQ(run_cumprod<int32_t>(kInt32, {4}, {2, -3, 5, 7}, 0, true, true),
            (std::vector<int32_t>{-105, 35, 7, 1}));
}

// TensorScatter by the spec's pseudo code, index by index.
std::vector<float> naive_scatter(const std::vector<int64_t>& cs, const std::vector<float>& cache,
                                 const std::vector<int64_t>& us, const std::vector<float>& update,
                                 const std::vector<int64_t>& write, int64_t axis, bool circular) {
  std::vector<float> out = cache;
  const size_t rank = cs.size();
  std::vector<int64_t> idx(rank, 0);
  const size_t total = update.size();
  for (size_t flat = 0; flat < total; ++flat) {
    size_t rest = flat;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = static_cast<int64_t>(rest % static_cast<size_t>(us[d]));
      rest /= static_cast<size_t>(us[d]);
    }
    int64_t seq = write[static_cast<size_t>(idx[0])] + idx[static_cast<size_t>(axis)];
    if (circular) seq = ((seq % cs[axis]) + cs[axis]) % cs[axis];
    size_t at = 0;
    for (size_t d = 0; d < rank; ++d)
      at = at * static_cast<size_t>(cs[d]) +
           static_cast<size_t>(d == static_cast<size_t>(axis) ? seq : idx[d]);
    out[at] = update[flat];
  }
  return out;
}

Tensor run_scatter(const std::vector<int64_t>& cs, const std::vector<float>& cache,
                   const std::vector<int64_t>& us, const std::vector<float>& update,
                   const std::vector<int64_t>& write, int64_t axis, const std::string& mode) {
  test::ModelBuilder m(24);
  const int64_t batch = cs[0];
  m.input("cache", cs, kFloat).input("update", us, kFloat).input("w", {batch}, kInt64);
  m.output("present", cs, kFloat);
  m.node("TensorScatter", {"cache", "update", "w"}, {"present"}, "scatter");
  test::set_int(test::last_node(m), "axis", axis);
  test::set_string(test::last_node(m), "mode", mode);
  return run_ref(m, {{"cache", Tensor::from_vector<float>(Shape(cs.begin(), cs.end()), cache)},
                     {"update", Tensor::from_vector<float>(Shape(us.begin(), us.end()), update)},
                     {"w", Tensor::from_vector<int64_t>({batch}, write)}});
}

TEST(NewOpsTensorScatter, CircularWrapsAroundTheCache) {
  // [batch 2, heads 2, seq 4, 3]: batch 0 writes at 3, 0, 1 (wrapping); batch 1 starts at -1,
  // i.e. 3, and a write index past the length wraps as well.
  const std::vector<int64_t> cs = {2, 2, 4, 3}, us = {2, 2, 3, 3};
  const std::vector<float> cache = test::random_values(48, 1);
  const std::vector<float> update = test::random_values(36, 2);
  for (const std::vector<int64_t>& write : {std::vector<int64_t>{3, -1}, {6, 1}}) {
    const std::vector<float> got =
        run_scatter(cs, cache, us, update, write, -2, "circular").to_vector<float>();
    EXPECT_EQ(got, naive_scatter(cs, cache, us, update, write, 2, true));
  }
}

TEST(NewOpsTensorScatter, LinearWritesAndRefusesOverflow) {
  const std::vector<int64_t> cs = {2, 5, 2}, us = {2, 2, 2};
  const std::vector<float> cache = test::random_values(20, 3);
  const std::vector<float> update = test::random_values(8, 4);
  const std::vector<int64_t> write = {3, 0};
  EXPECT_EQ(run_scatter(cs, cache, us, update, write, 1, "linear").to_vector<float>(),
            naive_scatter(cs, cache, us, update, write, 1, false));
  // 4 + 2 steps pass the cache's 5: linear mode must say so rather than write out of bounds.
  EXPECT_THROW(run_scatter(cs, cache, us, update, {4, 0}, 1, "linear"), Error);
}

TEST(NewOpsBitCast, ReinterpretsBitsAndRefusesOtherWidths) {
  test::ModelBuilder m(26);
  m.input("x", {3}, kFloat).output("y", {3}, kInt32);
  m.node("BitCast", {"x"}, {"y"}, "bitcast");
  test::set_int(test::last_node(m), "to", kInt32);
  const Tensor y = run_ref(m, {{"x", Tensor::from_vector<float>({3}, {1.0f, -0.0f, -2.5f})}});
  // IEEE 754 binary32 patterns of 1.0, -0.0 and -2.5.
  EXPECT_EQ(y.to_vector<int32_t>(),
            (std::vector<int32_t>{0x3F800000, std::numeric_limits<int32_t>::min(),
                                  static_cast<int32_t>(0xC0200000u)}));

  test::ModelBuilder wide(26);
  wide.input("x", {3}, kFloat).output("y", {3}, kInt64);
  wide.node("BitCast", {"x"}, {"y"}, "bitcast");
  test::set_int(test::last_node(wide), "to", kInt64);
  EXPECT_THROW(run_ref(wide, {{"x", Tensor::from_vector<float>({3}, {1, 2, 3})}}), Error);
}

TEST(NewOpsLpNormalization, ZeroVectorGivesZero) {
  test::ModelBuilder m(22);
  m.input("x", {2, 2}, kFloat).output("y", {2, 2}, kFloat);
  m.node("LpNormalization", {"x"}, {"y"}, "l2");
  test::set_int(test::last_node(m), "axis", 0);
  const Tensor y = run_ref(m, {{"x", Tensor::from_vector<float>({2, 2}, {0, 3, 0, 4})}});
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 0.6f, 0, 0.8f}));
}

}  // namespace
}  // namespace polyinfer
