// The NHWC convolutions of src/providers/cpu/fast/ (direct, Winograd, im2col, stem, pointwise GEMM,
// depthwise, grouped) against the reference kernels (`cpu-ref`): one-node ai.polyinfer
// NhwcFusedConv models with constant weights over shapes with odd channel counts (block tails),
// strides, dilations, asymmetric pads, several kernel sizes, a residual Z and each activation the
// kernels cover. Kernel switches (CpuProviderOptions::kernels) force a kernel on or off, as a user
// would; which kernel takes which shape by default is the choice table's, and the table's rules
// alone are pinned in cpu_choice_test.cpp. On CPUs without a kernel's ISA the tests skip, saying
// so.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <random>
#include <utility>

#include "gemm_tiles.h"
#include "model_builder.h"
#include "polyinfer/session.h"
#include "providers/cpu/fast/activation_pass.h"
#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/avx512_math.h"
#include "providers/cpu/onednn/onednn.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;
using test::random_values;

struct Case {
  const char* name;
  Shape x;  // [N, H, W, C]
  int64_t m, kh, kw;
  std::vector<int64_t> strides, pads, dilations;
  bool bias, z;
  const char* activation;
  std::vector<float> params;
  int64_t group = 1;
};

// gtest names a failing case by this instead of dumping the struct's bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

bool have_avx2() { return fast::avx2::supported(); }

// CPU options with these kernels switched, on GEMM tile `tile`.
CpuProviderOptions switches(std::initializer_list<std::pair<const char*, KernelSwitch>> kernels,
                            GemmTile tile = GemmTile::Auto) {
  CpuProviderOptions o;
  for (const auto& [name, sw] : kernels) o.kernels[name] = sw;
  o.gemm_tile = tile;
  return o;
}
constexpr KernelSwitch kOn = KernelSwitch::On;
constexpr KernelSwitch kOff = KernelSwitch::Off;

// The model: Z (when used) comes from a Relu of an input, so it is an intermediate that dies at
// the convolution and the executor lends its memory to Y (the in-place residual path).
std::string model_bytes(const Case& c, Shape* y_shape) {
  const int64_t C = c.x[3];
  ModelBuilder m(17);
  auto* op = m.proto().add_opset_import();
  op->set_domain("ai.polyinfer");
  op->set_version(1);
  m.input("x", c.x).output("y", {});
  const int64_t ci = C / c.group;  // input channels per group
  m.initializer("w", {c.m, ci, c.kh, c.kw}, random_values(c.m * ci * c.kh * c.kw, 7));
  std::vector<std::string> ins = {"x", "w"};
  if (c.bias || c.z) ins.push_back(c.bias ? "b" : "");
  if (c.bias) m.initializer("b", {c.m}, random_values(c.m, 8));
  // Y's shape, for Z: the usual window arithmetic over explicit pads.
  const std::vector<int64_t> s = c.strides.empty() ? std::vector<int64_t>{1, 1} : c.strides;
  const std::vector<int64_t> d = c.dilations.empty() ? std::vector<int64_t>{1, 1} : c.dilations;
  const std::vector<int64_t> p = c.pads.empty() ? std::vector<int64_t>{0, 0, 0, 0} : c.pads;
  const int64_t oh = (c.x[1] + p[0] + p[2] - d[0] * (c.kh - 1) - 1) / s[0] + 1;
  const int64_t ow = (c.x[2] + p[1] + p[3] - d[1] * (c.kw - 1) - 1) / s[1] + 1;
  *y_shape = {c.x[0], oh, ow, c.m};
  if (c.z) {
    m.input("zin", *y_shape);
    m.node("Relu", {"zin"}, {"z"}, "relu");
    ins.push_back("z");
  }
  m.node("NhwcFusedConv", ins, {"y"}, "conv");
  auto* n = test::last_node(m);
  n->set_domain("ai.polyinfer");
  test::set_ints(n, "kernel_shape", {c.kh, c.kw});
  // Empty: left to the operator's default.
  for (const auto& [name, v] : {std::pair{"strides", c.strides}, std::pair{"pads", c.pads},
                                std::pair{"dilations", c.dilations}})
    if (!v.empty()) test::set_ints(n, name, v);
  test::set_activation(n, "activation", c.activation, c.params);
  if (c.group > 1) {
    auto* g = n->add_attribute();
    g->set_name("group");
    g->set_type(onnx::AttributeProto::INT);
    g->set_i(c.group);
  }
  return m.bytes();
}

// The implementation the CPU provider picks for the case's convolution at level 0 ("" when
// the node is missing from the placement report), with `threads` (0: the session's default) and
// CPU options `cpu`.
std::string conv_impl(const Case& c, int threads = 0, const CpuProviderOptions& cpu = {}) {
  Shape y_shape;
  const std::string bytes = model_bytes(c, &y_shape);
  SessionOptions o;
  o.cpu = cpu;
  o.optimization_level = 0;
  o.threads = threads;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  for (const auto& n : s.placement().nodes)
    if (n.node == "conv") return n.impl;
  return "";
}

// Runs the case's model on the CPU provider and on `cpu-ref` at each of `thread_counts`; checks
// that the node ran on `impl` and that the outputs agree. `cpu`: the CPU provider's options.
void expect_matches_reference(const Case& c, const std::string& impl,
                              const std::vector<int>& thread_counts = {1, 2},
                              const CpuProviderOptions& cpu = {}) {
  Shape y_shape;
  const std::string bytes = model_bytes(c, &y_shape);
  for (int threads : thread_counts) {
    SessionOptions fast, ref;
    fast.cpu = cpu;
    fast.optimization_level = ref.optimization_level = 0;
    fast.threads = ref.threads = threads;
    ref.providers = {"cpu-ref"};
    Session a = Session::load_bytes(bytes.data(), bytes.size(), fast);
    Session b = Session::load_bytes(bytes.data(), bytes.size(), ref);
    std::map<std::string, Value> feed;
    feed["x"] = Tensor::from_vector<float>(c.x, random_values(shape_numel(c.x), 1));
    if (c.z)
      feed["zin"] = Tensor::from_vector<float>(y_shape, random_values(shape_numel(y_shape), 2));
    const Tensor ya = a.run(feed)[0].tensor(), yb = b.run(feed)[0].tensor();
    std::string ran;
    for (const auto& n : a.placement().nodes)
      if (n.node == "conv") ran = n.impl;
    EXPECT_EQ(ran, impl) << "the convolution ran elsewhere";
    ASSERT_EQ(ya.shape(), y_shape);
    ASSERT_EQ(yb.shape(), y_shape);
    const float* pa = ya.data<float>();
    const float* pb = yb.data<float>();
    // Sums of up to ~1000 products of values in [-1, 1] in another order (and, for Winograd,
    // through transforms that only add and halve): errors near 1e-6 relative to the sum's
    // magnitude.
    for (int64_t i = 0; i < ya.numel(); ++i)
      ASSERT_NEAR(pa[i], pb[i], 1e-4f * (1.f + std::fabs(pb[i])))
          << "at flat index " << i << ", " << threads << " threads";
  }
}

