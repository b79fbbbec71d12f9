// The grouped NHWC convolutions (fast/conv_grouped.cpp, conv_grouped_avx512.cpp) against the
// reference kernels, and what each leaves to the others (conv_nhwc_cases.h).
#include "conv_nhwc_cases.h"

namespace polyinfer {
namespace {

using namespace conv_test;

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

}  // namespace
}  // namespace polyinfer
