// The fast ReduceSum/ReduceMean kernels (src/providers/cpu/fast/reduce.cpp) against the
// reference ones: trailing-axis sets of every opset form, any other axis set, keepdims both
// ways, threading, long cancelling sums, and the empty reductions they hand to the reference.
#include <gtest/gtest.h>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

struct ReduceCase {
  Shape shape;
  std::vector<int64_t> axes;  // empty: all axes
};

const std::vector<ReduceCase> kTrailing = {
    {{7}, {0}},      {{3, 17}, {-1}},        {{2, 9, 768}, {2}},         {{2, 17, 7, 5}, {2, 3}},
    {{4, 5, 6}, {}}, {{1000 + 3, 33}, {-1}}, {{2, 3, 1000 + 3}, {1, 2}},
};

class FastReduce : public ::testing::TestWithParam<const char*> {};

TEST_P(FastReduce, TrailingAxesAsAttributeAndAsInput) {
  const std::string op = GetParam();
  // The last opset with axes as an attribute, and the first with axes as an input.
  const int attr_opset = op == "ReduceSum" ? 11 : 13, input_opset = op == "ReduceSum" ? 13 : 18;
  for (const ReduceCase& c : kTrailing)
    for (int64_t keep : {0, 1}) {
      SCOPED_TRACE(shape_str(c.shape) + " keepdims " + std::to_string(keep));
      auto a = OracleOp(op, attr_opset).attr("keepdims", keep).random(c.shape);
      if (!c.axes.empty()) a.attr("axes", c.axes);
      EXPECT_EQ(a.check(1e-6, 1e-5).impl.rfind("fast:", 0), 0u);
      auto b = OracleOp(op, input_opset).attr("keepdims", keep).random(c.shape);
      if (!c.axes.empty())
        b.input(Tensor::from_vector<int64_t>({static_cast<int64_t>(c.axes.size())}, c.axes));
      EXPECT_EQ(b.check(1e-6, 1e-5).impl.rfind("fast:", 0), 0u);
    }
}

TEST_P(FastReduce, AnyAxisSet) {
  const std::string op = GetParam();
  const int opset = op == "ReduceSum" ? 11 : 13;
  // Middle axes, leading axes, non-adjacent ones, negative ones, extents of one among them,
  // kept inner rows below, at and past a block of columns, and threaded.
  const std::vector<ReduceCase> cases = {
      {{3, 4, 5}, {1}},          {{3, 4, 5}, {0}},       {{3, 4, 5}, {0, 2}},
      {{3, 4, 5}, {-2}},         {{2, 3, 4, 5}, {0, 2}}, {{2, 3, 4, 5}, {1, 3}},
      {{2, 1, 4, 1, 5}, {1, 2}}, {{4, 1, 3}, {1}},       {{2, 200, 1029}, {1}},
      {{64, 300, 9}, {1}},       {{300, 2, 70}, {0, 1}}, {{1, 128, 384}, {1}},
  };
  for (const ReduceCase& c : cases)
    for (int64_t keep : {0, 1}) {
      SCOPED_TRACE(shape_str(c.shape) + " keepdims " + std::to_string(keep));
      const auto r = OracleOp(op, opset)
                         .attr("keepdims", keep)
                         .attr("axes", c.axes)
                         .random(c.shape)
                         .threads(3)
                         .check(1e-6, 1e-6);
      EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
    }
}

// Sums in double, as the reference's: long sums that cancel give the reference's float.
TEST_P(FastReduce, LongCancellingSumsMatchTheReference) {
  std::vector<float> v(3 * 20000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 2 ? -1.0f : 1.0f) * (1e4f + 0.1f * (i % 97));
  const auto r = OracleOp(GetParam(), GetParam() == std::string("ReduceSum") ? 11 : 13)
                     .attr("axes", std::vector<int64_t>{1})
                     .input(Tensor::from_vector<float>({3, 20000, 1}, v))
                     .check(0, 1e-7);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
}

TEST_P(FastReduce, EmptyReductionsFallBackAtRunTime) {
  const std::string op = GetParam();
  const int opset = op == "ReduceSum" ? 11 : 13;
  EXPECT_EQ(OracleOp(op, opset)
                .attr("axes", std::vector<int64_t>{1})
                .random({3, 0})
                .check(1e-6, 1e-5)
                .impl,
            "reference (fast path declined)");
  EXPECT_EQ(OracleOp(op, opset)
                .attr("axes", std::vector<int64_t>{0})
                .random({0, 3})
                .check(1e-6, 1e-5)
                .impl,
            "reference (fast path declined)");
}

INSTANTIATE_TEST_SUITE_P(Ops, FastReduce, ::testing::Values("ReduceSum", "ReduceMean"));

}  // namespace
}  // namespace polyinfer