// The direct convolution is opt-in (switched on), and Winograd and im2col (which would take the
// 3x3 stride-1 and the strided cases first) are switched off.
const CpuProviderOptions kDirect =
    switches({{"direct", kOn}, {"winograd", kOff}, {"im2col", kOff}});

class ConvNhwcTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!have_avx2()) GTEST_SKIP() << "the direct NHWC convolution needs AVX2 and FMA";
  }
};

TEST_P(ConvNhwcTest, MatchesReference) {
  expect_matches_reference(GetParam(), "fast:avx2-direct", {1, 2}, kDirect);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvNhwcTest,
    ::testing::Values(
        // 16-channel blocks, tiles of 6 pixels running across rows (7x7), the zero border.
        Case{"k3pad1", {1, 7, 7, 16}, 32, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "Relu", {}},
        // A block of 13 (one full vector and a masked one), 9 input channels, two images.
        Case{"tails", {2, 5, 9, 9}, 13, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}},
        // 40 = two blocks and a half one (8 lanes); 8 channels: the smallest taken.
        Case{"half_block", {1, 6, 5, 8}, 40, 3, 3, {}, {1, 1, 1, 1}, {}, false, false, "", {}},
        // 3 output channels: one masked vector only.
        Case{"few_outputs", {1, 4, 4, 12}, 3, 3, 3, {}, {0, 0, 0, 0}, {}, true, false, "", {}},
        Case{"stride2",
             {1, 11, 13, 24},
             24,
             3,
             3,
             {2, 2},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "Relu",
             {}},
        Case{"asym_pads_k5x2",
             {1, 9, 10, 10},
             17,
             5,
             2,
             {1, 2},
             {2, 0, 1, 1},
             {},
             true,
             false,
             "",
             {}},
        Case{"dilated", {1, 12, 12, 16}, 16, 3, 3, {}, {2, 2, 2, 2}, {2, 2}, true, false, "", {}},
        // Enough channels that they are split into chunks (partial sums through Y).
        Case{"chunked", {1, 5, 5, 104}, 20, 3, 3, {}, {1, 1, 1, 1}, {}, true, true, "Relu", {}},
        Case{"residual_clip",
             {1, 8, 8, 16},
             24,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             true,
             "Clip",
             {-0.5f, 0.5f}},
        Case{"residual_no_bias",
             {1, 6, 6, 8},
             11,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             false,
             true,
             "LeakyRelu",
             {0.1f}}),
    [](const auto& info) { return std::string(info.param.name); });

// What the kernel leaves to the others even when switched on: 1x1 kernels and fewer than 8
// channels; and without the switch it takes nothing.
TEST(ConvNhwcSelection, LeavesPointwiseAndThinInputsToOneDnn) {
  if (!have_avx2()) GTEST_SKIP() << "the direct NHWC convolution needs AVX2 and FMA";
  for (const Case& c :
       {Case{"pointwise", {1, 4, 4, 16}, 8, 1, 1, {}, {}, {}, true, false, "", {}},
        Case{"thin", {1, 6, 6, 3}, 8, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}}}) {
    EXPECT_NE(conv_impl(c, 0, kDirect), "fast:avx2-direct") << c.name;
  }
  const Case k3{"k3", {1, 6, 6, 16}, 16, 3, 3, {2, 2}, {1, 1, 1, 1}, {}, true, false, "", {}};
  EXPECT_EQ(conv_impl(k3, 0, kDirect), "fast:avx2-direct");
  EXPECT_NE(conv_impl(k3, 0, switches({{"winograd", kOff}, {"im2col", kOff}})), "fast:avx2-direct");
}

// Winograd F(2x2, 3x3) (src/providers/cpu/fast/conv_winograd.cpp), the default for 3x3
// stride-1 convolutions on AVX2 machines: its GEMMs on the 16-column zmm tile where the CPU
// has AVX-512, and on the ymm one (gemm_tile=avx2). Switched on, it keeps the shapes of fewer
// than 64 input channels, which it leaves to oneDNN where that runs AVX-512
// (ConvWinogradSelection checks that rule).
class ConvWinogradTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!have_avx2()) GTEST_SKIP() << "the Winograd convolution needs AVX2 and FMA";
  }
};

