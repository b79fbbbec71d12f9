// Fast QuantizeLinear / DequantizeLinear / ai.polyinfer QLinearAdd (src/providers/cpu/fast/
// quantize.cpp) against the
// reference kernels: equal results (integer outputs exactly; dequantized floats too, since both
// compute float(q - zp) * s), per tensor and per axis, both 8-bit types, and the fast path ran.
#include <gtest/gtest.h>

#include <limits>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

Tensor bytes_of(const Shape& shape, bool s8, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(s8 ? -128 : 0, s8 ? 127 : 255);
  std::vector<int> v(static_cast<size_t>(shape_numel(shape)));
  for (int& x : v) x = d(gen);
  if (s8) return Tensor::from_vector<int8_t>(shape, std::vector<int8_t>(v.begin(), v.end()));
  return Tensor::from_vector<uint8_t>(shape, std::vector<uint8_t>(v.begin(), v.end()));
}

TEST(FastQuantize, PerTensorAndPerAxisBothTypes) {
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8" : "uint8");
    const Tensor zp = s8 ? Tensor::from_vector<int8_t>({}, {-3})
                         : Tensor::from_vector<uint8_t>({}, {128});
    // Values spanning past the saturation bounds, and ties (x / s = k + 0.5).
    std::vector<float> x = test::random_tensor({2, 5, 7, 9}, 3, -4, 4).to_vector<float>();
    for (size_t i = 0; i < 20; ++i) x[i] = 0.02f * (float(i) - 10.f + 0.5f);
    x[21] = std::numeric_limits<float>::quiet_NaN();
    auto r = OracleOp("QuantizeLinear", 13)
                 .input(Tensor::from_vector<float>({2, 5, 7, 9}, x))
                 .input(Tensor::from_vector<float>({}, {0.02f}))
                 .input(zp)
                 .check();
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
    std::vector<float> scales{0.01f, 0.02f, 0.03f, 0.015f, 0.05f};
    const Tensor zps = s8 ? Tensor::from_vector<int8_t>({5}, {0, 1, -2, 3, -4})
                          : Tensor::from_vector<uint8_t>({5}, {0, 10, 128, 200, 255});
    r = OracleOp("QuantizeLinear", 13)
            .attr("axis", int64_t{1})
            .random({2, 5, 7, 9}, -4, 4)
            .input(Tensor::from_vector<float>({5}, scales))
            .input(zps)
            .threads(2)
            .check();
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
    r = OracleOp("DequantizeLinear", 13)
            .input(bytes_of({2, 5, 7, 9}, s8, 4))
            .input(Tensor::from_vector<float>({}, {0.02f}))
            .input(zp)
            .check(0, 0);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
    r = OracleOp("DequantizeLinear", 13)
            .attr("axis", int64_t{-3})
            .input(bytes_of({2, 5, 7, 9}, s8, 5))
            .input(Tensor::from_vector<float>({5}, scales))
            .input(zps)
            .threads(2)
            .check(0, 0);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  }
}

TEST(FastQuantize, NoZeroPointIsUint8AndInt32GoesToTheReference) {
  auto r = OracleOp("QuantizeLinear", 13)
               .random({3, 70000}, -2, 6)
               .input(Tensor::from_vector<float>({}, {0.02f}))
               .threads(2)
               .check();
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  r = OracleOp("DequantizeLinear", 13)
          .input(Tensor::from_vector<int32_t>({4}, {-70000, 0, 5, 1 << 20}))
          .input(Tensor::from_vector<float>({}, {0.5f}))
          .check(0, 0);
  EXPECT_EQ(r.impl, "reference (fast path declined)");
}

TEST(OnednnInt8MaxPool, MatchesTheReferenceExactly) {
  // oneDNN's max pooling on 8-bit values (onednn/pool.cpp), NCHW, with padding and a ceil-mode
  // window past the input.
  for (bool s8 : {false, true}) {
    auto r = OracleOp("MaxPool", 12)
                 .input(bytes_of({2, 5, 11, 10}, s8, 9))
                 .attr("kernel_shape", std::vector<int64_t>{3, 3})
                 .attr("strides", std::vector<int64_t>{2, 2})
                 .attr("pads", std::vector<int64_t>{1, 1, 0, 0})
                 .attr("ceil_mode", int64_t{1})
                 .check();
    EXPECT_EQ(r.impl.rfind("onednn", 0), 0u) << r.impl;
  }
}

TEST(FastQLinearAdd, MatchesTheReferenceExactly) {
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8" : "uint8");
    auto scalar = [&](int v) {
      return s8 ? Tensor::from_vector<int8_t>({}, {int8_t(v)})
                : Tensor::from_vector<uint8_t>({}, {uint8_t(v)});
    };
    auto r = OracleOp("QLinearAdd", 1, "ai.polyinfer")
                 .input(bytes_of({2, 7, 7, 33}, s8, 7))
                 .input(Tensor::from_vector<float>({}, {0.02f}))
                 .input(scalar(s8 ? 4 : 131))
                 .input(bytes_of({2, 7, 7, 33}, s8, 8))
                 .input(Tensor::from_vector<float>({}, {0.035f}))
                 .input(scalar(s8 ? -7 : 120))
                 .input(Tensor::from_vector<float>({}, {0.04f}))
                 .input(scalar(s8 ? 2 : 128))
                 .threads(2)
                 .check();
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  }
}

}  // namespace
}  // namespace polyinfer
