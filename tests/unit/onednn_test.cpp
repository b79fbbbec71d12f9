// The oneDNN kernels (src/providers/cpu/onednn/) against the reference kernels (`cpu-ref`):
// each case builds a one-node model with constant weights, runs it on both providers with the
// same random inputs, checks that the fast kernel really ran, and compares the outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model_builder.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;
using test::random_values;

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

void attr_ints(ModelBuilder& m, const std::string& name, std::vector<int64_t> v) {
  test::set_ints(test::last_node(m), name, std::move(v));
}
void attr_int(ModelBuilder& m, const std::string& name, int64_t v) {
  test::set_int(test::last_node(m), name, v);
}
void attr_float(ModelBuilder& m, const std::string& name, float v) {
  test::set_float(test::last_node(m), name, v);
}
void attr_string(ModelBuilder& m, const std::string& name, const std::string& v) {
  test::set_string(test::last_node(m), name, v);
}

// Runs `m` (inputs named in `inputs` with their shapes) on cpu and cpu-ref at optimization
// level 0 and compares output "y"; expects the cpu node's implementation to start with `impl`.
void expect_matches_reference(ModelBuilder& m,
                              const std::vector<std::pair<std::string, Shape>>& inputs,
                              const std::string& impl = "onednn", int threads = 1) {
  const std::string bytes = m.bytes();
  SessionOptions fast, ref;
  fast.optimization_level = ref.optimization_level = 0;
  fast.threads = ref.threads = threads;
  // The packed MatMul takes constant-weight products first (any N on the AVX-512 tiles): off
  // where oneDNN's kernel is what is tested.
  if (impl.rfind("onednn", 0) == 0) fast.cpu.kernels["packed_matmul"] = KernelSwitch::Off;
  ref.providers = {"cpu-ref"};
  Session a = Session::load_bytes(bytes.data(), bytes.size(), fast);
  Session b = Session::load_bytes(bytes.data(), bytes.size(), ref);
  std::map<std::string, Value> feed;
  uint32_t seed = 1;
  for (const auto& [name, shape] : inputs)
    feed[name] = Tensor::from_vector<float>(shape, random_values(numel(shape), seed++));
  const Tensor ya = a.run(feed)[0].tensor(), yb = b.run(feed)[0].tensor();
  ASSERT_EQ(a.placement().nodes.size(), 1u);
  EXPECT_EQ(a.placement().nodes[0].impl.rfind(impl, 0), 0u) << a.placement().nodes[0].impl;
  ASSERT_EQ(ya.shape(), yb.shape());
  const float* pa = ya.data<float>();
  const float* pb = yb.data<float>();
  // Sums of up to a few thousand products of values in [-1, 1] accumulated in a different
  // order: errors stay near 1e-6 relative to the sum's magnitude.
  for (int64_t i = 0; i < ya.numel(); ++i)
    ASSERT_NEAR(pa[i], pb[i], 1e-4f * (1.f + std::fabs(pb[i]))) << "at flat index " << i;
}

struct ConvCase {
  const char* name;
  Shape x, w;
  std::vector<int64_t> strides, pads, dilations;
  int64_t group;
  const char* auto_pad;
};

class OnednnConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(OnednnConvTest, MatchesReference) {
  const ConvCase& c = GetParam();
  ModelBuilder m(17);
  m.input("x", c.x).output("y", {}).initializer("w", c.w, random_values(numel(c.w), 7));
  m.initializer("b", {c.w[0]}, random_values(c.w[0], 8));
  m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  if (!c.strides.empty()) attr_ints(m, "strides", c.strides);
  if (!c.pads.empty()) attr_ints(m, "pads", c.pads);
  if (!c.dilations.empty()) attr_ints(m, "dilations", c.dilations);
  if (c.group != 1) attr_int(m, "group", c.group);
  if (*c.auto_pad) attr_string(m, "auto_pad", c.auto_pad);
  expect_matches_reference(m, {{"x", c.x}});
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OnednnConvTest,
    ::testing::Values(
        ConvCase{"pointwise", {1, 17, 9, 7}, {33, 17, 1, 1}, {}, {}, {}, 1, ""},
        ConvCase{"k3pad1", {2, 8, 13, 11}, {16, 8, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, ""},
        ConvCase{"stride2", {1, 3, 23, 23}, {8, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {}, 1, ""},
        ConvCase{"asym_pads", {1, 5, 10, 9}, {7, 5, 3, 2}, {1, 2}, {0, 1, 2, 0}, {}, 1, ""},
        ConvCase{"depthwise", {1, 12, 15, 15}, {12, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 12, ""},
        ConvCase{"grouped", {1, 12, 8, 8}, {9, 4, 3, 3}, {}, {1, 1, 1, 1}, {}, 3, ""},
        ConvCase{"dilated", {1, 4, 16, 16}, {6, 4, 3, 3}, {}, {2, 2, 2, 2}, {2, 2}, 1, ""},
        ConvCase{"same_upper", {1, 3, 10, 10}, {5, 3, 4, 4}, {3, 3}, {}, {}, 1, "SAME_UPPER"},
        ConvCase{"conv1d", {2, 6, 31}, {10, 6, 5}, {2}, {2, 2}, {}, 1, ""},
        // Strided 1x1 without padding: a stride-1 convolution of every stride-th pixel, where
        // oneDNN can describe that view (not of odd heights in NCHW: the strided primitive).
        ConvCase{"pointwise_stride2", {2, 16, 10, 7}, {24, 16, 1, 1}, {2, 2}, {}, {}, 1, ""},
        ConvCase{"pointwise_stride2_odd", {2, 16, 9, 7}, {24, 16, 1, 1}, {2, 2}, {}, {}, 1, ""},
        ConvCase{"pointwise_stride3x1", {1, 6, 10, 5}, {10, 3, 1, 1}, {3, 1}, {}, {}, 2, ""},
        ConvCase{"pointwise_stride2_padded",
                 {1, 8, 9, 9},
                 {12, 8, 1, 1},
                 {2, 2},
                 {1, 1, 1, 1},
                 {},
                 1,
                 ""},
        ConvCase{"conv1d_pointwise_stride2", {2, 6, 30}, {10, 6, 1}, {2}, {}, {}, 1, ""},
        // 1-D convolutions written over [H, 1] (Keras Conv1D exports) run as over [1, H]
        // (onednn::conv_dims): windows, strides, pads and dilations along H, groups, the strided
        // 1x1 view; the width's stride and dilation change nothing there.
        ConvCase{"width1_k5", {1, 16, 20, 1}, {24, 16, 5, 1}, {}, {}, {}, 1, ""},
        ConvCase{
            "width1_stride2_pads", {2, 8, 17, 1}, {12, 8, 3, 1}, {2, 1}, {1, 0, 2, 0}, {}, 1, ""},
        ConvCase{"width1_dilated", {1, 8, 19, 1}, {8, 8, 3, 1}, {}, {2, 0, 2, 0}, {3, 1}, 1, ""},
        ConvCase{"width1_width_stride_dilation",
                 {1, 8, 15, 1},
                 {16, 8, 3, 1},
                 {2, 3},
                 {1, 0, 1, 0},
                 {1, 2},
                 1,
                 ""},
        ConvCase{"width1_grouped", {1, 12, 14, 1}, {6, 4, 3, 1}, {}, {1, 0, 1, 0}, {}, 3, ""},
        ConvCase{"width1_depthwise", {1, 8, 14, 1}, {8, 1, 5, 1}, {2, 1}, {2, 0, 2, 0}, {}, 8, ""},
        ConvCase{"width1_pointwise_stride2", {2, 16, 11, 1}, {24, 16, 1, 1}, {2, 1}, {}, {}, 1, ""},
        ConvCase{"width1_same_upper", {1, 6, 13, 1}, {8, 6, 4, 1}, {2, 1}, {}, {}, 1, "SAME_UPPER"},
        // Not that form: a padded width, a window two wide, height 1 (as before).
        ConvCase{"width1_width_padded", {1, 8, 10, 1}, {8, 8, 3, 1}, {}, {1, 1, 1, 1}, {}, 1, ""},
        ConvCase{"width1_window_wider", {1, 8, 10, 1}, {8, 8, 3, 2}, {}, {1, 1, 1, 0}, {}, 1, ""},
        ConvCase{"height1_k5", {1, 16, 1, 20}, {24, 16, 1, 5}, {}, {0, 2, 0, 2}, {}, 1, ""}),
    [](const auto& info) { return std::string(info.param.name); });

// ConvTranspose (onednn/conv_transpose.cpp, oneDNN's deconvolution) against the reference
// scatter. W is [C, M/group, k...].
struct ConvTransposeCase {
  const char* name;
  Shape x, w;
  std::vector<int64_t> strides, pads, dilations, output_padding, output_shape;
  int64_t group;
  const char* auto_pad;
};

class OnednnConvTransposeTest : public ::testing::TestWithParam<ConvTransposeCase> {};

TEST_P(OnednnConvTransposeTest, MatchesReference) {
  const ConvTransposeCase& c = GetParam();
  ModelBuilder m(17);
  m.input("x", c.x).output("y", {}).initializer("w", c.w, random_values(numel(c.w), 7));
  m.initializer("b", {c.w[1] * c.group}, random_values(c.w[1] * c.group, 8));
  m.node("ConvTranspose", {"x", "w", "b"}, {"y"}, "deconv");
  if (!c.strides.empty()) attr_ints(m, "strides", c.strides);
  if (!c.pads.empty()) attr_ints(m, "pads", c.pads);
  if (!c.dilations.empty()) attr_ints(m, "dilations", c.dilations);
  if (!c.output_padding.empty()) attr_ints(m, "output_padding", c.output_padding);
  if (!c.output_shape.empty()) attr_ints(m, "output_shape", c.output_shape);
  if (c.group != 1) attr_int(m, "group", c.group);
  if (*c.auto_pad) attr_string(m, "auto_pad", c.auto_pad);
  expect_matches_reference(m, {{"x", c.x}});
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OnednnConvTransposeTest,
    ::testing::Values(
        ConvTransposeCase{"k3", {1, 3, 5, 6}, {3, 4, 3, 3}, {}, {}, {}, {}, {}, 1, ""},
        ConvTransposeCase{
            "stride2_pads", {2, 8, 7, 5}, {8, 5, 4, 4}, {2, 2}, {1, 1, 1, 1}, {}, {}, {}, 1, ""},
        ConvTransposeCase{"asym_dilated",
                          {1, 4, 6, 9},
                          {4, 3, 3, 2},
                          {3, 1},
                          {2, 0, 1, 1},
                          {2, 2},
                          {},
                          {},
                          1,
                          ""},
        ConvTransposeCase{"output_padding",
                          {1, 5, 7, 7},
                          {5, 6, 3, 3},
                          {2, 2},
                          {1, 1, 1, 1},
                          {},
                          {1, 1},
                          {},
                          1,
                          ""},
        ConvTransposeCase{
            "output_shape_larger", {1, 3, 5, 6}, {3, 2, 3, 3}, {2, 2}, {}, {}, {}, {12, 14}, 1, ""},
        ConvTransposeCase{
            "output_shape_smaller", {1, 3, 5, 6}, {3, 2, 3, 3}, {2, 2}, {}, {}, {}, {9, 10}, 1, ""},
        ConvTransposeCase{
            "same_lower", {1, 3, 5, 6}, {3, 2, 3, 3}, {2, 2}, {}, {}, {}, {}, 1, "SAME_LOWER"},
        ConvTransposeCase{
            "grouped", {2, 6, 5, 7}, {6, 2, 3, 3}, {2, 1}, {1, 1, 1, 1}, {}, {}, {}, 3, ""},
        ConvTransposeCase{
            "depthwise", {1, 8, 6, 6}, {8, 1, 4, 4}, {2, 2}, {1, 1, 1, 1}, {}, {}, {}, 8, ""},
        ConvTransposeCase{"deconv1d", {2, 6, 11}, {6, 4, 5}, {3}, {1, 2}, {}, {2}, {}, 1, ""},
        ConvTransposeCase{"deconv3d",
                          {1, 3, 4, 5, 3},
                          {3, 2, 2, 3, 2},
                          {2, 1, 2},
                          {0, 1, 0, 1, 0, 1},
                          {},
                          {1, 0, 1},
                          {},
                          1,
                          ""}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(OnednnConvTranspose, DynamicBatchPlansPerShape) {
  ModelBuilder m(17);
  m.input("x", {-1, 4, 6, 6}).output("y", {}).initializer("w", {4, 3, 3, 3}, random_values(108, 3));
  m.node("ConvTranspose", {"x", "w"}, {"y"}, "deconv");
  attr_ints(m, "strides", {2, 2});
  expect_matches_reference(m, {{"x", {3, 4, 6, 6}}});
}

TEST(OnednnConvTranspose, OutputPaddingWithADynamicShapeIsLeftToTheReference) {
  // A negative right padding could only be found refused at run time, too late to fall back.
  ModelBuilder m(17);
  m.input("x", {-1, 2, 4, 4}).output("y", {}).initializer("w", {2, 2, 3, 3}, random_values(36, 3));
  m.node("ConvTranspose", {"x", "w"}, {"y"}, "deconv");
  attr_ints(m, "strides", {2, 2});
  attr_ints(m, "output_padding", {1, 1});
  expect_matches_reference(m, {{"x", {2, 2, 4, 4}}}, "reference");
}

TEST(OnednnConv, DynamicBatchPlansPerShape) {
  ModelBuilder m(17);
  m.input("x", {-1, 4, 9, 9}).output("y", {}).initializer("w", {6, 4, 3, 3}, random_values(216, 3));
  m.node("Conv", {"x", "w"}, {"y"}, "conv");
  expect_matches_reference(m, {{"x", {3, 4, 9, 9}}});
}

// Keras Conv1D layers over [N, C, H, 1] at level 3: the channels-last pass makes them
// NhwcFusedConv over [N, H, 1, C], which oneDNN runs as over [N, 1, H, C] (onednn::conv_dims),
// windows, pads, a stride and a dilation along H; what the table picks by default, and oneDNN
// where the other rows are off.
TEST(OnednnConv, WidthOneConvolutionsThroughTheChannelsLastPath) {
  ModelBuilder m(17);
  m.input("x", {2, 32, 40, 1}).output("y", {});
  m.initializer("w1", {48, 32, 5, 1}, random_values(48 * 32 * 5, 3));
  m.initializer("b1", {48}, random_values(48, 4));
  m.initializer("w2", {16, 48, 3, 1}, random_values(16 * 48 * 3, 5));
  m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  attr_ints(m, "pads", {2, 0, 2, 0});
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  m.node("Conv", {"r1", "w2"}, {"y"}, "conv2");
  attr_ints(m, "strides", {2, 1});
  attr_ints(m, "dilations", {2, 1});
  attr_ints(m, "pads", {1, 0, 2, 0});
  const std::string bytes = m.bytes();
  const Shape xs{2, 32, 40, 1};
  const Tensor x = Tensor::from_vector<float>(xs, random_values(numel(xs), 1));
  SessionOptions ref;
  ref.optimization_level = 0;
  ref.providers = {"cpu-ref"};
  const Tensor want =
      Session::load_bytes(bytes.data(), bytes.size(), ref).run({{"x", x}})[0].tensor();
  for (bool only_onednn : {false, true}) {
    SCOPED_TRACE(only_onednn ? "other rows off" : "default choice");
    SessionOptions o;
    o.optimization_level = 3;
    if (only_onednn)
      for (const char* k : {"im2col", "stem", "grouped", "grouped_avx512", "winograd"})
        o.cpu.kernels[k] = KernelSwitch::Off;
    Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
    int convs = 0;
    for (const auto& n : s.placement().nodes) {
      if (n.op != "ai.polyinfer.NhwcFusedConv") continue;
      ++convs;
      if (only_onednn) {
        EXPECT_EQ(n.impl.rfind("onednn", 0), 0u) << n.node << ": " << n.impl;
      }
    }
    EXPECT_EQ(convs, 2);
    const Tensor got = s.run({{"x", x}})[0].tensor();
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i],
                  1e-4f * (1.f + std::fabs(want.data<float>()[i])))
          << "at flat index " << i;
  }
}

TEST(OnednnConv, AWeightAnotherNodeAlsoReadsIsKept) {
  // The convolution prepacks w and would let the session free it; the Mul still reads it.
  ModelBuilder m(17);
  m.input("x", {1, 2, 5, 5}).output("y", {}).output("w2", {});
  m.initializer("w", {3, 2, 3, 3}, random_values(54, 3));
  m.node("Conv", {"x", "w"}, {"y"}, "conv");
  m.node("Mul", {"w", "w"}, {"w2"}, "square");
  const std::string bytes = m.bytes();
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  const auto out = s.run({{"x", Tensor::from_vector<float>({1, 2, 5, 5}, random_values(50, 1))}});
  const std::vector<float> w = random_values(54, 3), w2 = out[1].tensor().to_vector<float>();
  for (size_t i = 0; i < w.size(); ++i) EXPECT_FLOAT_EQ(w2[i], w[i] * w[i]);
}

// FusedConv's residual Z lends its memory to Y (Kernel::inplace_input) only when nothing else
// needs Z: Z read again later, Z a graph input, Z a graph output, Z a view of a live value each
// keep their values, and every result matches the reference kernels'.
TEST(OnednnConv, ResidualInPlaceOnlyWhenNothingElseNeedsZ) {
  ModelBuilder m(17);
  m.input("x", {1, 4, 6, 6}).output("y", {}).output("y2", {}).output("zout", {}).output("y4", {});
  m.initializer("w", {4, 4, 3, 3}, random_values(144, 3));
  m.initializer("w2", {4, 4, 1, 1}, random_values(16, 4));
  m.node("Conv", {"x", "w2"}, {"z"}, "zconv");        // an intermediate read once more below
  m.node("Conv", {"x", "w2"}, {"z2"}, "z2conv");      // an intermediate read here only
  m.node("Conv", {"x", "w2"}, {"zout"}, "zoutconv");  // a graph output
  m.node("FusedConv", {"x", "w", "", "z2"}, {"a"}, "lends");  // z2 dies here: in place
  test::last_node(m)->set_domain("ai.polyinfer");
  attr_ints(m, "pads", {1, 1, 1, 1});
  m.node("FusedConv", {"a", "w", "", "z"}, {"y"}, "keeps");  // z is read by 'after' too
  test::last_node(m)->set_domain("ai.polyinfer");
  attr_ints(m, "pads", {1, 1, 1, 1});
  m.node("Relu", {"z"}, {"y2"}, "after");
  m.node("FusedConv", {"a", "w", "", "x"}, {"y3"}, "input_z");  // Z a graph input
  test::last_node(m)->set_domain("ai.polyinfer");
  attr_ints(m, "pads", {1, 1, 1, 1});
  m.node("FusedConv", {"y3", "w", "", "zout"}, {"y4"}, "output_z");  // Z a graph output
  test::last_node(m)->set_domain("ai.polyinfer");
  attr_ints(m, "pads", {1, 1, 1, 1});
  auto* op = m.proto().add_opset_import();
  op->set_domain("ai.polyinfer");
  op->set_version(1);
  const std::string bytes = m.bytes();
  SessionOptions fast, ref;
  fast.optimization_level = ref.optimization_level = 0;
  ref.providers = {"cpu-ref"};
  Session a = Session::load_bytes(bytes.data(), bytes.size(), fast);
  Session b = Session::load_bytes(bytes.data(), bytes.size(), ref);
  const std::vector<float> xv = random_values(144, 1);
  const Tensor x = Tensor::from_vector<float>({1, 4, 6, 6}, xv);
  for (int run = 0; run < 3; ++run) {  // recorded, then replayed from the planned arena
    SCOPED_TRACE("run " + std::to_string(run));
    const auto ya = a.run({{"x", x}}), yb = b.run({{"x", x}});
    EXPECT_EQ(x.to_vector<float>(), xv);  // the caller's input is never written
    ASSERT_EQ(ya.size(), yb.size());
    for (size_t o = 0; o < ya.size(); ++o) {
      const std::vector<float> pa = ya[o].tensor().to_vector<float>(),
                               pb = yb[o].tensor().to_vector<float>();
      ASSERT_EQ(pa.size(), pb.size());
      for (size_t i = 0; i < pa.size(); ++i)
        ASSERT_NEAR(pa[i], pb[i], 1e-4f * (1.f + std::fabs(pb[i])))
            << "output " << o << " at " << i;
    }
  }
}

struct MatMulCase {
  const char* name;
  Shape a, b;
  bool b_constant;
};
// gtest would otherwise print the struct's bytes, padding included (valgrind: uninitialised read).
void PrintTo(const MatMulCase& c, std::ostream* os) { *os << c.name; }

class OnednnMatMulTest : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(OnednnMatMulTest, MatchesReference) {
  const MatMulCase& c = GetParam();
  ModelBuilder m(17);
  m.input("a", c.a).output("y", {});
  if (c.b_constant) m.initializer("b", c.b, random_values(numel(c.b), 9));
  else
    m.input("b", c.b);
  m.node("MatMul", {"a", "b"}, {"y"}, "mm");
  std::vector<std::pair<std::string, Shape>> in{{"a", c.a}};
  if (!c.b_constant) in.push_back({"b", c.b});
  expect_matches_reference(m, in);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OnednnMatMulTest,
    ::testing::Values(MatMulCase{"linear2d", {7, 33}, {33, 17}, true},
                      MatMulCase{"linear3d", {2, 13, 65}, {65, 31}, true},
                      MatMulCase{"batched", {2, 3, 5, 6}, {2, 3, 6, 4}, false},
                      MatMulCase{"broadcast", {2, 3, 5, 6}, {3, 6, 7}, false},
                      MatMulCase{"broadcast_ones", {1, 3, 5, 6}, {4, 1, 6, 7}, false}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(OnednnGemm, TransposesAlphaBetaAndBias) {
  // alpha 1: B is read in place (transposed through the reorder's layout); 0.5: a scaled copy.
  for (float alpha : {1.f, 0.5f}) {
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        SCOPED_TRACE("transA=" + std::to_string(ta) + " transB=" + std::to_string(tb) +
                     " alpha=" + std::to_string(alpha));
        const int64_t M = 5, K = 19, N = 11;
        ModelBuilder m(13);
        const Shape a = ta ? Shape{K, M} : Shape{M, K};
        const Shape b = tb ? Shape{N, K} : Shape{K, N};
        m.input("a", a).output("y", {}).initializer("b", b, random_values(K * N, 4));
        m.initializer("c", {N}, random_values(N, 5));
        m.node("Gemm", {"a", "b", "c"}, {"y"}, "gemm");
        attr_int(m, "transA", ta);
        attr_int(m, "transB", tb);
        attr_float(m, "alpha", alpha);
        attr_float(m, "beta", 2.f);
        expect_matches_reference(m, {{"a", a}});
      }
  }
}

TEST(OnednnGemm, AFullMatrixCLeavesItToTheReferenceKernel) {
  ModelBuilder m(13);
  m.input("a", {4, 6}).output("y", {}).initializer("b", {6, 3}, random_values(18, 4));
  m.initializer("c", {4, 3}, random_values(12, 5));
  m.node("Gemm", {"a", "b", "c"}, {"y"}, "gemm");
  expect_matches_reference(m, {{"a", {4, 6}}}, "reference");
}

}  // namespace
}  // namespace polyinfer