TEST_P(ConvWinogradTest, MatchesReference) {
  for (const test::Tile& tile : test::gemm_tiles()) {
    SCOPED_TRACE(tile.isa);
    expect_matches_reference(GetParam(), tile.impl("winograd"), {1, 2},
                             switches({{"winograd", kOn}}, tile.option));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvWinogradTest,
    ::testing::Values(
        // Odd output sizes: the last row and column of tiles store one pixel of two.
        Case{"odd_out", {1, 7, 9, 16}, 32, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "Relu", {}},
        Case{"no_pad", {1, 6, 8, 8}, 8, 3, 3, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, false, "", {}},
        // Tiles running across images; 40 outputs = two blocks and a half one (masked stores).
        Case{
            "two_images_tails", {2, 5, 7, 24}, 40, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}},
        Case{"asym_pads", {1, 9, 10, 16}, 16, 3, 3, {}, {2, 0, 1, 1}, {}, true, false, "", {}},
        // 100 tiles of 128 channels: four tile blocks, the last with a partial register tile.
        Case{"tile_blocks",
             {1, 20, 20, 128},
             24,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "Relu",
             {}},
        // 169 tiles: with 512 KB of L2, 3 tile blocks, made 4 at 2 threads.
        Case{"odd_tile_blocks",
             {1, 26, 26, 128},
             24,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "",
             {}},
        // 49 tiles of 512 channels: 4 blocks of 13 rounded to whole register tiles (18) leave
        // the last block empty.
        Case{"empty_last_block",
             {1, 14, 14, 512},
             16,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "",
             {}},
        // 49 tiles of 128 channels, 32 outputs (DenseNet-121's 14x14 layers): one tile block,
        // which 2 threads split by tiles (30 and 19) rather than by output channels.
        Case{
            "tile_split", {1, 14, 14, 128}, 32, 3, 3, {}, {1, 1, 1, 1}, {}, true, true, "Relu", {}},
        // 16 tiles of 512 channels: few tile blocks, so the output channels are split too.
        Case{"channel_splits",
             {1, 7, 7, 512},
             64,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             true,
             "Relu",
             {}},
        // 88 outputs: four blocks on the four-panel zmm tile, then one and a half alone.
        Case{"quad_blocks_tail",
             {1, 9, 11, 24},
             88,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             true,
             "Relu",
             {}},
        Case{"residual_clip",
             {1, 8, 8, 16},
             24,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             true,
             "Clip",
             {-0.5f, 0.5f}},
        Case{"residual_tail_leaky",
             {1, 6, 5, 8},
             40,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             false,
             true,
             "LeakyRelu",
             {0.1f}},
        // GELU: 64 channels spread the sums past -3, where the exact formula takes over.
        Case{"gelu", {1, 6, 7, 64}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "Gelu", {}},
        Case{
            "silu_residual", {1, 6, 7, 16}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, true, "Silu", {}},
        // 72 input channels: the filters are packed in a chunk of 64 channels and one of 8.
        Case{"channel_chunk_tail",
             {1, 6, 7, 72},
             32,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "",
             {}}),
    [](const auto& info) { return std::string(info.param.name); });

// What Winograd leaves to the next kernel: other kernel sizes, strides, dilations, groups of
// channels that are not multiples of 8.
TEST(ConvWinogradSelection, TakesOnly3x3Stride1) {
  if (!have_avx2()) GTEST_SKIP() << "the Winograd convolution needs AVX2 and FMA";
  for (const Case& c :
       {Case{"stride2", {1, 9, 9, 16}, 16, 3, 3, {2, 2}, {1, 1, 1, 1}, {}, true, false, "", {}},
        Case{"k5", {1, 9, 9, 16}, 16, 5, 5, {}, {2, 2, 2, 2}, {}, true, false, "", {}},
        Case{"dilated", {1, 9, 9, 16}, 16, 3, 3, {}, {2, 2, 2, 2}, {2, 2}, true, false, "", {}},
        Case{"odd_channels", {1, 6, 6, 12}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}},
        Case{"odd_outputs", {1, 6, 6, 16}, 12, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}}}) {
    const std::string impl = conv_impl(c);
    EXPECT_FALSE(impl.empty()) << c.name;
    EXPECT_EQ(impl.find("winograd"), std::string::npos) << c.name;
  }
  const Case k3{"k3", {1, 8, 8, 64}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}};
  EXPECT_EQ(conv_impl(k3), test::gemm_tiles().back().impl("winograd"));
  // Fewer than 64 input channels: oneDNN's direct convolution where it runs AVX-512, unless
  // forced on.
  const Case c56{"c56", {1, 8, 8, 56}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}};
  const std::string few = conv_impl(c56);
  if (cpu::onednn::avx512_kernels()) {
    EXPECT_EQ(few.rfind("onednn:", 0), 0u) << few;
    EXPECT_EQ(few.find("wino"), std::string::npos) << few;
  } else {
    EXPECT_EQ(few, test::gemm_tiles().back().impl("winograd"));
  }
  EXPECT_EQ(conv_impl(c56, 0, switches({{"winograd", kOn}})),
            test::gemm_tiles().back().impl("winograd"));
  // Switched off (A/B measurements), the case it would take goes to oneDNN.
  EXPECT_EQ(conv_impl(k3, 0, switches({{"winograd", kOff}})).rfind("onednn:", 0), 0u);
}

// im2col + GEMM (src/providers/cpu/fast/conv_im2col.cpp): strided and larger kernels; switched
// on where oneDNN's AVX-512 kernels would otherwise take them.
const CpuProviderOptions kIm2col = switches({{"im2col", kOn}});

class ConvIm2colTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!have_avx2()) GTEST_SKIP() << "the im2col convolution needs AVX2 and FMA";
  }
};

TEST_P(ConvIm2colTest, MatchesReference) {
  expect_matches_reference(GetParam(), "fast:avx2-im2col", {1, 2}, kIm2col);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvIm2colTest,
    ::testing::Values(
        // 7x7 stride 2 (a stem's geometry over 16 channels), padding on all sides.
        Case{"k7_s2", {1, 23, 21, 16}, 16, 7, 7, {2, 2}, {3, 3, 3, 3}, {}, true, false, "Relu", {}},
        // Strided 3x3, two images, 24 outputs (a half panel), odd sizes.
        Case{"s2_two_images",
             {2, 11, 13, 20},
             24,
             3,
             3,
             {2, 2},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "",
             {}},
        // 512 channels: K = 4608 runs in several K blocks (sums continued in Y); few pixels, so
        // the threads split the panels.
        Case{"k_blocks_residual",
             {1, 9, 9, 512},
             32,
             3,
             3,
             {2, 2},
             {1, 1, 1, 1},
             {},
             true,
             true,
             "Relu",
             {}},
        // 5x5 dilated, asymmetric padding, no bias, LeakyRelu; 3x1 with stride 1.
        Case{"k5_dilated",
             {1, 14, 12, 16},
             8,
             5,
             5,
             {1, 1},
             {2, 1, 3, 0},
             {2, 2},
             false,
             false,
             "LeakyRelu",
             {0.1f}},
        Case{"k3x1",
             {1, 10, 9, 16},
             16,
             3,
             1,
             {},
             {1, 0, 1, 0},
             {},
             true,
             true,
             "Clip",
             {-0.5f, 0.5f}},
        // Many pixel blocks (2 images of 30x30 at stride 1 with a 5x5 kernel).
        Case{"pixel_blocks", {2, 30, 30, 16}, 48, 5, 5, {}, {2, 2, 2, 2}, {}, true, false, "", {}},
        Case{"gelu", {1, 9, 9, 64}, 16, 3, 3, {2, 2}, {1, 1, 1, 1}, {}, true, true, "Gelu", {}},
        Case{"hardswish",
             {1, 9, 9, 16},
             16,
             3,
             3,
             {2, 2},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "HardSwish",
             {}}),
    [](const auto& info) { return std::string(info.param.name); });

