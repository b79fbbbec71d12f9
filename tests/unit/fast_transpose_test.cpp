// The fast Transpose kernel (src/providers/cpu/fast/transpose.cpp) against the reference one:
// the common layout permutations, odd extents that leave partial tiles, extent-1 dims, 8-byte
// elements, and the types and permutations it hands to the reference kernel.
#include <gtest/gtest.h>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

struct TransposeCase {
  Shape shape;
  std::vector<int64_t> perm;  // empty: the default (reversed) permutation
};

const std::vector<TransposeCase> kCases = {
    {{7, 33}, {1, 0}},                    // last-two swap, partial tiles
    {{3, 17, 33}, {0, 2, 1}},             // batched last-two swap
    {{2, 17, 7, 5}, {0, 2, 3, 1}},        // NCHW -> NHWC
    {{2, 7, 5, 17}, {0, 3, 1, 2}},        // NHWC -> NCHW
    {{2, 9, 12, 64}, {0, 2, 1, 3}},       // [B,S,H,D] -> [B,H,S,D]: contiguous rows
    {{2, 12, 9, 64}, {0, 2, 1, 3}},       // and back
    {{2, 12, 9, 64}, {0, 1, 3, 2}},       // K^T in attention
    {{5, 1, 7, 1, 3}, {4, 3, 2, 1, 0}},   // extent-1 dims dropped
    {{4, 5, 6}, {}},                      // default perm
    {{1, 1, 1}, {2, 0, 1}},               // all ones
    {{13, 1}, {1, 0}},                    // identity in disguise
    {{0, 3}, {1, 0}},                     // empty
    {{1, 5, 7, 2, 29}, {0, 1, 2, 4, 3}},  // channel shuffle in NHWC: 2 rows interleaved
    {{2, 3, 3, 3, 31}, {0, 1, 2, 4, 3}},  // 3 rows
    {{2, 3, 4, 4, 9}, {0, 1, 2, 4, 3}},   // 4 rows
    {{64, 40, 2, 116}, {0, 1, 3, 2}},     // interleave split over threads
    {{3, 5, 7, 2, 4}, {2, 0, 4, 1, 3}},   // arbitrary rank 5
    {{64, 1000 + 3}, {1, 0}},             // threaded tiles
    {{8, 96, 7, 7}, {0, 2, 3, 1}},        // threaded NCHW -> NHWC
    {{2, 3, 61, 103}, {0, 2, 3, 1}},      // RGB planes -> pixels, a batch cut in pieces
};

TEST(FastTranspose, MatchesReference) {
  for (const TransposeCase& c : kCases) {
    SCOPED_TRACE(shape_str(c.shape));
    auto op = OracleOp("Transpose", 13).random(c.shape);
    if (!c.perm.empty()) op.attr("perm", c.perm);
    EXPECT_EQ(op.check(0, 0).impl.rfind("fast:", 0), 0u);
  }
}

TEST(FastTranspose, EightByteElements) {
  std::vector<int64_t> v(3 * 5 * 7);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i) * 1000003;
  const auto r = OracleOp("Transpose", 13)
                     .input(Tensor::from_vector<int64_t>({3, 5, 7}, v))
                     .attr("perm", std::vector<int64_t>{2, 0, 1})
                     .check();
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u);
}

TEST(FastTranspose, OneByteElements) {
  // The 8-bit activations of a quantized model entering the channels-last layout (NCHW → NHWC),
  // odd sizes so tiles have tails.
  std::vector<uint8_t> v(2 * 37 * 9 * 11);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i * 7 + i / 13);
  for (const auto& perm : {std::vector<int64_t>{0, 2, 3, 1}, std::vector<int64_t>{3, 1, 0, 2}}) {
    const auto r = OracleOp("Transpose", 13)
                       .input(Tensor::from_vector<uint8_t>({2, 37, 9, 11}, v))
                       .attr("perm", perm)
                       .threads(2)
                       .check();
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  }
}

TEST(FastTranspose, BadPermIsTheReferenceKernelsError) {
  auto op = OracleOp("Transpose", 13).random({2, 3}).attr("perm", std::vector<int64_t>{0, 0});
  EXPECT_THROW(op.check(), Error);
}

}  // namespace
}  // namespace polyinfer
