// Fast Cast (src/providers/cpu/fast/cast.cpp) against the reference kernel: integers to float32
// exactly (int32 values past 2^24 round the same way), other casts on the reference kernel.
#include <gtest/gtest.h>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

TEST(FastCast, IntegersToFloat) {
  std::vector<int32_t> v(70001);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i * 2654435761u);
  auto r = OracleOp("Cast", 13)
               .attr("to", int64_t{1})
               .input(Tensor::from_vector<int32_t>({70001}, v))
               .threads(2)
               .check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  std::vector<uint8_t> b(300);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i);
  r = OracleOp("Cast", 13)
          .attr("to", int64_t{1})
          .input(Tensor::from_vector<uint8_t>({300}, b))
          .check(0, 0);
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
}

TEST(FastCast, OtherSourcesAndTargetsAreTheReferenceKernels) {
  auto r = OracleOp("Cast", 13)
               .attr("to", int64_t{1})
               .input(Tensor::from_vector<int64_t>({3}, {1, -2, 1LL << 40}))
               .check(0, 0);
  EXPECT_EQ(r.impl, "reference (fast path declined)");
  r = OracleOp("Cast", 13).attr("to", int64_t{7}).random({5}).check();
  EXPECT_EQ(r.impl, "reference");
}

}  // namespace
}  // namespace polyinfer