// Switched on, im2col takes every convolution of group 1 with outputs in multiples of 8, also
// those the table gives others by default (1x1, 3x3 stride 1, stems), and computes them right;
// by default it steps aside where oneDNN runs AVX-512 kernels.
TEST(ConvIm2colSelection, SwitchedOnTakesWhatItCanAndMatches) {
  if (!have_avx2()) GTEST_SKIP() << "the im2col convolution needs AVX2 and FMA";
  for (const Case& c :
       {Case{"k1_s2", {1, 9, 9, 16}, 16, 1, 1, {2, 2}, {0, 0, 0, 0}, {}, true, false, "", {}},
        Case{"k3_s1", {1, 9, 9, 16}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}},
        Case{"stem", {1, 23, 21, 3}, 16, 7, 7, {2, 2}, {3, 3, 3, 3}, {}, true, false, "", {}}}) {
    SCOPED_TRACE(c.name);
    expect_matches_reference(c, "fast:avx2-im2col", {1, 2}, kIm2col);
  }
  const Case odd{"odd_outputs", {1, 6, 6, 16}, 12, 3, 3, {2, 2}, {1, 1, 1, 1}, {},
                 true,          false,         "", {}};
  EXPECT_NE(conv_impl(odd, 0, kIm2col), "fast:avx2-im2col");
  const Case k3_s2{"k3_s2", {1, 9, 9, 16}, 16, 3, 3, {2, 2}, {1, 1, 1, 1}, {}, true, false, "", {}};
  EXPECT_EQ(conv_impl(k3_s2, 0, kIm2col), "fast:avx2-im2col");
  EXPECT_EQ(conv_impl(k3_s2) == "fast:avx2-im2col", !cpu::onednn::avx512_kernels());
}

// 1x1 convolutions of at most 16 outputs at unit strides, unpadded: where oneDNN runs AVX-512
// kernels, im2col takes them with X itself as the GEMM's A (odd pixel counts, several pixel
// blocks, K in several blocks, a residual, activations), on the 16-column zmm tile and on the
// ymm one (gemm_tile=avx2); elsewhere oneDNN keeps them. Wider,
// padded, strided and thin ones stay with oneDNN everywhere.
TEST(ConvIm2colNarrowPointwise, TakesThemWhereOneDnnRunsAvx512AndMatches) {
  if (!have_avx2()) GTEST_SKIP() << "the im2col convolution needs AVX2 and FMA";
  const bool avx512 = cpu::onednn::avx512_kernels();
  for (const test::Tile& tile : test::gemm_tiles()) {
    const CpuProviderOptions on_tile = switches({}, tile.option);
    const std::string want = tile.impl("im2col");
    for (const Case& c :
         {Case{"m16", {1, 13, 11, 32}, 16, 1, 1, {}, {}, {}, true, false, "Clip", {0, 6}},
          Case{"m8_residual", {2, 7, 9, 24}, 8, 1, 1, {}, {}, {}, false, true, "", {}},
          Case{"pixel_blocks",
               {1, 40, 40, 16},
               16,
               1,
               1,
               {1, 1},
               {0, 0, 0, 0},
               {},
               true,
               true,
               "Relu",
               {}},
          Case{"k_blocks", {1, 12, 12, 600}, 16, 1, 1, {}, {}, {}, true, false, "HardSwish", {}}}) {
      SCOPED_TRACE(std::string(c.name) + ", " + tile.isa);
      const std::string impl = conv_impl(c, 0, on_tile);
      EXPECT_EQ(impl == want, avx512) << impl;
      expect_matches_reference(c, impl, {1, 2}, on_tile);
    }
  }
  for (const Case& c :
       {Case{"m24", {1, 9, 9, 32}, 24, 1, 1, {}, {}, {}, true, false, "", {}},
        Case{"padded", {1, 9, 9, 32}, 16, 1, 1, {}, {1, 1, 1, 1}, {}, true, false, "", {}},
        Case{"strided", {1, 9, 9, 32}, 16, 1, 1, {2, 2}, {}, {}, true, false, "", {}},
        Case{"thin", {1, 9, 9, 8}, 16, 1, 1, {}, {}, {}, true, false, "", {}}}) {
    SCOPED_TRACE(c.name);
    const std::string impl = conv_impl(c);
    EXPECT_FALSE(impl.empty());
    EXPECT_EQ(impl.find("im2col"), std::string::npos) << impl;
  }
}

