// Fast Cast (src/providers/cpu/fast/cast.cpp) against the reference kernel: integers to float32
// exactly (int32 values past 2^24 round the same way), every pair among float32, int32, int64
// and bool with NaN, infinities and the saturation bounds, bool as bytes, other casts on the
// reference kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "oracle.h"
#include "oracle_exact.h"

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

Tensor bools(const std::vector<uint8_t>& v) {
  return Tensor::from_host(DType::Bool, {static_cast<int64_t>(v.size())}, v.data(), v.size());
}

// Every pair among float32, int32, int64 and bool, with the values the rules single out.
TEST(FastCast, AmongFloatIntsAndBool) {
  const float inf = INFINITY;
  std::vector<float> f = {
      0.0f,    -0.0f,    0.5f,          -0.5f,  1.99f,         -1.99f,         NAN,
      inf,     -inf,     3e9f,          -3e9f,  2147483520.0f, -2147483648.0f, 2147483648.0f,
      9.3e18f, -9.3e18f, 9.2233715e18f, 1e-40f, 16777217.0f};
  for (int i = 0; i < 1003; ++i) f.push_back(0.37f * static_cast<float>(i - 500));
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> l = {
      0,           1, -1, lo, hi, (1LL << 31), -(1LL << 31) - 1, (1LL << 53) + 1, (1LL << 24) + 1,
      4294967297LL};
  for (int i = 0; i < 1003; ++i) l.push_back((i - 500) * 7919LL);
  std::vector<int32_t> n = {0,
                            1,
                            -1,
                            std::numeric_limits<int32_t>::min(),
                            std::numeric_limits<int32_t>::max(),
                            (1 << 24) + 1};
  for (int i = 0; i < 1003; ++i) n.push_back((i - 500) * 7919);
  std::vector<uint8_t> b(1010);
  for (size_t i = 0; i < b.size(); ++i) b[i] = (i * 7 / 3) % 2;
  const std::vector<Tensor> inputs = {
      Tensor::from_vector<float>({static_cast<int64_t>(f.size())}, f),
      Tensor::from_vector<int64_t>({static_cast<int64_t>(l.size())}, l),
      Tensor::from_vector<int32_t>({static_cast<int64_t>(n.size())}, n), bools(b),
      Tensor::from_vector<int8_t>({3}, {-128, 0, 127})};
  for (const Tensor& x : inputs)
    for (int64_t to : {1, 6, 7, 9}) {
      SCOPED_TRACE(std::string(dtype_name(x.dtype())) + " to " + std::to_string(to));
      const std::string impl =
          test::check_bytes(OracleOp("Cast", 13).attr("to", to).input(x).threads(2), {x}, 2);
      EXPECT_EQ(impl.rfind("fast:", 0), 0u) << impl;
    }
}

// Bool read as its bytes (cast.cpp): a mask of magika's shape, an odd length split between
// threads, to each target; to bool the input itself.
TEST(FastCast, FromBoolAsBytes) {
  const Shape shape{1, 2048, 257};
  std::vector<uint8_t> b(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < b.size(); ++i) b[i] = (i * 2654435761u >> 7) % 3 == 0;
  const Tensor x = Tensor::from_host(DType::Bool, shape, b.data(), b.size());
  for (int64_t to : {1, 6, 7, 9}) {
    SCOPED_TRACE("bool to " + std::to_string(to));
    const std::string impl =
        test::check_bytes(OracleOp("Cast", 13).attr("to", to).input(x).threads(2), {x}, 2);
    EXPECT_EQ(impl.rfind("fast:", 0), 0u) << impl;
  }
}

TEST(FastCast, OtherSourcesAndTargetsAreTheReferenceKernels) {
  auto r = OracleOp("Cast", 13)
               .attr("to", int64_t{1})
               .input(Tensor::from_vector<double>({3}, {1, -2, 1e300}))
               .check(0, 0);
  EXPECT_EQ(r.impl, "reference");
  r = OracleOp("Cast", 13).attr("to", int64_t{11}).random({5}).check();
  EXPECT_EQ(r.impl, "reference");
  r = OracleOp("Cast", 13).attr("to", int64_t{10}).random({5}).check();
  EXPECT_EQ(r.impl, "reference");
}

}  // namespace
}  // namespace polyinfer
