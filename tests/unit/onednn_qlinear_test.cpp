// The oneDNN QLinearConv / QLinearMatMul / QLinearGemm kernels (onednn/qlinear.cpp) against
// the reference kernels (`cpu-ref`, ops/quantize.cpp): one-node models with constant weights and
// quantization parameters, random 8-bit inputs, the fast kernel asserted to have run.
//
// Tolerance: at most one quantization step, on at most 1% of the elements. Why: oneDNN folds
// sx·sw/sy into one float per channel and rounds (acc + bias)·scale in float, the reference in
// double; where the exact product lies within float rounding of a half-integer the two round
// to neighbouring integers. Everything else (accumulation, zero points, padding, saturation)
// is integer arithmetic and must agree exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "providers/cpu/onednn/onednn.h"
#include "qlinear_models.h"

namespace polyinfer {
namespace {

using namespace test;

// The weights' range: 8 bits. Where oneDNN's int8 products are not exact (no VNNI: u8 x s8
// pairs saturate at 16 bits, s8 sources run through halved weights) the default choice takes
// the exact form (`onednn_int8_exact`, int8_exact_test.cpp), so the kernels promise the
// reference's results on every CPU; SaturationAdvisoryWithoutVnni checks oneDNN's own operands.
const int kW = 127;

// Whether the fast kernel declared its results inexact on this CPU (Kernel::advisory): never
// with the default choice.
bool advised_inexact(const Session& s, bool /*signed_source*/) {
  EXPECT_TRUE(s.placement().notes.empty()) << s.placement().notes[0];
  return !s.placement().notes.empty();
}

// Runs `m` on cpu and cpu-ref and compares output 0 within the tolerance above; expects the
// cpu node's implementation to start with `impl`.
void expect_close_to_reference(ModelBuilder& m, const std::string& in, const Shape& shape,
                               bool signed_in, const std::string& impl = "onednn") {
  const std::string bytes = m.bytes();
  Session a = load_on(bytes, "cpu");
  Session b = load_on(bytes, "cpu-ref");
  std::map<std::string, Value> feed{{in, random_q8(shape, signed_in, 11)}};
  const Tensor ya = a.run(feed)[0].tensor(), yb = b.run(feed)[0].tensor();
  ASSERT_EQ(a.placement().nodes.size(), 1u);
  EXPECT_EQ(a.placement().nodes[0].impl.rfind(impl, 0), 0u) << a.placement().nodes[0].impl;
  if (impl != "reference" && advised_inexact(a, signed_in)) return;
  ASSERT_EQ(ya.shape(), yb.shape());
  ASSERT_EQ(ya.dtype(), yb.dtype());
  const bool s8 = ya.dtype() == DType::Int8;
  int64_t off_by_one = 0, saturated = 0;
  for (int64_t i = 0; i < ya.numel(); ++i) {
    const int va = s8 ? ya.data<int8_t>()[i] : ya.data<uint8_t>()[i];
    const int vb = s8 ? yb.data<int8_t>()[i] : yb.data<uint8_t>()[i];
    ASSERT_LE(std::abs(va - vb), 1) << "at flat index " << i << ": " << va << " vs " << vb;
    off_by_one += va != vb;
    saturated += vb == (s8 ? -128 : 0) || vb == (s8 ? 127 : 255);
  }
  EXPECT_LE(off_by_one * 100, ya.numel()) << off_by_one << " of " << ya.numel() << " differ";
  // The scales below are chosen so that most outputs fall inside the range: a test where
  // everything saturates would prove little.
  EXPECT_LT(saturated * 4, ya.numel()) << saturated << " of " << ya.numel() << " saturate";
}

class OnednnQLinearConvTest : public ::testing::TestWithParam<QConvCase> {};

TEST_P(OnednnQLinearConvTest, MatchesReference) {
  const QConvCase& c = GetParam();
  ModelBuilder m = qconv_model(c, kW);
  expect_close_to_reference(m, "x", c.x, c.signed_x);
}

INSTANTIATE_TEST_SUITE_P(Shapes, OnednnQLinearConvTest, ::testing::ValuesIn(qconv_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(OnednnQLinearConv, NonZeroWeightZeroPointIsLeftToTheReference) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 5, 5}, kUInt8).output("y", {}, kUInt8);
  m.initializer("sx", {}, {0.02f}).initializer("sw", {}, {0.01f}).initializer("sy", {}, {0.1f});
  m.int_initializer("zx", {}, kUInt8, {128});
  m.int_initializer("zw", {}, kInt8, {2});
  m.int_initializer("zy", {}, kUInt8, {128});
  m.int_initializer("w", {3, 2, 3, 3}, kInt8, random_ints(54, -127, 127, 5));
  m.node("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy"}, {"y"}, "qconv");
  expect_close_to_reference(m, "x", {1, 2, 5, 5}, false, "reference");
}

