// The fast Softmax/LogSoftmax kernels (src/providers/cpu/fast/softmax.cpp) against the reference
// ones: last axis at opset 13, the 2-D coercion of opsets below 13, odd row lengths, threading.
#include <gtest/gtest.h>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

const std::vector<Shape> kShapes = {
    {1}, {7}, {3, 17}, {2, 5, 33}, {4, 1003}, {2, 12, 64, 129}, {1000 + 3, 7}};

class FastSoftmax : public ::testing::TestWithParam<const char*> {};

TEST_P(FastSoftmax, LastAxisAtOpset13) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(shape_str(s));
    const auto r = OracleOp(GetParam(), 13).random(s, -20.0f, 20.0f).check(1e-6, 1e-5);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
  }
}

TEST_P(FastSoftmax, CoercedTo2DBeforeOpset13) {
  for (int64_t axis : {0, 1, 2, -1}) {
    SCOPED_TRACE(axis);
    const auto r =
        OracleOp(GetParam(), 11).attr("axis", axis).random({3, 5, 129}).check(1e-6, 1e-5);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
  }
}

TEST_P(FastSoftmax, AnyAxisAtOpset13) {
  struct Case {
    Shape shape;
    int64_t axis;
  };
  // Middle and first axes, negative ones, inner sizes below, at and past a block of columns,
  // a YOLO head's [1, 4, 16, 8400] along the 16 bins, an axis of one, an empty tensor.
  for (const Case& c : std::vector<Case>{{{3, 5, 7}, 1},
                                         {{3, 5, 7}, 0},
                                         {{3, 5, 7}, -2},
                                         {{2, 9, 1}, 1},
                                         {{2, 3, 257}, -2},
                                         {{4, 33, 600}, 1},
                                         {{1, 4, 16, 8400}, 2},
                                         {{2, 1, 31}, 1},
                                         {{2, 0, 3}, 0}}) {
    SCOPED_TRACE(shape_str(c.shape) + " axis " + std::to_string(c.axis));
    for (int threads : {1, 3}) {
      const auto r = OracleOp(GetParam(), 13)
                         .attr("axis", c.axis)
                         .random(c.shape, -20.0f, 20.0f)
                         .threads(threads)
                         .check(1e-6, 1e-5);
      EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
    }
  }
  // Masked columns along a middle axis: -inf entries give exactly 0 / -inf.
  const float ninf = -INFINITY;
  const Tensor x = Tensor::from_vector<float>(
      {1, 3, 4}, {0.5f, ninf, 1.5f, ninf, ninf, ninf, ninf, 2.0f, -1e4f, 0.0f, -1e4f, 3.0f});
  OracleOp(GetParam(), 13).attr("axis", int64_t{1}).input(x).check(1e-6, 1e-5);
  // A bad axis is the reference kernel's error.
  EXPECT_THROW(OracleOp(GetParam(), 13).attr("axis", int64_t{3}).random({3, 5, 7}).check(), Error);
}

TEST_P(FastSoftmax, LargeLogitsDoNotOverflow) {
  const Tensor x =
      Tensor::from_vector<float>({2, 3}, {1000.0f, 999.0f, -1000.0f, 88.0f, 89.0f, 90.0f});
  OracleOp(GetParam(), 13).input(x).check(1e-6, 1e-5);
}

TEST_P(FastSoftmax, MaskedEntriesOfMinusInfinity) {
  // Attention masks: -inf (or a large negative) entries must give exactly 0 / -inf.
  const float ninf = -INFINITY;
  const Tensor x = Tensor::from_vector<float>(
      {3, 4}, {0.5f, ninf, 1.5f, ninf, ninf, ninf, ninf, 2.0f, -1e4f, 0.0f, -1e4f, 3.0f});
  OracleOp(GetParam(), 13).input(x).check(1e-6, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Ops, FastSoftmax, ::testing::Values("Softmax", "LogSoftmax"));

}  // namespace
}  // namespace polyinfer
