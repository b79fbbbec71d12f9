// The NHWC convolutions of src/providers/cpu/fast/ (direct, Winograd, im2col, pointwise GEMM;
// the grouped ones in conv_nhwc_grouped_test.cpp, stem, depthwise and oneDNN's in
// conv_nhwc_more_test.cpp) against the reference kernels (`cpu-ref`): one-node ai.polyinfer
// NhwcFusedConv models with constant weights over shapes with odd channel counts (block tails),
// strides, dilations, asymmetric pads, several kernel sizes, a residual Z and each activation the
// kernels cover. Kernel switches (CpuProviderOptions::kernels) force a kernel on or off, as a user
// would; which kernel takes which shape by default is the choice table's, and the table's rules
// alone are pinned in cpu_choice_test.cpp. On CPUs without a kernel's ISA the tests skip, saying
// so.
#include "conv_nhwc_cases.h"

namespace polyinfer {
namespace {

using namespace conv_test;

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
  // forced on or the map is 64 pixels or fewer (there oneDNN's cost a call decides).
  const Case c56{"c56", {1, 9, 9, 56}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}};
  const Case c56_8x8{"c56_8x8", {1, 8, 8, 56}, 16, 3, 3, {}, {1, 1, 1, 1}, {}, true, false, "", {}};
  EXPECT_EQ(conv_impl(c56_8x8), test::gemm_tiles().back().impl("winograd"));
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

}  // namespace
}  // namespace polyinfer
