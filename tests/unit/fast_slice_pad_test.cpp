// The fast Slice and Pad kernels (src/providers/cpu/fast/slice.cpp, pad.cpp) against the
// reference ones: every axis, negative and clamped bounds, steps, other dtypes, threading, errors.
#include <gtest/gtest.h>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

Tensor ints(std::vector<int64_t> v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

bool fast(const std::string& impl) { return impl.rfind("fast:", 0) == 0; }

TEST(FastSlice, ChannelHalvesAndEveryAxis) {
  // ShuffleNet's channel split: the second half of the channels of an NCHW tensor.
  EXPECT_TRUE(fast(OracleOp("Slice", 13)
                       .random({2, 58, 28, 28})
                       .input(ints({29}))
                       .input(ints({58}))
                       .input(ints({1}))
                       .check(0, 0)
                       .impl));
  for (int64_t axis : {0, 1, 2, 3, -1, -3}) {
    SCOPED_TRACE(axis);
    EXPECT_TRUE(fast(OracleOp("Slice", 13)
                         .random({3, 5, 7, 9})
                         .input(ints({1}))
                         .input(ints({-1}))
                         .input(ints({axis}))
                         .check(0, 0)
                         .impl));
  }
  // Several axes, clamped and negative bounds, steps on outer dimensions.
  EXPECT_TRUE(fast(OracleOp("Slice", 13)
                       .random({6, 5, 7, 9})
                       .input(ints({-100, 1, 2}))
                       .input(ints({100, 4, 1000}))
                       .input(ints({0, 1, 2}))
                       .input(ints({2, 1, 1}))
                       .check(0, 0)
                       .impl));
  EXPECT_TRUE(fast(OracleOp("Slice", 13)
                       .random({6, 5, 7, 9})
                       .input(ints({5, 0}))
                       .input(ints({-100, 7}))
                       .input(ints({0, 2}))
                       .input(ints({-2, 1}))
                       .check(0, 0)
                       .impl));
  // An empty result (start past end), and opset-1 attributes.
  OracleOp("Slice", 13)
      .random({4, 6})
      .input(ints({3}))
      .input(ints({1}))
      .input(ints({1}))
      .check(0, 0);
  EXPECT_TRUE(fast(OracleOp("Slice", 1)
                       .attr("starts", std::vector<int64_t>{1, 0})
                       .attr("ends", std::vector<int64_t>{3, 4})
                       .random({5, 7})
                       .check(0, 0)
                       .impl));
  // Big enough to be split over threads.
  EXPECT_TRUE(fast(OracleOp("Slice", 13)
                       .random({4, 256, 33, 33})
                       .input(ints({64}))
                       .input(ints({192}))
                       .input(ints({1}))
                       .check(0, 0)
                       .impl));
}

TEST(FastSlice, OtherDtypes) {
  const Tensor i64 = Tensor::from_vector<int64_t>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(fast(OracleOp("Slice", 13)
                       .input(i64)
                       .input(ints({1}))
                       .input(ints({3}))
                       .input(ints({1}))
                       .check()
                       .impl));
  const Tensor b = Tensor::from_vector<bool>({2, 3}, {true, false, true, false, false, true});
  EXPECT_TRUE(fast(OracleOp("Slice", 13).input(b).input(ints({0})).input(ints({1})).check().impl));
}

TEST(FastSlice, InnermostStepFallsBackToTheReference) {
  const auto r = OracleOp("Slice", 13)
                     .random({3, 10})
                     .input(ints({0}))
                     .input(ints({10}))
                     .input(ints({1}))
                     .input(ints({3}))
                     .check(0, 0);
  EXPECT_EQ(r.impl, "reference (fast path declined)");
}

TEST(FastSlice, BadParametersAreTheReferenceKernelsError) {
  auto zero_step = OracleOp("Slice", 13)
                       .random({3, 4})
                       .input(ints({0}))
                       .input(ints({2}))
                       .input(ints({1}))
                       .input(ints({0}));
  EXPECT_THROW(zero_step.check(), Error);
  auto twice = OracleOp("Slice", 13)
                   .random({3, 4})
                   .input(ints({0, 0}))
                   .input(ints({2, 2}))
                   .input(ints({1, -1}));
  EXPECT_THROW(twice.check(), Error);
}

}  // namespace
}  // namespace polyinfer

