// The fast Concat and Gather kernels (src/providers/cpu/fast/concat.cpp, gather.cpp) against the
// reference ones: every axis, empty pieces, other dtypes, negative indices, threading, errors.
#include <gtest/gtest.h>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

TEST(FastConcat, EveryAxisAndEmptyPieces) {
  for (int64_t axis : {0, 1, 2, -1}) {
    SCOPED_TRACE(axis);
    const int64_t a = axis < 0 ? 2 : axis;
    Shape s1 = {3, 5, 7}, s2 = s1, s3 = s1;
    s2[a] = 1;
    s3[a] = 0;
    EXPECT_EQ(OracleOp("Concat", 13)
                  .attr("axis", axis)
                  .random(s1)
                  .random(s2)
                  .random(s3)
                  .random(s1)
                  .check(0, 0)
                  .impl.rfind("fast:", 0),
              0u);
  }
  // Large enough to be split over threads.
  EXPECT_EQ(OracleOp("Concat", 13)
                .attr("axis", int64_t{1})
                .random({16, 300, 33})
                .random({16, 17, 33})
                .check(0, 0)
                .impl.rfind("fast:", 0),
            0u);
  const Tensor i = Tensor::from_vector<int64_t>({2}, {1, 2});
  EXPECT_EQ(OracleOp("Concat", 13)
                .attr("axis", int64_t{0})
                .input(i)
                .input(i)
                .check()
                .impl.rfind("fast:", 0),
            0u);
}

// A few bytes per input and row (concat.cpp's scattered rows): eight [2, 40, 33, 1] stacked
// along the last axis (basic_pitch's harmonic stacking; 2640 rows, several blocks, threads),
// mixed piece widths, 1-, 3- and 8-byte pieces, an empty piece.
TEST(FastConcat, SmallPiecesPerRow) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    OracleOp stack("Concat", 13);
    stack.attr("axis", int64_t{-1}).threads(threads);
    for (int i = 0; i < 8; ++i) stack.random({2, 40, 33, 1});
    EXPECT_EQ(stack.check(0, 0).impl.rfind("fast:", 0), 0u);
    EXPECT_EQ(OracleOp("Concat", 13)
                  .attr("axis", int64_t{2})
                  .threads(threads)
                  .random({3, 700, 1})
                  .random({3, 700, 2})
                  .random({3, 700, 0})
                  .random({3, 700, 4})
                  .check(0, 0)
                  .impl.rfind("fast:", 0),
              0u);
  }
  std::vector<int8_t> b(1500 * 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>(i * 7);
  const Tensor bytes = Tensor::from_vector<int8_t>({1500, 3}, b);
  const Tensor one =
      Tensor::from_vector<int8_t>({1500, 1}, std::vector<int8_t>(b.begin(), b.begin() + 1500));
  EXPECT_EQ(OracleOp("Concat", 13)
                .attr("axis", int64_t{1})
                .input(bytes)
                .input(one)
                .input(bytes)
                .check(0, 0)
                .impl.rfind("fast:", 0),
            0u);
  std::vector<int64_t> l(2000);
  for (size_t i = 0; i < l.size(); ++i) l[i] = static_cast<int64_t>(i) * 1000003;
  const Tensor longs = Tensor::from_vector<int64_t>({2000, 1}, l);
  EXPECT_EQ(OracleOp("Concat", 13)
                .attr("axis", int64_t{1})
                .input(longs)
                .input(longs)
                .check(0, 0)
                .impl.rfind("fast:", 0),
            0u);
}

TEST(FastConcat, MismatchedShapesAreTheReferenceKernelsError) {
  auto op = OracleOp("Concat", 13).attr("axis", int64_t{0}).random({2, 3}).random({2, 4});
  EXPECT_THROW(op.check(), Error);
}

TEST(FastGather, EmbeddingRowsAndOtherAxes) {
  const Tensor ids = Tensor::from_vector<int64_t>({2, 3}, {0, 999, -1, 5, 5, 17});
  EXPECT_EQ(
      OracleOp("Gather", 13).random({1000, 768}).input(ids).check(0, 0).impl.rfind("fast:", 0), 0u);
  const Tensor ids32 = Tensor::from_vector<int32_t>({4}, {3, 0, -2, 1});
  for (int64_t axis : {0, 1, 2, -1}) {
    SCOPED_TRACE(axis);
    EXPECT_EQ(OracleOp("Gather", 13)
                  .attr("axis", axis)
                  .random({5, 6, 7})
                  .input(ids32)
                  .check(0, 0)
                  .impl.rfind("fast:", 0),
              0u);
  }
  // A scalar index drops the axis.
  EXPECT_EQ(OracleOp("Gather", 13)
                .random({9, 33})
                .input(Tensor::scalar<int64_t>(4))
                .check(0, 0)
                .impl.rfind("fast:", 0),
            0u);
  // Many rows: split over threads.
  std::vector<int64_t> many(4096);
  for (size_t k = 0; k < many.size(); ++k) many[k] = static_cast<int64_t>((k * 7919) % 1000);
  EXPECT_EQ(OracleOp("Gather", 13)
                .random({1000, 64})
                .input(Tensor::from_vector<int64_t>({4096}, many))
                .check(0, 0)
                .impl.rfind("fast:", 0),
            0u);
}

TEST(FastGather, OutOfRangeIndexIsTheReferenceKernelsError) {
  auto op = OracleOp("Gather", 13).random({4, 3}).input(Tensor::from_vector<int64_t>({1}, {4}));
  EXPECT_THROW(op.check(), Error);
}

}  // namespace
}  // namespace polyinfer
