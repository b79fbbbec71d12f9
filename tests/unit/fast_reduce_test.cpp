// The fast ReduceSum/ReduceMean kernels (src/providers/cpu/fast/reduce.cpp) against the
// reference ones: trailing-axis sets of every opset form, keepdims both ways, threading, and the
// axis sets they hand to the reference kernel.
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

TEST_P(FastReduce, OtherAxisSetsAndEmptyReductionsFallBackAtRunTime) {
  const std::string op = GetParam();
  const int opset = op == "ReduceSum" ? 11 : 13;
  const std::string fell_back = "reference (fast path declined)";
  EXPECT_EQ(OracleOp(op, opset)
                .attr("axes", std::vector<int64_t>{1})
                .random({3, 4, 5})
                .check(1e-6, 1e-5)
                .impl,
            fell_back);
  EXPECT_EQ(OracleOp(op, opset)
                .attr("axes", std::vector<int64_t>{0, 2})
                .random({3, 4, 5})
                .check(1e-6, 1e-5)
                .impl,
            fell_back);
  EXPECT_EQ(OracleOp(op, opset)
                .attr("axes", std::vector<int64_t>{1})
                .random({3, 0})
                .check(1e-6, 1e-5)
                .impl,
            fell_back);
}

INSTANTIATE_TEST_SUITE_P(Ops, FastReduce, ::testing::Values("ReduceSum", "ReduceMean"));

}  // namespace
}  // namespace polyinfer
