// The fast BatchNormalization kernel (src/providers/cpu/fast/batch_norm.cpp) against the
// reference one over plane sizes with tails and threading, and its refusals.
#include <gtest/gtest.h>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

TEST(FastBatchNorm, MatchesReference) {
  for (const Shape& s : std::vector<Shape>{
           {1, 1}, {2, 7}, {2, 17, 7, 5}, {3, 33, 1, 1}, {8, 64, 17, 17}, {1, 5, 1000 + 3}}) {
    SCOPED_TRACE(shape_str(s));
    const int64_t c = s[1];
    const auto r = OracleOp("BatchNormalization", 15)
                       .random(s)
                       .random({c})
                       .random({c})
                       .random({c})
                       .random({c}, 0.1f, 3.0f)  // variance
                       .attr("epsilon", 1e-3f)
                       .check(1e-5, 1e-5);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
  }
}

TEST(FastBatchNorm, LegacyOpsetAndBadShapesGoToTheReference) {
  EXPECT_EQ(OracleOp("BatchNormalization", 6)
                .attr("is_test", int64_t{1})
                .random({2, 3, 4})
                .random({3})
                .random({3})
                .random({3})
                .random({3}, 0.1f, 2.0f)
                .check(1e-5, 1e-5)
                .impl,
            "reference");
  auto bad = OracleOp("BatchNormalization", 15)
                 .random({2, 3, 4})
                 .random({4})
                 .random({3})
                 .random({3})
                 .random({3}, 0.1f, 2.0f);
  EXPECT_THROW(bad.check(), Error);
}

}  // namespace
}  // namespace polyinfer