// 1x1 convolutions with at least 16 input channels and more than 16 outputs, unit strides,
// unpadded: the packed GEMM takes them where oneDNN runs AVX-512 kernels (odd pixel counts and
// images, a last output panel of 8, 16 or 24 columns on the narrow tile, K with a tail of 8x8
// transposes, K past the GEMM's 4096 block, a residual written in place, activations; at 2
// threads in contiguous shares of row blocks, or in panel groups where the rows are few and
// the weights large); for the shapes it leaves, oneDNN does. Either way the reference's values.
TEST(ConvPointwiseGemm, TakesDeepOnesAndMatches) {
  if (!have_avx2()) GTEST_SKIP() << "the packed GEMM needs AVX2 and FMA";
  const bool taken = fast::avx512::supported() && cpu::onednn::avx512_kernels();
  for (const Case& c :
       {Case{"m40_bias_relu", {1, 13, 11, 128}, 40, 1, 1, {}, {}, {}, true, false, "Relu", {}},
        Case{"two_images_residual",
             {2, 7, 9, 200},
             96,
             1,
             1,
             {1, 1},
             {0, 0, 0, 0},
             {},
             false,
             true,
             "Clip",
             {0, 6}},
        Case{"k_tail_hardswish", {1, 5, 5, 133}, 24, 1, 1, {}, {}, {}, true, true, "HardSwish", {}},
        Case{"k_blocks", {1, 3, 3, 4100}, 32, 1, 1, {}, {}, {}, true, false, "", {}},
        // 2 x 20 x 21 pixels: 5 row blocks at 1 thread, 6 in shares of 3 at 2, 3 x 2 at 3.
        Case{"row_block_shares", {2, 20, 21, 128}, 48, 1, 1, {}, {}, {}, true, true, "Relu", {}},
        // The shallowest taken: 16 input channels; 120 outputs (a last panel of 24).
        Case{"shallow_silu", {1, 11, 13, 16}, 120, 1, 1, {}, {}, {}, true, false, "Silu", {}},
        Case{"shallow_part_panel", {1, 9, 9, 96}, 48, 1, 1, {}, {}, {}, true, false, "", {}},
        Case{"one_panel_of_24_residual",
             {1, 10, 7, 144},
             24,
             1,
             1,
             {},
             {},
             {},
             true,
             true,
             "Clip",
             {0, 6}},
        Case{"last_panel_of_8_hardswish",
             {1, 6, 9, 40},
             40,
             1,
             1,
             {},
             {},
             {},
             false,
             true,
             "HardSwish",
             {}},
        // Weights past 2 MB (1024 x 520): the threads share the panels, not the rows.
        Case{"panel_shares_residual",
             {1, 5, 7, 1024},
             520,
             1,
             1,
             {},
             {},
             {},
             true,
             true,
             "Relu",
             {}}}) {
    SCOPED_TRACE(c.name);
    for (int threads : {1, 2, 3}) {
      const std::string impl = conv_impl(c, threads);
      EXPECT_EQ(impl == "fast:avx512-pointwise-gemm", taken) << impl << ", " << threads;
      expect_matches_reference(c, impl, {threads});
    }
  }
  for (const Case& c :
       {Case{"thin", {1, 9, 9, 8}, 64, 1, 1, {}, {}, {}, true, false, "", {}},
        Case{"narrow", {1, 9, 9, 256}, 16, 1, 1, {}, {}, {}, true, false, "", {}},
        Case{"padded", {1, 9, 9, 256}, 64, 1, 1, {}, {1, 1, 1, 1}, {}, true, false, "", {}},
        Case{"strided", {1, 9, 9, 256}, 64, 1, 1, {2, 2}, {}, {}, true, false, "", {}},
        Case{"m_not_8", {1, 9, 9, 256}, 60, 1, 1, {}, {}, {}, true, false, "", {}}}) {
    SCOPED_TRACE(c.name);
    const std::string impl = conv_impl(c, 1);
    EXPECT_FALSE(impl.empty());
    EXPECT_NE(impl, "fast:avx512-pointwise-gemm");
  }
  EXPECT_NE(conv_impl(Case{"off", {1, 9, 9, 256}, 64, 1, 1, {}, {}, {}, true, false, "", {}}, 1,
                      switches({{"pointwise_gemm", kOff}})),
            "fast:avx512-pointwise-gemm");
}

// On a 1x1 map (a squeeze-and-excitation block's convolutions: one row per image) the GEMM
// takes any depth at any thread count and more than 16 outputs, their count not a multiple of 8
// too (masked stores: one image on the one-row path, two on the tile).
TEST(ConvPointwiseGemm, TakesPooledMapsAtAnyDepthAndThreads) {
  if (!have_avx2()) GTEST_SKIP() << "the packed GEMM needs AVX2 and FMA";
  const bool taken = fast::avx512::supported() && cpu::onednn::avx512_kernels();
  for (const Case& c :
       {Case{"se_expand",
             {1, 1, 1, 24},
             96,
             1,
             1,
             {},
             {},
             {},
             true,
             false,
             "HardSigmoid",
             {1.f / 6, 0.5f}},
        Case{"two_images_residual", {2, 1, 1, 40}, 48, 1, 1, {}, {}, {}, true, true, "Relu", {}},
        Case{"m52", {1, 1, 1, 208}, 52, 1, 1, {}, {}, {}, true, false, "Relu", {}},
        Case{"m26_two_images_residual", {2, 1, 1, 104}, 26, 1, 1, {}, {}, {}, true, true, "", {}},
        Case{"m110_k_tail", {1, 1, 1, 443}, 110, 1, 1, {}, {}, {}, false, true, "Silu", {}}}) {
    SCOPED_TRACE(c.name);
    for (int threads : {1, 2}) {
      const std::string impl = conv_impl(c, threads);
      EXPECT_EQ(impl == "fast:avx512-pointwise-gemm", taken) << impl;
      expect_matches_reference(c, impl, {threads});
    }
  }
  for (const Case& c : {Case{"m16", {1, 1, 1, 64}, 16, 1, 1, {}, {}, {}, true, false, "", {}},
                        Case{"m12", {1, 1, 1, 48}, 12, 1, 1, {}, {}, {}, true, false, "", {}}}) {
    SCOPED_TRACE(c.name);
    EXPECT_NE(conv_impl(c, 2), "fast:avx512-pointwise-gemm");
  }
  // With the AVX2 tile forced (whole-vector stores), an output count that is not a multiple of
  // 8 is left to oneDNN, and the values are still the reference's.
  const CpuProviderOptions ymm = switches({}, GemmTile::Avx2);
  const Case m52{"m52_avx2", {2, 1, 1, 208}, 52, 1, 1, {}, {}, {}, true, false, "", {}};
  const std::string impl = conv_impl(m52, 1, ymm);
  EXPECT_EQ(impl.find("pointwise-gemm"), std::string::npos) << impl;
  expect_matches_reference(m52, impl, {1}, ymm);
}

// The AVX2 grouped kernel, with the AVX-512 one (which takes most of these shapes where the CPU
// has AVX-512) switched off.
const CpuProviderOptions kNoAvx512Grouped = switches({{"grouped_avx512", kOff}});

class ConvGroupedTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!have_avx2()) GTEST_SKIP() << "the grouped convolution needs AVX2 and FMA";
  }
};

