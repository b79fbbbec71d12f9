#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "polyinfer/dtype.h"

namespace polyinfer {

TEST(Float16, RoundTripsExactValues) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f})
    EXPECT_EQ(static_cast<float>(Float16(f)), f) << f;
}

TEST(Float16, RoundsToNearestEvenAndSaturatesToInf) {
  EXPECT_EQ(Float16(1.0f + 1.0f / 2048).bits, Float16(1.0f).bits);  // tie → even
  EXPECT_EQ(Float16(1.0f + 3.0f / 2048).bits, Float16(1.0f + 2.0f / 1024).bits);
  EXPECT_TRUE(std::isinf(static_cast<float>(Float16(70000.0f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(Float16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Float16, MatchesAllBitPatternsThroughFloat) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = Float16::to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(Float16::from_float(f), h) << std::hex << h;
  }
}

TEST(BFloat16, TruncatesWithRounding) {
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f)), 1.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(3.14159f)), 3.140625f);
}

}  // namespace polyinfer
