// Fast QuantizeLinear / DequantizeLinear / ai.polyinfer QLinearAdd (src/providers/cpu/fast/
// quantize.cpp) against the
// reference kernels: equal results (integer outputs exactly; dequantized floats too, since both
// compute float(q - zp) * s), per tensor and per axis, both 8-bit types, and the fast path ran.
#include <gtest/gtest.h>

#include <limits>

#include "model_builder.h"
#include "oracle.h"
#include "providers/cpu/onednn/onednn.h"

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
    const Tensor zp =
        s8 ? Tensor::from_vector<int8_t>({}, {-3}) : Tensor::from_vector<uint8_t>({}, {128});
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

TEST(FastInt8MaxPool, MatchesTheReferenceExactly) {
  // Max pooling on 8-bit values (fast/pool.cpp), NCHW, with padding and a ceil-mode window past
  // the input.
  for (bool s8 : {false, true}) {
    auto r = OracleOp("MaxPool", 12)
                 .input(bytes_of({2, 5, 11, 10}, s8, 9))
                 .attr("kernel_shape", std::vector<int64_t>{3, 3})
                 .attr("strides", std::vector<int64_t>{2, 2})
                 .attr("pads", std::vector<int64_t>{1, 1, 0, 0})
                 .attr("ceil_mode", int64_t{1})
                 .check();
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  }
}

TEST(FastDynamicQuantize, MatchesTheReferenceExactly) {
  // Mixed signs, all positive (range still includes 0), all zero (scale 0), large (threads).
  for (auto [lo, hi] : {std::pair{-3.f, 2.f}, std::pair{0.5f, 4.f}, std::pair{0.f, 0.f}}) {
    auto r = OracleOp("DynamicQuantizeLinear", 11)
                 .random({3, 50001}, lo, hi)
                 .outputs(3)
                 .threads(2)
                 .check(0, 0);
    EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  }
}

TEST(OnednnMatMulInteger, MatchesTheReferenceExactly) {
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8 A" : "uint8 A");
    test::ModelBuilder m(13);
    m.input("a", {2, 7, 48}, s8 ? 3 : 2).input("za", {}, s8 ? 3 : 2).output("y", {}, 6);
    std::mt19937 gen(3);
    // 8-bit weights: where oneDNN's products are not exact (no VNNI) the default choice takes
    // their exact form (onednn/qlinear.cpp, int8_exact_test.cpp).
    std::uniform_int_distribution<int> d(-127, 127);
    std::vector<int32_t> w(48 * 33);
    for (auto& v : w) v = d(gen);
    m.int_initializer("b", {48, 33}, 3, w);
    m.int_initializer("zb", {}, 3, {0});
    m.node("MatMulInteger", {"a", "b", "za", "zb"}, {"y"}, "mmi");
    const std::string bytes = m.bytes();
    SessionOptions fast, ref;
    fast.optimization_level = ref.optimization_level = 0;
    ref.providers = {"cpu-ref"};
    Session sf = Session::load_bytes(bytes.data(), bytes.size(), fast);
    Session sr = Session::load_bytes(bytes.data(), bytes.size(), ref);
    EXPECT_TRUE(sf.placement().notes.empty());
    for (int zp : {s8 ? -3 : 131, 0}) {
      const Tensor z = s8 ? Tensor::from_vector<int8_t>({}, {int8_t(zp)})
                          : Tensor::from_vector<uint8_t>({}, {uint8_t(zp)});
      std::map<std::string, Value> feed{{"a", bytes_of({2, 7, 48}, s8, 10)}, {"za", z}};
      EXPECT_EQ(sf.run(feed)[0].tensor().to_vector<int32_t>(),
                sr.run(feed)[0].tensor().to_vector<int32_t>());
    }
    EXPECT_EQ(sf.placement().nodes[0].impl.rfind("onednn", 0), 0u) << sf.placement().nodes[0].impl;
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