TEST_P(ConvGroupedTest, MatchesReference) {
  expect_matches_reference(GetParam(), "fast:avx2-grouped", {1, 2}, kNoAvx512Grouped);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvGroupedTest,
    ::testing::Values(
        // ResNeXt's first stage: 4 channels per group, two groups per vector; 7 columns leave
        // blocks of 6 (interior), then 1, and the border pixels one at a time.
        Case{"pairs_of_four",
             {1, 9, 7, 32},
             32,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "Relu",
             {},
             8},
        Case{"pairs_stride2_residual",
             {2, 11, 10, 16},
             16,
             3,
             3,
             {2, 2},
             {1, 1, 1, 1},
             {},
             true,
             true,
             "",
             {},
             4},
        // 8 channels per group (RegNet, ResNeXt's second stage): blocks of 8, 4, 2, 1.
        Case{"eight", {1, 14, 15, 48}, 48, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "Relu", {}, 6},
        // A 7x7 output: two border pixels of seven, the interior as 4 + 1.
        Case{"eight_small",
             {1, 7, 7, 24},
             24,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             false,
             true,
             "Silu",
             {},
             3},
        // 16 per group (ResNeXt's third stage), stride 2, asymmetric pads, dilation.
        Case{"sixteen_stride2",
             {1, 13, 12, 64},
             64,
             3,
             3,
             {2, 2},
             {1, 0, 2, 1},
             {},
             true,
             false,
             "Clip",
             {0, 6},
             4},
        Case{"sixteen_dilated",
             {1, 12, 11, 32},
             32,
             3,
             3,
             {},
             {2, 2, 2, 2},
             {2, 2},
             true,
             false,
             "",
             {},
             2},
        // Fewer inputs than outputs per group: 2 in, 8 out; a 5x1 window.
        Case{"two_in_eight_out",
             {1, 10, 9, 8},
             32,
             5,
             1,
             {},
             {2, 0, 2, 0},
             {},
             true,
             false,
             "HardSwish",
             {},
             4}),
    [](const auto& info) { return std::string(info.param.name); });

// What the grouped kernel leaves to oneDNN: depthwise (one channel per group), 32 per group,
// an odd number of 4-channel groups.
TEST(ConvGroupedSelection, DeclinesOtherGroupSizes) {
  if (!have_avx2()) GTEST_SKIP() << "the grouped convolution needs AVX2 and FMA";
  for (const Case& c :
       {Case{"depthwise", {1, 8, 8, 16}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}, 16},
        Case{"thirty_two", {1, 8, 8, 64}, 64, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}, 2},
        Case{"odd_pairs", {1, 8, 8, 12}, 12, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}, 3}}) {
    SCOPED_TRACE(c.name);
    const std::string impl = conv_impl(c, 0, kNoAvx512Grouped);
    EXPECT_NE(impl, "fast:avx2-grouped");
    expect_matches_reference(c, impl, {1, 2}, kNoAvx512Grouped);
  }
}

class ConvGroupedAvx512Test : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!fast::avx512::supported()) GTEST_SKIP() << "the AVX-512 grouped convolution needs AVX-512";
  }
};

TEST_P(ConvGroupedAvx512Test, MatchesReference) {
  expect_matches_reference(GetParam(), "fast:avx512-grouped");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvGroupedAvx512Test,
    ::testing::Values(
        // 4 per group, four groups per vector: 6 groups leave a last unit of 2 (masked
        // lanes); 9 columns are blocks of 5 and 4, the border ones under empty masks.
        Case{"four_six_groups",
             {1, 8, 9, 24},
             24,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "Relu",
             {},
             6},
        Case{"four_stride2_residual",
             {2, 11, 10, 32},
             32,
             3,
             3,
             {2, 2},
             {1, 1, 1, 1},
             {},
             true,
             true,
             "",
             {},
             8},
        // 8 per group (RegNet's 13 groups: a last unit of 1), the interleaving epilogue; a 7x7
        // output is one block of 7.
        Case{"eight_thirteen_groups",
             {1, 7, 7, 104},
             104,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             true,
             "Silu",
             {},
             13},
        Case{"eight_stride2",
             {1, 16, 17, 64},
             64,
             3,
             3,
             {2, 2},
             {1, 1, 1, 1},
             {},
             false,
             false,
             "Relu",
             {},
             8},
        // Asymmetric pads, dilation, a 5x1 window; 3 columns: a block of 4 drops one pixel.
        Case{"eight_dilated",
             {1, 9, 3, 40},
             40,
             3,
             3,
             {},
             {2, 0, 1, 2},
             {2, 1},
             true,
             false,
             "Clip",
             {0, 6},
             5},
        Case{"eight_five_by_one",
             {2, 10, 9, 16},
             16,
             5,
             1,
             {},
             {2, 0, 2, 0},
             {},
             true,
             false,
             "HardSwish",
             {},
             2},
        // 16 and 32 per group: broadcasts, one group per unit.
        Case{"sixteen_stride2",
             {1, 13, 12, 64},
             64,
             3,
             3,
             {2, 2},
             {1, 0, 2, 1},
             {},
             true,
             true,
             "LeakyRelu",
             {0.1f},
             4},
        Case{"thirty_two",
             {1, 9, 8, 96},
             96,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "Relu",
             {},
             3},
        // A 7x7 window at the limit, unpadded.
        Case{"four_seven_by_seven", {1, 12, 11, 16}, 16, 7, 7, {}, {}, {}, true, false, "", {}, 4}),
    [](const auto& info) { return std::string(info.param.name); });

// What the AVX-512 grouped kernel leaves to the others: fewer inputs than outputs per group,
// windows wider than 7, depthwise; and its switch turns it off.
TEST(ConvGroupedAvx512Selection, DeclinesOtherShapesAndTheSwitch) {
  if (!fast::avx512::supported()) GTEST_SKIP() << "the AVX-512 grouped convolution needs AVX-512";
  for (const Case& c :
       {Case{"two_in_eight_out",
             {1, 10, 9, 8},
             32,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "",
             {},
             4},
        Case{"nine_wide", {1, 12, 12, 16}, 16, 1, 9, {}, {}, {}, true, false, "", {}, 4},
        Case{
            "depthwise", {1, 8, 8, 16}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}, 16}}) {
    SCOPED_TRACE(c.name);
    EXPECT_NE(conv_impl(c), "fast:avx512-grouped");
    expect_matches_reference(c, conv_impl(c));
  }
  const Case eight{"eight", {1, 8, 8, 32}, 32, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}, 4};
  EXPECT_EQ(conv_impl(eight), "fast:avx512-grouped");
  EXPECT_EQ(conv_impl(eight, 0, kNoAvx512Grouped), "fast:avx2-grouped");
}