namespace polyinfer {
namespace {

using test::OracleOp;

Tensor pads(std::vector<int64_t> v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

TEST(FastPad, ConstantBordersCropsAndFill) {
  // A DenseNet/YOLO-style spatial border of an NCHW tensor.
  auto r =
      OracleOp("Pad", 13).random({2, 3, 9, 11}).input(pads({0, 0, 1, 2, 0, 0, 3, 1})).check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  // Every dimension padded, negative pads crop, a fill value from the input.
  r = OracleOp("Pad", 13)
          .random({3, 5, 7})
          .input(pads({1, -1, 2, 2, 0, -3}))
          .input(Tensor::scalar<float>(-2.5f))
          .check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  // Last dimension cropped away entirely on one side; rows wholly outside the input.
  r = OracleOp("Pad", 13).random({4, 6}).input(pads({2, -6, 1, 3})).check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  // Opset 2 attributes, 1-D, and an axes input (opset 18).
  r = OracleOp("Pad", 2)
          .attr("pads", std::vector<int64_t>{3, 1})
          .attr("value", 7.0f)
          .random({10})
          .check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  r = OracleOp("Pad", 18)
          .random({2, 5, 6})
          .input(pads({1, 2, 0, 1}))
          .input(Tensor::scalar<float>(1.0f))
          .input(pads({2, 0}))
          .check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  // Large enough to be split over threads.
  r = OracleOp("Pad", 13)
          .random({1, 64, 112, 112})
          .input(pads({0, 0, 1, 1, 0, 0, 1, 1}))
          .check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
}

// Rows span the last padded axis and the unpadded ones after it (fast/pad.cpp): basic_pitch's
// [1, T, F, 1] padded along F, a crop before unpadded axes, nothing padded, a middle axis only,
// and threads.
TEST(FastPad, UnpaddedTrailingAxesJoinTheRow) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    for (const auto& [shape, p] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
             {{1, 300, 88, 1}, {0, 0, 0, 0, 0, 0, 101, 0}},
             {{2, 7, 5, 3}, {0, 1, -2, 0, 0, 2, 1, 0}},
             {{3, 4, 5}, {0, 0, 0, 0, 0, 0}},
             {{2, 6, 4, 2}, {0, 0, 3, 0, 0, 0, 0, 0}},
             {{2, 6, 4, 2}, {1, 0, 0, 0, 0, 0, 0, 0}}}) {
      SCOPED_TRACE(shape_str(shape));
      const auto r = OracleOp("Pad", 13).threads(threads).random(shape).input(pads(p)).check(0, 0);
      EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
    }
  }
}

// Reflect, edge and wrap: every axis padded, borders wider than the axis (reflection and wrap
// go round more than once), crops on one side, padded leading axes, a 1-D signal as silero's
// STFT pads it, trailing unpadded axes, and threads: exact against the reference.
TEST(FastPad, ReflectEdgeAndWrapModes) {
  for (const char* mode : {"reflect", "edge", "wrap"}) {
    for (int threads : {1, 2}) {
      for (const auto& [shape, p] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
               {{3, 5}, {1, 2, 1, 2}},
               {{2, 4, 6}, {0, 3, 9, 1, 2, 7}},
               {{4, 6}, {2, -2, 1, 3}},
               {{1, 1, 512}, {0, 0, 64, 0, 0, 64}},
               {{2, 7, 5, 3}, {0, 1, 2, 0, 0, 2, 1, 0}},
               {{1, 32, 40, 40}, {0, 0, 3, 3, 0, 0, 3, 3}}}) {
        SCOPED_TRACE(std::string(mode) + " " + shape_str(shape));
        const auto r = OracleOp("Pad", 19)
                           .attr("mode", std::string(mode))
                           .threads(threads)
                           .random(shape)
                           .input(pads(p))
                           .check(0, 0);
        EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
      }
    }
  }
}

TEST(FastPad, OtherDtypesAreTheReferenceKernels) {
  const Tensor i = Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4});
  auto r = OracleOp("Pad", 13).input(i).input(pads({1, 1, 1, 1})).check();
  EXPECT_NE(r.impl.rfind("fast:", 0), 0u) << r.impl;
  r = OracleOp("Pad", 13)
          .attr("mode", std::string("edge"))
          .input(i)
          .input(pads({1, 1, 1, 1}))
          .check();
  EXPECT_NE(r.impl.rfind("fast:", 0), 0u) << r.impl;
}

TEST(FastPad, BadPadsAreTheReferenceKernelsError) {
  auto short_pads = OracleOp("Pad", 13).random({3, 5}).input(pads({1, 1, 1}));
  EXPECT_THROW(short_pads.check(), Error);
  auto over_crop = OracleOp("Pad", 13).random({3, 5}).input(pads({0, -4, 0, -2}));
  EXPECT_THROW(over_crop.check(), Error);
  auto bad_fill = OracleOp("Pad", 13)
                      .random({3, 5})
                      .input(pads({0, 1, 0, 1}))
                      .input(Tensor::from_vector<float>({2}, {1, 2}));
  EXPECT_THROW(bad_fill.check(), Error);
}

}  // namespace
}  // namespace polyinfer
