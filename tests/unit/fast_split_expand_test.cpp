// The fast Split and Expand kernels (src/providers/cpu/fast/split_expand.cpp) against the
// reference ones: every axis (negative too), sizes from the attribute, the input and
// num_outputs, empty parts, element sizes of 1 to 8 bytes, threading, errors and strings.
#include <gtest/gtest.h>

#include "ops/shape_rules.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

Tensor ints(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

bool fast(const std::string& impl) { return impl.rfind("fast:", 0) == 0; }

TEST(FastSplit, EveryAxisAndEverySizeForm) {
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(axis);
    // Equal parts.
    EXPECT_TRUE(fast(
        OracleOp("Split", 13).attr("axis", axis).random({6, 6, 6}).outputs(3).check(0, 0).impl));
    // Sizes from the input (one empty part) and from the attribute (opset 11).
    EXPECT_TRUE(fast(OracleOp("Split", 13)
                         .attr("axis", axis)
                         .random({6, 6, 6})
                         .input(ints({1, 0, 5}))
                         .outputs(3)
                         .check(0, 0)
                         .impl));
    EXPECT_TRUE(fast(OracleOp("Split", 11)
                         .attr("axis", axis)
                         .attr("split", std::vector<int64_t>{4, 2})
                         .random({6, 6, 6})
                         .outputs(2)
                         .check(0, 0)
                         .impl));
  }
  // num_outputs with a smaller last part (opset 18), odd sizes.
  EXPECT_TRUE(fast(OracleOp("Split", 18)
                       .attr("axis", int64_t{1})
                       .attr("num_outputs", int64_t{3})
                       .random({3, 7, 5})
                       .outputs(3)
                       .check(0, 0)
                       .impl));
}

TEST(FastSplit, ThreadsOtherDtypesAndEmptyInputs) {
  EXPECT_TRUE(fast(OracleOp("Split", 13)
                       .attr("axis", int64_t{1})
                       .random({64, 300, 9})
                       .input(ints({100, 17, 183}))
                       .outputs(3)
                       .threads(3)
                       .check(0, 0)
                       .impl));
  EXPECT_TRUE(fast(OracleOp("Split", 13)
                       .attr("axis", int64_t{0})
                       .input(Tensor::from_vector<int64_t>({4}, {1, -2, 3, 1LL << 40}))
                       .outputs(2)
                       .check(0, 0)
                       .impl));
  EXPECT_TRUE(fast(OracleOp("Split", 13)
                       .attr("axis", int64_t{1})
                       .input(Tensor::from_vector<uint8_t>({2, 2}, {1, 2, 3, 4}))
                       .outputs(2)
                       .check(0, 0)
                       .impl));
  EXPECT_TRUE(fast(
      OracleOp("Split", 13).attr("axis", int64_t{1}).random({0, 4}).outputs(2).check(0, 0).impl));
}

TEST(FastSplit, BadSizesAreTheSharedErrors) {
  EXPECT_THROW(OracleOp("Split", 13).random({4, 6}).input(ints({1, 2})).outputs(2).check(0, 0),
               Error);
}

TEST(FastExpand, BroadcastPatternsAndElementSizes) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{1}, {7}},
      {{3, 1}, {3, 1003}},
      {{1, 5}, {4, 5}},
      {{}, {2, 3}},
      {{2, 1, 7}, {2, 6, 7}},
      {{1, 4, 1}, {3, 1, 1, 5}},
      {{3, 1}, {1}},
      {{5}, {0, 5}},
      {{1, 64, 1, 1}, {8, 64, 9, 9}},
      {{300, 1}, {300, 211}},
  };
  for (const auto& [x, s] : cases) {
    SCOPED_TRACE(shape_str(x) + " to " + int_list_str(s));
    EXPECT_TRUE(fast(OracleOp("Expand", 13).random(x).input(ints(s)).threads(3).check(0, 0).impl));
    const Tensor i = Tensor::from_vector<int64_t>(x, std::vector<int64_t>(shape_numel(x), -7));
    EXPECT_TRUE(fast(OracleOp("Expand", 13).input(i).input(ints(s)).check(0, 0).impl));
    EXPECT_TRUE(fast(OracleOp("Expand", 8).random_half(x).input(ints(s)).check(0, 0).impl));
    const Tensor u = Tensor::from_vector<uint8_t>(x, std::vector<uint8_t>(shape_numel(x), 9));
    EXPECT_TRUE(fast(OracleOp("Expand", 13).input(u).input(ints(s)).check(0, 0).impl));
  }
}

TEST(FastExpand, BadShapesAreTheSharedErrors) {
  EXPECT_THROW(OracleOp("Expand", 13).random({3, 4}).input(ints({5, 4})).check(0, 0), Error);
  EXPECT_THROW(OracleOp("Expand", 13).random({3, 4}).input(ints({-1, 4})).check(0, 0), Error);
}

}  // namespace
}  // namespace polyinfer
