// The stem and depthwise NHWC convolutions (fast/conv_stem.cpp, conv_depthwise.cpp) and the ones
// oneDNN runs (activations after the primitive, strided pointwise views, width-1 windows) against
// the reference kernels (conv_nhwc_cases.h).
#include "conv_nhwc_cases.h"

namespace polyinfer {
namespace {

using namespace conv_test;

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
// 4 input channels and more than 16 outputs (any count on a map of 64 pixels or fewer), on the
// AVX-512 tile: a panel and a masked part of
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
                        Case{"digits_m16_on_8x8",
                             {1, 8, 8, 1},
                             16,
                             3,
                             3,
                             {},
                             {1, 1, 1, 1},
                             {},
                             true,
                             false,
                             "Relu",
                             {}},
                        Case{"m8_on_7x6_two_images",
                             {2, 7, 6, 2},
                             8,
                             3,
                             3,
                             {},
                             {1, 1, 1, 1},
                             {},
                             true,
                             true,
                             "",
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