// The convolutions oneDNN runs (pointwise, depthwise) with the activations polyinfer applies
// after the primitive on AVX-512 CPUs instead of as oneDNN post-ops (onednn::split_activation):
// with and without a residual, whose sum must come before the activation. 20x20x24 outputs are
// enough for the pass to split over 2 threads. The packed GEMM and the depthwise kernel, which
// would take these on such CPUs, are switched off.
TEST(ConvOnednnActivation, SiluAndSigmoidAfterThePrimitive) {
  const CpuProviderOptions onednn = switches({{"pointwise_gemm", kOff}, {"depthwise", kOff}});
  for (const char* act : {"Silu", "Sigmoid"})
    for (bool z : {false, true})
      for (const Case& c :
           {Case{"pointwise", {1, 20, 20, 16}, 24, 1, 1, {}, {}, {}, true, z, act, {}},
            Case{"depthwise",
                 {1, 21, 20, 24},
                 24,
                 3,
                 3,
                 {},
                 {1, 1, 1, 1},
                 {},
                 true,
                 z,
                 act,
                 {},
                 24}}) {
        SCOPED_TRACE(std::string(c.name) + " " + act + (z ? " z" : ""));
        const std::string impl = conv_impl(c, 0, onednn);
        EXPECT_EQ(impl.rfind("onednn:", 0), 0u) << impl;
        // The pass's name ends the impl exactly where this CPU has one (ActivationPass tests
        // which CPUs those are).
        const char* pass =
            fast::activation_pass(std::string(act) == "Silu" ? ActKind::Silu : ActKind::Sigmoid);
        const std::string suffix = pass ? std::string(" + ") + pass : std::string();
        EXPECT_TRUE(impl.size() >= suffix.size() &&
                    impl.compare(impl.size() - suffix.size(), suffix.size(), suffix) == 0)
            << impl;
        EXPECT_EQ(impl.find(" + fast:"), pass ? impl.size() - suffix.size() : std::string::npos)
            << impl;
        expect_matches_reference(c, impl, {1, 2}, onednn);
      }
}

// The stem convolution (src/providers/cpu/fast/conv_stem.cpp): windows of up to 3x3 over at most
// 4 input channels and more than 16 outputs, on the AVX-512 tile: a panel and a masked part of
// one, pixel tiles of uneven rows, asymmetric padding (rows and columns of zeros on either
// side), strides that skip the last columns, several images split between threads mid-image,
// a residual written in place and the activations; what it leaves to oneDNN.
TEST(ConvStem, TakesThreeByThreeStemsAndMatches) {
  if (!fast::avx512::supported()) GTEST_SKIP() << "the stem convolution needs AVX-512";
  for (const Case& c : {Case{"rgb_s2_relu6",
                             {1, 17, 15, 3},
                             32,
                             3,
                             3,
                             {2, 2},
                             {1, 1, 1, 1},
                             {},
                             true,
                             false,
                             "Clip",
                             {0, 6}},
                        Case{"three_images_m40",
                             {3, 9, 11, 3},
                             40,
                             3,
                             3,
                             {2, 2},
                             {1, 0, 0, 1},
                             {},
                             true,
                             false,
                             "Relu",
                             {}},
                        Case{"gray_residual_m24",
                             {1, 7, 10, 1},
                             24,
                             3,
                             3,
                             {},
                             {1, 1, 1, 1},
                             {},
                             false,
                             true,
                             "LeakyRelu",
                             {0.1f}},
                        Case{"rgba_k3x2",
                             {1, 8, 9, 4},
                             33,
                             3,
                             2,
                             {1, 2},
                             {0, 1, 2, 0},
                             {},
                             true,
                             false,
                             "HardSwish",
                             {}},
                        Case{"wide_row_two_panels_silu",
                             {1, 3, 37, 3},
                             64,
                             3,
                             3,
                             {},
                             {1, 1, 1, 1},
                             {},
                             true,
                             false,
                             "Silu",
                             {}},
                        Case{"skipped_columns",
                             {1, 8, 10, 3},
                             32,
                             3,
                             3,
                             {3, 3},
                             {0, 0, 0, 0},
                             {},
                             true,
                             true,
                             "",
                             {}}}) {
    SCOPED_TRACE(c.name);
    expect_matches_reference(c, "fast:avx512-stem");
  }
  for (const Case& c :
       {Case{"k7", {1, 16, 16, 3}, 64, 7, 7, {2, 2}, {3, 3, 3, 3}, {}, true, false, "Relu", {}},
        Case{"five_channels", {1, 9, 9, 5}, 32, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}},
        Case{"m16", {1, 9, 9, 3}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}},
        Case{"dilated", {1, 9, 9, 3}, 32, 3, 3, {}, {2, 2, 2, 2}, {2, 2}, true, false, "", {}},
        Case{"pointwise", {1, 9, 9, 3}, 32, 1, 1, {}, {}, {}, true, false, "", {}}}) {
    SCOPED_TRACE(c.name);
    const std::string impl = conv_impl(c);
    EXPECT_FALSE(impl.empty());
    EXPECT_NE(impl, "fast:avx512-stem");
  }
  EXPECT_NE(
      conv_impl(Case{"off", {1, 9, 9, 3}, 32, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}}, 0,
                switches({{"stem", kOff}})),
      "fast:avx512-stem");
}

