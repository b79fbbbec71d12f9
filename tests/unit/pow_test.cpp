// The reference Pow over mixed base/exponent dtypes (opset 15: the exponent's dtype is free),
// checked against values worked out by hand: integer powers exact and wrapping, negative integer
// exponents truncating, float16/double exponents through std::pow.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model_builder.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

// ONNX TensorProto element types.
constexpr int kFloat = 1, kUint8 = 2, kInt8 = 3, kInt16 = 5, kInt32 = 6, kInt64 = 7, kFloat16 = 10,
              kDouble = 11, kUint64 = 13, kBfloat16 = 16;

template <class T, class E>
std::vector<double> run_pow(int base_elem, int exp_elem, const std::vector<T>& base,
                            const std::vector<E>& exp) {
  const int64_t n = static_cast<int64_t>(base.size());
  test::ModelBuilder b(15);
  b.input("x", {n}, base_elem).input("e", {n}, exp_elem).output("y", {n}, base_elem);
  b.node("Pow", {"x", "e"}, {"y"}, "pow");
  const std::string bytes = b.bytes();
  SessionOptions opts;
  opts.providers = {"cpu-ref"};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), opts);
  const Tensor y =
      s.run({{"x", Tensor::from_vector<T>({n}, base)}, {"e", Tensor::from_vector<E>({n}, exp)}})[0]
          .tensor();
  std::vector<double> out;
  for (const T& v : y.to_vector<T>()) out.push_back(static_cast<double>(static_cast<float>(v)));
  return out;
}

TEST(ReferencePow, SignedIntegerExponents) {
  // (-1)^-3 = -1, 2^3, 3^-1 truncates to 0, (-2)^2, 1^-7 = 1.
  EXPECT_EQ((run_pow<int8_t, int8_t>(kInt8, kInt8, {-1, 2, 3, -2, 1}, {-3, 3, -1, 2, -7})),
            (std::vector<double>{-1, 8, 0, 4, 1}));
  // bfloat16 base, int16 exponent: through std::pow.
  EXPECT_EQ((run_pow<BFloat16, int16_t>(kBfloat16, kInt16, {2.f, 4.f, -3.f}, {-1, 3, 2})),
            (std::vector<double>{0.5, 64, 9}));
}

TEST(ReferencePow, UnsignedExponentsBeyondInt64) {
  const uint64_t huge = UINT64_MAX;
  // 0^huge = 0, 1^huge = 1; 2^31 wraps int32 to INT32_MIN; 3^4.
  EXPECT_EQ((run_pow<int32_t, uint64_t>(kInt32, kUint64, {0, 1, 2, 3}, {huge, huge, 31, 4})),
            (std::vector<double>{0, 1, static_cast<double>(INT32_MIN), 81}));
}

TEST(ReferencePow, FloatingExponents) {
  const auto f = run_pow<float, Float16>(kFloat, kFloat16, {2.f, 9.f, -8.f},
                                         {Float16(0.5f), Float16(0.5f), Float16(3.f)});
  ASSERT_EQ(f.size(), 3u);
  EXPECT_FLOAT_EQ(f[0], std::sqrt(2.f));
  EXPECT_EQ(f[1], 3);
  EXPECT_EQ(f[2], -512);
  // Integer bases with float exponents are computed in double and saturated.
  EXPECT_EQ((run_pow<int64_t, double>(kInt64, kDouble, {2, -3, 10}, {3.0, 2.0, 0.5})),
            (std::vector<double>{8, 9, 3}));
  EXPECT_EQ((run_pow<uint8_t, float>(kUint8, kFloat, {2, 255, 16}, {7.f, 1.f, 2.f})),
            (std::vector<double>{128, 255, 255}));
}

}  // namespace
}  // namespace polyinfer
