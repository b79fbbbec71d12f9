// The fast LayerNormalization kernel (src/providers/cpu/fast/layer_norm.cpp) against the
// reference one: hidden sizes with tails, axis other than last, optional bias and statistics
// outputs, the ai.polyinfer form, and the broadcasts it hands back to the reference kernel.
#include <gtest/gtest.h>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

TEST(FastLayerNorm, MatchesReferenceOverRowLengths) {
  for (int64_t h : {1, 7, 17, 33, 768, 1000 + 3}) {
    SCOPED_TRACE(h);
    const auto r = OracleOp("LayerNormalization", 17)
                       .random({2, 9, h}, -4.0f, 6.0f)
                       .random({h})
                       .random({h})
                       .check(2e-5, 1e-4);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
  }
}

TEST(FastLayerNorm, AxisBeforeLastNoBiasStatisticsAndThreads) {
  const auto r = OracleOp("LayerNormalization", 17)
                     .attr("axis", int64_t{-2})
                     .attr("epsilon", 1e-3f)
                     .random({64, 5, 77})
                     .random({5, 77})
                     .outputs(3)
                     .check(2e-5, 1e-4);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
}

TEST(FastLayerNorm, ConstantRowsHaveZeroVariance) {
  const Tensor x = Tensor::from_vector<float>({2, 5}, {3, 3, 3, 3, 3, -1, 0, 1, 2, 3});
  const auto r = OracleOp("LayerNormalization", 17)
                     .input(x)
                     .random({5})
                     .random({5})
                     .outputs(3)
                     .check(2e-5, 1e-4);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
}

TEST(FastLayerNorm, PolyinferDomainFormRunsTheSameKernel) {
  const auto r = OracleOp("LayerNormalization", 1, "ai.polyinfer")
                     .reference_as("LayerNormalization", 17)
                     .random({3, 4, 768})
                     .random({768})
                     .random({768})
                     .check(2e-5, 1e-4);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
}

TEST(FastLayerNorm, BroadcastScaleAndDoubleStashGoToTheReference) {
  // A scale broadcast within the row is valid ONNX but not the fast path's layout.
  OracleOp("LayerNormalization", 17)
      .attr("axis", int64_t{1})
      .random({3, 4, 5})
      .random({1, 5})
      .check(2e-5, 1e-4);
  const auto r = OracleOp("LayerNormalization", 17)
                     .attr("stash_type", int64_t{11})
                     .random({3, 8})
                     .random({8})
                     .check(2e-5, 1e-4);
  EXPECT_EQ(r.impl, "reference");
}

}  // namespace
}  // namespace polyinfer
