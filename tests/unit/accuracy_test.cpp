// ErrorStats (core/accuracy.h): the figures `compare` reports, on hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>

#include "core/accuracy.h"

namespace polyinfer {
namespace {

TEST(ErrorStats, ErrorsCosineAndSnrOverSamples) {
  ErrorStats s;
  s.add(Tensor::from_vector<float>({4}, {1, 2, 3, 5}),
        Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  s.add(Tensor::from_vector<float>({4}, {0, 0, 0, 0}),
        Tensor::from_vector<float>({4}, {0, 0, 0, 2}));
  EXPECT_EQ(s.samples(), 2);
  EXPECT_EQ(s.elements(), 8);
  EXPECT_DOUBLE_EQ(s.max_abs(), 2);
  EXPECT_DOUBLE_EQ(s.mean_abs(), 3.0 / 8);
  // got = (1,2,3,5,0,0,0,0), ref = (1,2,3,4,0,0,0,2): dot 34, |got|² 39, |ref|² 34.
  EXPECT_NEAR(s.cosine(), 34 / std::sqrt(39.0 * 34.0), 1e-12);
  // Σ ref² = 34, Σ err² = 1 + 4 = 5.
  EXPECT_NEAR(s.snr_db(), 10 * std::log10(34.0 / 5.0), 1e-12);
  EXPECT_NEAR(s.relative_rms(), std::sqrt(5.0 / 34.0), 1e-12);
  // Rank-1 outputs of >= 2 values count as scores: top class 3 in both, then 0 against 3.
  EXPECT_DOUBLE_EQ(s.top1(), 0.5);
}

TEST(ErrorStats, TopKAgreementOnScoreRows) {
  ErrorStats s;
  // Row 0: same top-1 (class 2). Row 1: ref's top class 0 is second in got (top-5 yes, top-1 no).
  s.add(Tensor::from_vector<float>({2, 6}, {0, 1, 9, 2, 3, 4, /**/ 5, 0, 0, 0, 0, 6}),
        Tensor::from_vector<float>({2, 6}, {0, 1, 8, 2, 3, 4, /**/ 7, 1, 1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(s.top1(), 0.5);
  EXPECT_DOUBLE_EQ(s.top5(), 1.0);
}

TEST(ErrorStats, IdenticalIsInfiniteSnrAndNonFiniteIsCounted) {
  ErrorStats s;
  s.add(Tensor::from_vector<float>({3}, {1, 2, 3}), Tensor::from_vector<float>({3}, {1, 2, 3}));
  EXPECT_TRUE(std::isinf(s.snr_db()));
  EXPECT_DOUBLE_EQ(s.relative_rms(), 0);
  EXPECT_DOUBLE_EQ(s.cosine(), 1);
  s.add(Tensor::from_vector<float>({3}, {NAN, 2, 3}), Tensor::from_vector<float>({3}, {1, 2, 3}));
  EXPECT_EQ(s.non_finite(), 1);
  // NaN in either side never turns the figures into NaN, and NaN scores rank last.
  s.add(Tensor::from_vector<float>({3}, {NAN, NAN, 3}),
        Tensor::from_vector<float>({3}, {NAN, 2, 3}));
  EXPECT_EQ(s.non_finite(), 2);
  EXPECT_FALSE(std::isnan(s.cosine()));
  EXPECT_FALSE(std::isnan(s.snr_db()));
  EXPECT_DOUBLE_EQ(s.top1(), 1.0);  // class 2 in every sample, NaN scores notwithstanding
  EXPECT_THROW(
      s.add(Tensor::from_vector<float>({2}, {1, 2}), Tensor::from_vector<float>({3}, {1, 2, 3})),
      Error);
}

}  // namespace
}  // namespace polyinfer
