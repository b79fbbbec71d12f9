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
#include <random>

#include "model_builder.h"
#include "polyinfer/session.h"
#include "providers/cpu/onednn/onednn.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;

constexpr int kUInt8 = 2, kInt8 = 3, kInt32 = 6;

// The weights' range: 8 bits where oneDNN's int8 products are exact (VNNI, AMX), 7 bits where
// they add u8 x s8 pairs in saturating int16 (AVX2): the domain in which the fast kernels promise
// the reference's results there (SaturationAdvisoryWithoutVnni checks the note outside it).
const int kW = cpu::onednn::int8_products_exact() ? 127 : 63;

// Whether the fast kernel declared its results inexact on this CPU (Kernel::advisory): only
// without VNNI, and there for an s8 source (the weights are 7-bit, above). Such a kernel is not
// held to the reference's results; the note is what the user gets instead.
bool advised_inexact(const Session& s, bool signed_source) {
  const bool advised = !s.placement().notes.empty();
  EXPECT_EQ(advised, signed_source && !cpu::onednn::int8_products_exact());
  return advised;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::vector<int32_t> random_ints(int64_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

void int_init(ModelBuilder& m, const std::string& name, std::vector<int64_t> dims, int elem,
              const std::vector<int32_t>& values) {
  m.int_initializer(name, std::move(dims), elem, values);
}

void attr_ints(ModelBuilder& m, const std::string& name, std::vector<int64_t> v) {
  auto* g = m.proto().mutable_graph();
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
void attr_int(ModelBuilder& m, const std::string& name, int64_t v) {
  auto* g = m.proto().mutable_graph();
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

Tensor random_input(const Shape& s, bool is_signed, uint32_t seed) {
  const std::vector<int32_t> v = random_ints(numel(s), is_signed ? -128 : 0,
                                             is_signed ? 127 : 255, seed);
  if (is_signed) return Tensor::from_vector<int8_t>(s, std::vector<int8_t>(v.begin(), v.end()));
  return Tensor::from_vector<uint8_t>(s, std::vector<uint8_t>(v.begin(), v.end()));
}

// The one-node model, unoptimized, on `provider`: "cpu" (the fast kernel) or "cpu-ref".
Session load_on(const std::string& bytes, const char* provider) {
  SessionOptions o;
  o.optimization_level = 0;
  o.threads = 1;
  o.providers = {provider};
  return Session::load_bytes(bytes.data(), bytes.size(), o);
}

// Runs `m` on cpu and cpu-ref and compares output 0 within the tolerance above; expects the
// cpu node's implementation to start with `impl`.
void expect_close_to_reference(ModelBuilder& m, const std::string& in, const Shape& shape,
                               bool signed_in, const std::string& impl = "onednn") {
  const std::string bytes = m.bytes();
  Session a = load_on(bytes, "cpu");
  Session b = load_on(bytes, "cpu-ref");
  std::map<std::string, Value> feed{{in, random_input(shape, signed_in, 11)}};
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

struct QConvCase {
  const char* name;
  Shape x, w;
  std::vector<int64_t> strides, pads;
  int64_t group;
  bool signed_x, signed_y, per_channel, bias;
};
void PrintTo(const QConvCase& c, std::ostream* os) { *os << c.name; }

class OnednnQLinearConvTest : public ::testing::TestWithParam<QConvCase> {};

TEST_P(OnednnQLinearConvTest, MatchesReference) {
  const QConvCase& c = GetParam();
  const int64_t M = c.w[0], taps = numel(c.w) / M;
  ModelBuilder m(13);
  m.input("x", c.x, c.signed_x ? kInt8 : kUInt8).output("y", {}, c.signed_y ? kInt8 : kUInt8);
  const float sx = 0.02f;
  std::vector<float> sw(c.per_channel ? M : 1);
  for (size_t i = 0; i < sw.size(); ++i) sw[i] = 0.001f * (1 + i % 3);
  // Output scale: a typical |acc| (√taps · 74²: uniform 8-bit operands) maps to ~40 steps.
  const float sy = sx * 0.002f * std::sqrt(float(taps)) * 74 * 74 / 40;
  m.initializer("sx", {}, {sx}).initializer("sw", {int64_t(sw.size())}, sw);
  m.initializer("sy", {}, {sy});
  int_init(m, "zx", {}, c.signed_x ? kInt8 : kUInt8, {c.signed_x ? -5 : 131});
  int_init(m, "zw", {int64_t(sw.size())}, kInt8, std::vector<int32_t>(sw.size(), 0));
  int_init(m, "zy", {}, c.signed_y ? kInt8 : kUInt8, {c.signed_y ? 3 : 120});
  int_init(m, "w", c.w, kInt8, random_ints(numel(c.w), -kW, kW, 5));
  std::vector<std::string> in{"x", "sx", "zx", "w", "sw", "zw", "sy", "zy"};
  if (c.bias) {
    int_init(m, "b", {M}, kInt32, random_ints(M, -20000, 20000, 6));
    in.push_back("b");
  }
  m.node("QLinearConv", in, {"y"}, "qconv");
  if (!c.strides.empty()) attr_ints(m, "strides", c.strides);
  if (!c.pads.empty()) attr_ints(m, "pads", c.pads);
  if (c.group != 1) attr_int(m, "group", c.group);
  expect_close_to_reference(m, "x", c.x, c.signed_x);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OnednnQLinearConvTest,
    ::testing::Values(
        QConvCase{"pointwise_u8", {1, 17, 9, 7}, {33, 17, 1, 1}, {}, {}, 1, false, false, true,
                  true},
        QConvCase{"k3pad1_s8", {2, 8, 13, 11}, {16, 8, 3, 3}, {}, {1, 1, 1, 1}, 1, true, true,
                  true, true},
        QConvCase{"stride2_pad3_u8s8", {1, 3, 23, 23}, {8, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, 1,
                  false, true, true, false},
        QConvCase{"asym_pads_per_tensor", {1, 5, 10, 9}, {7, 5, 3, 2}, {1, 2}, {0, 1, 2, 0}, 1,
                  true, false, false, true},
        QConvCase{"depthwise", {1, 12, 15, 15}, {12, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, 12, true,
                  true, true, true},
        QConvCase{"grouped", {1, 12, 8, 8}, {9, 4, 3, 3}, {}, {1, 1, 1, 1}, 3, false, false,
                  true, true},
        QConvCase{"conv1d", {2, 6, 31}, {10, 6, 5}, {2}, {2, 2}, 1, true, true, true, true}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(OnednnQLinearConv, NonZeroWeightZeroPointIsLeftToTheReference) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 5, 5}, kUInt8).output("y", {}, kUInt8);
  m.initializer("sx", {}, {0.02f}).initializer("sw", {}, {0.01f}).initializer("sy", {}, {0.1f});
  int_init(m, "zx", {}, kUInt8, {128});
  int_init(m, "zw", {}, kInt8, {2});
  int_init(m, "zy", {}, kUInt8, {128});
  int_init(m, "w", {3, 2, 3, 3}, kInt8, random_ints(54, -127, 127, 5));
  m.node("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy"}, {"y"}, "qconv");
  expect_close_to_reference(m, "x", {1, 2, 5, 5}, false, "reference");
}

// Without VNNI, oneDNN adds u8 x s8 products in saturating int16 pairs: a kernel whose weights
// use 8 bits says so in the placement notes; 7-bit weights are exact there, and the kernel then
// matches the reference on full-range inputs (on VNNI machines both hold trivially).
TEST(OnednnQLinearConv, SaturationAdvisoryWithoutVnni) {
  const Tensor wide = Tensor::from_vector<int8_t>({3}, {1, -64, 2});
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
    int_init(m, "zx", {}, kUInt8, {0});
    int_init(m, "zw", {}, kInt8, {0});
    int_init(m, "zy", {}, kUInt8, {128});
    int_init(m, "w", {8, 16, 3, 3}, kInt8, random_ints(8 * 16 * 9, -wmax, wmax, 5));
    m.node("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy"}, {"y"}, "qconv");
    Session s = load_on(m.bytes(), "cpu");
    const bool expect_note = wmax > 63 && !cpu::onednn::int8_products_exact();
    ASSERT_EQ(s.placement().notes.size(), expect_note ? 1u : 0u) << "weights to " << wmax;
    if (expect_note) {
      EXPECT_EQ(s.placement().notes[0].rfind("1 node (QLinearConv 'qconv'): this CPU has no VNNI", 0), 0u)
          << s.placement().notes[0];
    }
    if (wmax == 63) expect_close_to_reference(m, "x", x, false);
  }
}

TEST(OnednnQLinearConvAdd, MatchesReference) {
  // ai.polyinfer QLinearConvAdd: the convolution saturated to (sc, zc) — zc at the type's
  // minimum, a Relu, so the clip post-op matters — plus a residual Z with its own zero point.
  // Z is a graph input, or computed (Max(z, z)) and read by the convolution alone, which lends
  // its memory to Y (Kernel::inplace_input).
  for (bool computed_z : {false, true}) {
    for (bool s8 : {false, true}) {
      SCOPED_TRACE(std::string(s8 ? "int8" : "uint8") + (computed_z ? ", computed Z" : ""));
      const int t = s8 ? kInt8 : kUInt8;
      ModelBuilder m(13);
      m.input("x", {1, 8, 9, 9}, t).input("z", {1, 12, 9, 9}, t).output("y", {}, t);
      auto* op = m.proto().add_opset_import();
      op->set_domain("ai.polyinfer");
      op->set_version(1);
      m.initializer("sx", {}, {0.02f}).initializer("sw", {12}, std::vector<float>(12, 0.002f));
      m.initializer("sc", {}, {0.02f * 0.002f * 3 * 74 * 74 / 40});
      m.initializer("sz", {}, {0.03f}).initializer("sy", {}, {0.05f});
      int_init(m, "zx", {}, t, {s8 ? -5 : 131});
      int_init(m, "zw", {12}, kInt8, std::vector<int32_t>(12, 0));
      int_init(m, "zc", {}, t, {s8 ? -128 : 0});
      int_init(m, "zz", {}, t, {s8 ? 7 : 120});
      int_init(m, "zy", {}, t, {s8 ? -3 : 125});
      int_init(m, "w", {12, 8, 1, 1}, kInt8, random_ints(96, -kW, kW, 5));
      int_init(m, "b", {12}, kInt32, random_ints(12, -2000, 2000, 6));
      if (computed_z) m.node("Max", {"z", "z"}, {"z_max"}, "zmax");
      m.node("QLinearConvAdd",
             {"x", "sx", "zx", "w", "sw", "zw", "sc", "zc", "b", computed_z ? "z_max" : "z", "sz",
              "zz", "sy", "zy"},
             {"y"}, "qconvadd");
      m.proto().mutable_graph()->mutable_node(computed_z ? 1 : 0)->set_domain("ai.polyinfer");
      const std::string bytes = m.bytes();
      Session a = load_on(bytes, "cpu");
      Session b = load_on(bytes, "cpu-ref");
      std::map<std::string, Value> feed{{"x", random_input({1, 8, 9, 9}, s8, 11)},
                                        {"z", random_input({1, 12, 9, 9}, s8, 12)}};
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

struct QMatMulCase {
  const char* name;
  Shape a;
  int64_t n;
  bool signed_a, signed_y, per_column;
};
void PrintTo(const QMatMulCase& c, std::ostream* os) { *os << c.name; }

class OnednnQLinearMatMulTest : public ::testing::TestWithParam<QMatMulCase> {};

TEST_P(OnednnQLinearMatMulTest, MatchesReference) {
  const QMatMulCase& c = GetParam();
  const int64_t K = c.a.back(), N = c.n;
  ModelBuilder m(13);
  m.input("a", c.a, c.signed_a ? kInt8 : kUInt8).output("y", {}, c.signed_y ? kInt8 : kUInt8);
  const float sa = 0.05f;
  std::vector<float> sb(c.per_column ? N : 1);
  for (size_t i = 0; i < sb.size(); ++i) sb[i] = 0.002f * (1 + i % 4);
  const float sy = sa * 0.004f * std::sqrt(float(K)) * 74 * 74 / 40;
  m.initializer("sa", {}, {sa}).initializer("sb", {int64_t(sb.size())}, sb);
  m.initializer("sy", {}, {sy});
  int_init(m, "za", {}, c.signed_a ? kInt8 : kUInt8, {c.signed_a ? 9 : 100});
  int_init(m, "zb", {int64_t(sb.size())}, kInt8, std::vector<int32_t>(sb.size(), 0));
  int_init(m, "zy", {}, c.signed_y ? kInt8 : kUInt8, {c.signed_y ? -7 : 128});
  int_init(m, "b", {K, N}, kInt8, random_ints(K * N, -kW, kW, 8));
  m.node("QLinearMatMul", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"}, "qmm");
  expect_close_to_reference(m, "a", c.a, c.signed_a);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OnednnQLinearMatMulTest,
    ::testing::Values(QMatMulCase{"u8_per_column", {7, 33}, 17, false, false, true},
                      QMatMulCase{"s8_3d", {2, 13, 65}, 31, true, true, true},
                      QMatMulCase{"s8_per_tensor_u8_out", {5, 64}, 48, true, false, false}),
    [](const auto& info) { return std::string(info.param.name); });

// ai.polyinfer QLinearGemm (the QDQ pass's Gemm): QLinearMatMul plus an int32 bias added to the
// accumulators before the output scale. The bias is large enough (thousands of sa·sb steps)
// that adding it after the scale, or not at all, moves most outputs.
TEST(OnednnQLinearGemm, BiasMatchesReference) {
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8" : "uint8");
    const int t = s8 ? kInt8 : kUInt8;
    const int64_t M = 3, K = 70, N = 21;
    ModelBuilder m(13);
    m.input("a", {M, K}, t).output("y", {}, t);
    auto* op = m.proto().add_opset_import();
    op->set_domain("ai.polyinfer");
    op->set_version(1);
    std::vector<float> sb(N);
    for (int64_t i = 0; i < N; ++i) sb[i] = 0.002f * float(1 + i % 3);
    const float sa = 0.05f;
    m.initializer("sa", {}, {sa}).initializer("sb", {N}, sb);
    m.initializer("sy", {}, {sa * 0.004f * std::sqrt(float(K)) * 74 * 74 / 40});
    int_init(m, "za", {}, t, {s8 ? 9 : 100});
    int_init(m, "zb", {N}, kInt8, std::vector<int32_t>(N, 0));
    int_init(m, "zy", {}, t, {s8 ? -7 : 128});
    int_init(m, "b", {K, N}, kInt8, random_ints(K * N, -kW, kW, 8));
    int_init(m, "bias", {N}, kInt32, random_ints(N, -6000, 6000, 9));
    m.node("QLinearGemm", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy", "bias"}, {"y"}, "qgemm");
    m.proto().mutable_graph()->mutable_node(0)->set_domain("ai.polyinfer");
    expect_close_to_reference(m, "a", {M, K}, s8);
  }
}

// Without sy and zy QLinearGemm's Y is float32 (acc + bias)·sa·sb[n]: the integer sum is exact
// in both, so they differ only by oneDNN's float scale against the reference's double one.
TEST(OnednnQLinearGemm, FloatOutputMatchesReference) {
  const int64_t M = 2, K = 70, N = 33;
  ModelBuilder m(13);
  m.input("a", {M, K}, kUInt8).output("y", {});
  auto* op = m.proto().add_opset_import();
  op->set_domain("ai.polyinfer");
  op->set_version(1);
  std::vector<float> sb(N);
  for (int64_t i = 0; i < N; ++i) sb[i] = 0.002f * float(1 + i % 3);
  m.initializer("sa", {}, {0.05f}).initializer("sb", {N}, sb);
  int_init(m, "za", {}, kUInt8, {100});
  int_init(m, "zb", {N}, kInt8, std::vector<int32_t>(N, 0));
  int_init(m, "b", {K, N}, kInt8, random_ints(K * N, -kW, kW, 8));
  int_init(m, "bias", {N}, kInt32, random_ints(N, -6000, 6000, 9));
  m.node("QLinearGemm", {"a", "sa", "za", "b", "sb", "zb", "", "", "bias"}, {"y"}, "qgemm");
  m.proto().mutable_graph()->mutable_node(0)->set_domain("ai.polyinfer");
  const std::string bytes = m.bytes();
  Session a = load_on(bytes, "cpu");
  Session r = load_on(bytes, "cpu-ref");
  const std::map<std::string, Value> feed{{"a", random_input({M, K}, false, 11)}};
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