// The depthwise convolution (src/providers/cpu/fast/conv_depthwise.cpp): one input channel per
// output channel, 3x3 and 5x5 windows, strides 1 and 2, on 16 channels per vector: a channel
// tail under a mask, rows narrower than a block of 8 pixels and rows of several blocks (edge
// and inner ones), asymmetric padding, padding wider than the block's overhang (5x5 with 2),
// strides that skip the last columns, several images split between threads mid-image, a
// residual written in place and the activations; what it leaves to others.
TEST(ConvDepthwise, TakesThreeAndFiveSquareWindowsAndMatches) {
  if (!fast::avx512::supported()) GTEST_SKIP() << "the depthwise convolution needs AVX-512";
  for (const Case& c : {Case{"k3_s1_relu6",
                             {1, 14, 14, 48},
                             48,
                             3,
                             3,
                             {},
                             {1, 1, 1, 1},
                             {},
                             true,
                             false,
                             "Clip",
                             {0, 6},
                             48},
                        Case{"k3_s2_channel_tail",
                             {1, 17, 19, 40},
                             40,
                             3,
                             3,
                             {2, 2},
                             {1, 1, 1, 1},
                             {},
                             true,
                             false,
                             "Relu",
                             {},
                             40},
                        Case{"k3_s2_asymmetric_two_images",
                             {2, 12, 23, 24},
                             24,
                             3,
                             3,
                             {2, 2},
                             {0, 0, 1, 1},
                             {},
                             false,
                             false,
                             "",
                             {},
                             24},
                        Case{"k5_s1_silu_wide_row",
                             {1, 6, 29, 32},
                             32,
                             5,
                             5,
                             {},
                             {2, 2, 2, 2},
                             {},
                             true,
                             false,
                             "Silu",
                             {},
                             32},
                        Case{"k5_s2_hardswish",
                             {1, 15, 15, 16},
                             16,
                             5,
                             5,
                             {2, 2},
                             {2, 2, 2, 2},
                             {},
                             true,
                             false,
                             "HardSwish",
                             {},
                             16},
                        Case{"k3_narrow_row_residual",
                             {3, 5, 3, 8},
                             8,
                             3,
                             3,
                             {},
                             {1, 1, 1, 1},
                             {},
                             true,
                             true,
                             "LeakyRelu",
                             {0.1f},
                             8},
                        Case{"k3_unpadded_skipped_columns",
                             {1, 9, 12, 20},
                             20,
                             3,
                             3,
                             {2, 2},
                             {},
                             {},
                             true,
                             false,
                             "",
                             {},
                             20}}) {
    SCOPED_TRACE(c.name);
    expect_matches_reference(c, "fast:avx512-depthwise", {1, 2, 3});
  }
  for (const Case& c :
       {Case{
            "multiplier_2", {1, 9, 9, 16}, 32, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}, 16},
        Case{"k7", {1, 16, 16, 16}, 16, 7, 7, {}, {3, 3, 3, 3}, {}, true, false, "", {}, 16},
        Case{"k3x5", {1, 9, 9, 16}, 16, 3, 5, {}, {1, 2, 1, 2}, {}, true, false, "", {}, 16},
        Case{"stride3", {1, 9, 9, 16}, 16, 3, 3, {3, 3}, {1, 1, 1, 1}, {}, true, false, "", {}, 16},
        Case{"dilated", {1, 9, 9, 16}, 16, 3, 3, {}, {2, 2, 2, 2}, {2, 2}, true, false, "", {}, 16},
        Case{"groups_of_two",
             {1, 9, 9, 32},
             16,
             3,
             3,
             {},
             {1, 1, 1, 1},
             {},
             true,
             false,
             "",
             {},
             16}}) {
    SCOPED_TRACE(c.name);
    const std::string impl = conv_impl(c);
    EXPECT_FALSE(impl.empty());
    EXPECT_NE(impl, "fast:avx512-depthwise");
  }
  EXPECT_NE(
      conv_impl(Case{"off", {1, 9, 9, 16}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}, 16},
                0, switches({{"depthwise", kOff}})),
      "fast:avx512-depthwise");
}

// Strided 1x1 convolutions without padding run on oneDNN as stride-1 convolutions of every
// stride-th pixel (onednn::ConvDims::src_strides): odd sizes that the stride does not divide,
// two images, a residual, groups; and the cases that keep the strided primitive (padding, a
// view oneDNN cannot describe).
TEST(ConvOnednnStridedPointwise, MatchesReference) {
  const CpuProviderOptions no_im2col = switches({{"im2col", kOff}});
  for (const Case& c :
       {Case{"stride2_odd", {1, 9, 7, 16}, 24, 1, 1, {2, 2}, {}, {}, true, false, "Relu", {}},
        Case{"stride2_to_one_row", {1, 2, 3, 16}, 8, 1, 1, {2, 2}, {}, {}, true, false, "", {}},
        Case{"stride2_residual", {2, 10, 11, 8}, 12, 1, 1, {2, 2}, {}, {}, false, true, "", {}},
        // Two images whose every third row leaves no room: the strided primitive instead.
        Case{"stride3x2_batch2", {2, 10, 11, 8}, 12, 1, 1, {3, 2}, {}, {}, false, true, "", {}},
        Case{"stride2_grouped", {1, 8, 9, 64}, 16, 1, 1, {2, 2}, {}, {}, true, false, "", {}, 2},
        Case{"stride2_padded",
             {1, 7, 8, 16},
             8,
             1,
             1,
             {2, 2},
             {1, 0, 1, 1},
             {},
             true,
             true,
             "Clip",
             {0, 6}}}) {
    SCOPED_TRACE(c.name);
    const std::string impl = conv_impl(c, 0, no_im2col);
    EXPECT_EQ(impl.rfind("onednn:", 0), 0u) << impl;
    expect_matches_reference(c, impl, {1, 2}, no_im2col);
  }
}

// 1-D convolutions over [N, H, 1, C] (Keras Conv1D exports after the channels-last pass) run on
// oneDNN as over [N, 1, H, C] with the same bytes (onednn::conv_dims): windows, pads, strides and
// dilations along H, a residual, groups, the strided 1x1 view; and a height-1 case, as before.
TEST(ConvOnednnWidthOne, MatchesReference) {
  const CpuProviderOptions no_im2col = switches({{"im2col", kOff}});
  for (const Case& c :
       {Case{"k5", {1, 20, 1, 16}, 24, 5, 1, {}, {2, 0, 2, 0}, {}, true, false, "Relu", {}},
        Case{"k3_stride2_dilated",
             {2, 23, 1, 8},
             12,
             3,
             1,
             {2, 1},
             {1, 0, 2, 0},
             {2, 1},
             true,
             true,
             "",
             {}},
        Case{"width_stride", {1, 17, 1, 8}, 16, 3, 1, {1, 2}, {}, {}, false, false, "", {}},
        Case{"pointwise_stride2", {1, 11, 1, 16}, 8, 1, 1, {2, 1}, {}, {}, false, true, "", {}},
        Case{"grouped", {1, 14, 1, 12}, 6, 3, 1, {}, {1, 0, 1, 0}, {}, true, false, "", {}, 3},
        Case{"height1_k5", {1, 1, 20, 16}, 24, 1, 5, {}, {0, 2, 0, 2}, {}, true, false, "", {}}}) {
    SCOPED_TRACE(c.name);
    const std::string impl = conv_impl(c, 0, no_im2col);
    EXPECT_EQ(impl.rfind("onednn:", 0), 0u) << impl;
    expect_matches_reference(c, impl, {1, 2}, no_im2col);
  }
}

}  // namespace
}  // namespace polyinfer