// Without VNNI, oneDNN adds u8 x s8 products in saturating int16 pairs: switched on past its
// rule (`onednn_int8=on`), a kernel on oneDNN's operands as they are says so in the placement
// notes where its weights use 8 bits; 7-bit weights are exact there, and the default choice then
// keeps oneDNN's operands and matches the reference on full-range inputs (on VNNI machines both
// hold trivially).
TEST(OnednnQLinearConv, SaturationAdvisoryWithoutVnni) {
  const Tensor wide = Tensor::from_vector<int8_t>({3}, {1, -65, 2});
  const Tensor narrow = Tensor::from_vector<int8_t>({3}, {63, -63, 0});
  using cpu::onednn::int8_advisory;
  EXPECT_NE(int8_advisory(wide, false, false).find("saturate at 16 bits"), std::string::npos);
  EXPECT_NE(int8_advisory(narrow, true, false).find("halved weights"), std::string::npos);
  EXPECT_EQ(int8_advisory(narrow, false, false), "");
  EXPECT_EQ(int8_advisory(wide, true, true), "");

  for (const int wmax : {127, 63}) {
    ModelBuilder m(13);
    const Shape x{1, 16, 7, 7};
    m.input("x", x, kUInt8).output("y", {}, kUInt8);
    // Scales as in MatchesReference (144 taps): typical outputs ~40 steps from the zero point.
    const float sx = 0.02f, sw = 0.002f, sy = sx * sw * 12 * 74 * 74 / 40;
    m.initializer("sx", {}, {sx}).initializer("sw", {}, {sw}).initializer("sy", {}, {sy});
    m.int_initializer("zx", {}, kUInt8, {0});
    m.int_initializer("zw", {}, kInt8, {0});
    m.int_initializer("zy", {}, kUInt8, {128});
    m.int_initializer("w", {8, 16, 3, 3}, kInt8, random_ints(8 * 16 * 9, -wmax, wmax, 5));
    m.node("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy"}, {"y"}, "qconv");
    Session s = load_on(m.bytes(), "cpu:onednn_int8=on");
    const bool expect_note = wmax > 64 && !cpu::onednn::int8_products_exact();
    ASSERT_EQ(s.placement().notes.size(), expect_note ? 1u : 0u) << "weights to " << wmax;
    if (expect_note) {
      EXPECT_EQ(
          s.placement().notes[0].rfind("1 node (QLinearConv 'qconv'): this CPU has no VNNI", 0), 0u)
          << s.placement().notes[0];
    }
    if (wmax == 63) expect_close_to_reference(m, "x", x, false);
  }
}

TEST(OnednnQLinearConvAdd, MatchesReference) {
  for (bool computed_z : {false, true}) {
    for (bool s8 : {false, true}) {
      SCOPED_TRACE(std::string(s8 ? "int8" : "uint8") + (computed_z ? ", computed Z" : ""));
      ModelBuilder m = qconv_add_model(s8, computed_z, kW);
      const std::string bytes = m.bytes();
      Session a = load_on(bytes, "cpu");
      Session b = load_on(bytes, "cpu-ref");
      std::map<std::string, Value> feed{{"x", random_q8({1, 8, 9, 9}, s8, 11)},
                                        {"z", random_q8({1, 12, 9, 9}, s8, 12)}};
      const Tensor ya = a.run(feed)[0].tensor(), yb = b.run(feed)[0].tensor();
      const auto& conv = a.placement().nodes.back();
      EXPECT_EQ(conv.impl.rfind("onednn", 0), 0u) << conv.impl;
      if (advised_inexact(a, s8)) continue;
      ASSERT_EQ(ya.shape(), yb.shape());
      int differ = 0;
      for (int64_t i = 0; i < ya.numel(); ++i) {
        const int va = s8 ? ya.data<int8_t>()[i] : ya.data<uint8_t>()[i];
        const int vb = s8 ? yb.data<int8_t>()[i] : yb.data<uint8_t>()[i];
        ASSERT_LE(std::abs(va - vb), 1) << "at " << i;  // float vs double rounding (see the top)
        differ += va != vb;
      }
      EXPECT_LE(differ * 100, ya.numel());
    }
  }
}

class OnednnQLinearMatMulTest : public ::testing::TestWithParam<QMatMulCase> {};

TEST_P(OnednnQLinearMatMulTest, MatchesReference) {
  const QMatMulCase& c = GetParam();
  ModelBuilder m = qmatmul_model(c, kW);
  expect_close_to_reference(m, "a", c.a, c.signed_a);
}

INSTANTIATE_TEST_SUITE_P(Shapes, OnednnQLinearMatMulTest, ::testing::ValuesIn(qmatmul_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// ai.polyinfer QLinearGemm (the QDQ pass's Gemm): QLinearMatMul plus an int32 bias added to the
// accumulators before the output scale. The bias is large enough (thousands of sa·sb steps)
// that adding it after the scale, or not at all, moves most outputs.
TEST(OnednnQLinearGemm, BiasMatchesReference) {
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8" : "uint8");
    ModelBuilder m = qgemm_model(s8, /*float_y=*/false, kW);
    expect_close_to_reference(m, "a", {3, 70}, s8);
  }
}

// Without sy and zy QLinearGemm's Y is float32 (acc + bias)·sa·sb[n]: the integer sum is exact
// in both, so they differ only by oneDNN's float scale against the reference's double one.
TEST(OnednnQLinearGemm, FloatOutputMatchesReference) {
  const int64_t M = 2, K = 70;
  ModelBuilder m = qgemm_model(/*s8=*/false, /*float_y=*/true, kW);
  const std::string bytes = m.bytes();
  Session a = load_on(bytes, "cpu");
  Session r = load_on(bytes, "cpu-ref");
  const std::map<std::string, Value> feed{{"a", random_q8({M, K}, false, 11)}};
  const Tensor ya = a.run(feed)[0].tensor(), yr = r.run(feed)[0].tensor();
  EXPECT_EQ(a.placement().nodes[0].impl.rfind("onednn", 0), 0u) << a.placement().nodes[0].impl;
  ASSERT_EQ(ya.dtype(), DType::Float32);
  ASSERT_EQ(ya.shape(), yr.shape());
  const float* pa = ya.data<float>();
  const float* pr = yr.data<float>();
  for (int64_t i = 0; i < ya.numel(); ++i)
    EXPECT_NEAR(pa[i], pr[i], 1e-6f * std::fabs(pr[i]) + 1e-7f) << "at " << i;
}

}  // namespace
}  // namespace polyinfer
