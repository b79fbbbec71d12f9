// The low-precision element types: 8-, 6- and 4-bit floats, float8e8m0, int4/uint4/int2/uint2
// (include/polyinfer/dtype.h, src/core/low_precision.h): sizes, packing, conversions of edge
// values, TensorProto import and export, and Cast / QuantizeLinear / DequantizeLinear on them.
//
// Expected values are not computed by the code under test. Unless a comment says otherwise they
// were computed with the ml_dtypes 0.7.0 and onnx 1.23.2 in .venv (the libraries that generate
// ONNX's expected outputs), e.g.
//   np.array(vals, np.float32).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)        (no saturate)
//   onnx.numpy_helper.saturate_cast(np.array(vals, np.float32), ml_dtypes.float8_e4m3fn)
//   onnx.numpy_helper.to_float8e8m0(x, saturate, round_mode)
//   onnx.numpy_helper.from_array(np.array([1, -2, 3], ml_dtypes.int4)).raw_data
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/low_precision.h"
#include "model_builder.h"
#include "onnx/tensor_file.h"
#include "onnx/tensor_proto.h"
#include "oracle.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

const DType kAllNew[] = {DType::Float8E4M3FN,   DType::Float8E4M3FNUZ, DType::Float8E5M2,
                         DType::Float8E5M2FNUZ, DType::UInt4,          DType::Int4,
                         DType::Float4E2M1,     DType::Float8E8M0,     DType::UInt2,
                         DType::Int2,           DType::Float6E2M3,     DType::Float6E3M2};

TEST(DTypeSubByte, SizesNamesAndCodes) {
  EXPECT_EQ(dtype_bits(DType::Int4), 4);
  EXPECT_EQ(dtype_bits(DType::UInt2), 2);
  EXPECT_EQ(dtype_bits(DType::Float6E3M2), 6);
  EXPECT_EQ(dtype_bits(DType::Float8E5M2), 8);
  EXPECT_EQ(dtype_bits(DType::Float32), 32);
  EXPECT_EQ(dtype_size(DType::Float8E4M3FN), 1u);
  EXPECT_EQ(dtype_size(DType::Float8E8M0), 1u);
  EXPECT_EQ(dtype_nbytes(DType::Int4, 3), 2u);
  EXPECT_EQ(dtype_nbytes(DType::Int4, 4), 2u);
  EXPECT_EQ(dtype_nbytes(DType::Int2, 5), 2u);
  EXPECT_EQ(dtype_nbytes(DType::Float6E2M3, 5), 4u);  // 30 bits
  EXPECT_EQ(dtype_nbytes(DType::Float6E2M3, 4), 3u);
  EXPECT_EQ(dtype_nbytes(DType::Float8E5M2, 3), 3u);
  EXPECT_EQ(dtype_nbytes(DType::Int4, 0), 0u);
  // Code that counts whole-byte elements cannot take a packed type.
  for (DType t : {DType::Int4, DType::UInt4, DType::Float4E2M1, DType::Int2, DType::UInt2,
                  DType::Float6E2M3, DType::Float6E3M2}) {
    EXPECT_TRUE(is_packed(t)) << dtype_name(t);
    try {
      (void)dtype_size(t);
      ADD_FAILURE() << dtype_name(t) << ": dtype_size did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp);
    }
  }
  for (DType t : kAllNew) {
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t) << dtype_name(t);
    EXPECT_TRUE(is_tensor_dtype_code(static_cast<int64_t>(t)));
    EXPECT_FALSE(is_float(t) || is_integer(t)) << dtype_name(t);
  }
  EXPECT_STREQ(dtype_name(DType::Float8E4M3FN), "float8e4m3fn");
  EXPECT_STREQ(dtype_name(DType::Int4), "int4");
  EXPECT_FALSE(is_tensor_dtype_code(14));
  EXPECT_FALSE(is_tensor_dtype_code(29));
  EXPECT_FALSE(is_tensor_dtype_code(0));
}

// The packing ONNX specifies (onnx.proto, TensorProto.raw_data), written out per type.
std::vector<uint8_t> naive_pack(int bits, const std::vector<uint32_t>& codes) {
  std::vector<uint8_t> out((codes.size() * size_t(bits) + 7) / 8, 0);
  for (size_t i = 0; i < codes.size(); ++i) {
    if (bits == 4) {
      out[i / 2] |= uint8_t(codes[i] << (4 * (i % 2)));
    } else if (bits == 2) {
      out[i / 4] |= uint8_t(codes[i] << (2 * (i % 4)));
    } else {  // 6: byte0 = x0 | (x1 & 3) << 6; byte1 = x1 >> 2 | (x2 & 15) << 4; byte2 = ...
      const size_t g = i / 4 * 3;
      const uint32_t x = codes[i];
      switch (i % 4) {
        case 0: out[g] |= uint8_t(x); break;
        case 1:
          out[g] |= uint8_t((x & 3) << 6);
          out[g + 1] |= uint8_t(x >> 2);
          break;
        case 2:
          out[g + 1] |= uint8_t((x & 15) << 4);
          out[g + 2] |= uint8_t(x >> 4);
          break;
        case 3: out[g + 2] |= uint8_t(x << 2); break;
      }
    }
  }
  return out;
}

TEST(DTypeSubByte, PackingRoundTripsAndMatchesTheSpec) {
  std::mt19937 gen(7);
  for (DType t : {DType::Int4, DType::UInt4, DType::Float4E2M1, DType::Int2, DType::UInt2,
                  DType::Float6E2M3, DType::Float6E3M2}) {
    const int bits = dtype_bits(t);
    for (int64_t n = 1; n <= 13; ++n) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " x " + std::to_string(n));
      std::vector<uint32_t> codes(static_cast<size_t>(n));
      for (auto& c : codes) c = gen() & ((1u << bits) - 1);
      // Exactly dtype_nbytes bytes on the heap: ASan reports any access past them.
      const size_t nb = dtype_nbytes(t, n);
      std::unique_ptr<uint8_t[]> buf(new uint8_t[nb]);
      std::memset(buf.get(), 0, nb);
      for (int64_t i = 0; i < n; ++i) lowp::set(t, buf.get(), i, codes[size_t(i)]);
      const std::vector<uint8_t> want = naive_pack(bits, codes);
      ASSERT_EQ(want.size(), nb);
      EXPECT_EQ(std::vector<uint8_t>(buf.get(), buf.get() + nb), want);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(lowp::get(t, buf.get(), i), codes[size_t(i)]);
      // Overwriting one element keeps its neighbours.
      lowp::set(t, buf.get(), n / 2, ~codes[size_t(n / 2)]);
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(lowp::get(t, buf.get(), i),
                  i == n / 2 ? (~codes[size_t(i)] & ((1u << bits) - 1)) : codes[size_t(i)]);
    }
  }
}

struct FloatCase {
  DType t;
  std::vector<int> saturated, unsaturated;
};

TEST(DTypeSubByte, FloatEncodingOfEdgeValues) {
  // Inputs as float32 (inf, nan, max, ties, subnormals, values past the maximum).
  const std::vector<float> in = {0.0f,
                                 -0.0f,
                                 1.0f,
                                 -1.5f,
                                 0.1f,
                                 3.14159f,
                                 448.0f,
                                 464.0f,
                                 465.0f,
                                 480.0f,
                                 500.0f,
                                 57344.0f,
                                 61439.0f,
                                 61440.0f,
                                 1e6f,
                                 0.001953125f,
                                 0.0009765625f,
                                 0.0029296875f,
                                 0.0166015625f,
                                 7.62939453125e-06f,
                                 1.52587890625e-05f,
                                 240.0f,
                                 248.0f,
                                 6.0f,
                                 5.0f,
                                 7.0f,
                                 0.25f,
                                 0.75f,
                                 kInf,
                                 -kInf,
                                 kNaN,
                                 7.5f,
                                 7.75f,
                                 28.0f,
                                 30.0f};
  // ml_dtypes: saturate_cast (saturated) and astype (unsaturated), as bytes.
  const FloatCase cases[] = {
      {DType::Float8E4M3FN,
       {0, 128, 56, 188, 29,  69, 126, 126, 126, 126, 126, 126, 126, 126, 126, 1,  0, 2,
        8, 0,   0,  119, 120, 76, 74,  78,  40,  52,  126, 254, 127, 79,  80,  94, 95},
       {0, 128, 56, 188, 29,  69, 126, 126, 127, 127, 127, 127, 127, 127, 127, 1,  0, 2,
        8, 0,   0,  119, 120, 76, 74,  78,  40,  52,  127, 255, 127, 79,  80,  94, 95}},
      {DType::Float8E4M3FNUZ,
       {0,  0, 64, 196, 37,  77, 127, 127, 127, 127, 127, 127, 127, 127, 127, 2,   1,  3,
        16, 0, 0,  127, 127, 84, 82,  86,  48,  60,  127, 255, 128, 87,  88,  102, 103},
       {0,  0, 64, 196, 37,  77, 128, 128, 128, 128, 128, 128, 128, 128, 128, 2,   1,  3,
        16, 0, 0,  127, 128, 84, 82,  86,  48,  60,  128, 128, 128, 87,  88,  102, 103}},
      {DType::Float8E5M2,
       {0,  128, 60, 190, 46, 66, 95, 95, 95, 96, 96,  123, 123, 123, 123, 24, 20, 26,
        36, 0,   1,  92,  92, 70, 69, 71, 52, 58, 123, 251, 126, 72,  72,  79, 80},
       {0,  128, 60, 190, 46, 66, 95, 95, 95, 96, 96,  123, 123, 124, 124, 24, 20, 26,
        36, 0,   1,  92,  92, 70, 69, 71, 52, 58, 124, 252, 126, 72,  72,  79, 80}},
      {DType::Float8E5M2FNUZ,
       {0,  0, 64, 194, 50, 70, 99, 99, 99, 100, 100, 127, 127, 127, 127, 28, 24, 30,
        40, 1, 2,  96,  96, 74, 73, 75, 56, 62,  127, 255, 128, 76,  76,  83, 84},
       {0,  0, 64, 194, 50, 70, 99, 99, 99, 100, 100, 127, 127, 128, 128, 28, 24, 30,
        40, 1, 2,  96,  96, 74, 73, 75, 56, 62,  128, 128, 128, 76,  76,  83, 84}},
      // No infinity or NaN: always saturating; NaN gives a zero of the opposite sign.
      {DType::Float4E2M1,
       {0, 8, 2, 11, 0, 5, 7, 7, 7, 7, 7, 7,  7, 7, 7, 0, 0, 0,
        0, 0, 0, 7,  7, 7, 6, 7, 0, 2, 7, 15, 8, 7, 7, 7, 7},
       {}},
      {DType::Float6E2M3,
       {0, 32, 8, 44, 1,  21, 31, 31, 31, 31, 31, 31, 31, 31, 31, 0,  0, 0,
        0, 0,  0, 31, 31, 28, 26, 30, 2,  6,  31, 63, 32, 31, 31, 31, 31},
       {}},
      {DType::Float6E3M2,
       {0, 32, 12, 46, 2,  18, 31, 31, 31, 31, 31, 31, 31, 31, 31, 0,  0, 0,
        0, 0,  0,  31, 31, 22, 21, 23, 4,  10, 31, 63, 32, 24, 24, 31, 31},
       {}},
  };
  for (const FloatCase& c : cases) {
    for (bool saturate : {true, false}) {
      const std::vector<int>& want =
          saturate || c.unsaturated.empty() ? c.saturated : c.unsaturated;
      ASSERT_EQ(want.size(), in.size()) << dtype_name(c.t);
      for (size_t i = 0; i < in.size(); ++i)
        EXPECT_EQ(lowp::from_double(c.t, double(in[i]), saturate), uint32_t(want[i]))
            << dtype_name(c.t) << " saturate=" << saturate << " of " << in[i];
    }
  }
}

TEST(DTypeSubByte, FloatDecodingAndRoundTrips) {
  // ml_dtypes: np.array(codes, np.uint8).view(type).astype(np.float32).
  struct Anchor {
    DType t;
    uint32_t code;
    float value;
  };
  const Anchor anchors[] = {
      {DType::Float8E4M3FN, 0x01, 0.001953125f},
      {DType::Float8E4M3FN, 0x07, 0.013671875f},
      {DType::Float8E4M3FN, 0x08, 0.015625f},
      {DType::Float8E4M3FN, 0x7E, 448.0f},
      {DType::Float8E4M3FN, 0xFE, -448.0f},
      {DType::Float8E4M3FN, 0x80, -0.0f},
      {DType::Float8E4M3FNUZ, 0x01, 0.0009765625f},
      {DType::Float8E4M3FNUZ, 0x7F, 240.0f},
      {DType::Float8E4M3FNUZ, 0xFF, -240.0f},
      {DType::Float8E5M2, 0x01, 1.52587890625e-05f},
      {DType::Float8E5M2, 0x7B, 57344.0f},
      {DType::Float8E5M2, 0x7C, kInf},
      {DType::Float8E5M2FNUZ, 0x01, 7.62939453125e-06f},
      {DType::Float8E5M2FNUZ, 0x7F, 57344.0f},
      {DType::Float4E2M1, 0x1, 0.5f},
      {DType::Float4E2M1, 0x7, 6.0f},
      {DType::Float4E2M1, 0xF, -6.0f},
      {DType::Float6E2M3, 0x01, 0.125f},
      {DType::Float6E2M3, 0x1F, 7.5f},
      {DType::Float6E3M2, 0x01, 0.0625f},
      {DType::Float6E3M2, 0x1F, 28.0f},
      {DType::Float8E8M0, 0x00, 5.877471754111438e-39f},
      {DType::Float8E8M0, 0x7F, 1.0f},
      {DType::Float8E8M0, 0xFE, 1.7014118346046923e+38f},
  };
  for (const Anchor& a : anchors) {
    const float got = lowp::to_float(a.t, a.code);
    EXPECT_EQ(got, a.value) << dtype_name(a.t) << " code " << a.code;
    EXPECT_EQ(std::signbit(got), std::signbit(a.value)) << dtype_name(a.t) << " code " << a.code;
  }
  // The NaN patterns.
  EXPECT_TRUE(std::isnan(lowp::to_float(DType::Float8E4M3FN, 0x7F)));
  EXPECT_TRUE(std::isnan(lowp::to_float(DType::Float8E4M3FN, 0xFF)));
  EXPECT_TRUE(std::isnan(lowp::to_float(DType::Float8E4M3FNUZ, 0x80)));
  EXPECT_TRUE(std::isnan(lowp::to_float(DType::Float8E5M2, 0x7E)));
  EXPECT_TRUE(std::isnan(lowp::to_float(DType::Float8E5M2FNUZ, 0x80)));
  EXPECT_TRUE(std::isnan(lowp::to_float(DType::Float8E8M0, 0xFF)));
  // Every finite pattern converts back to itself (no saturation: infinities too).
  for (DType t : {DType::Float8E4M3FN, DType::Float8E4M3FNUZ, DType::Float8E5M2,
                  DType::Float8E5M2FNUZ, DType::Float4E2M1, DType::Float6E2M3, DType::Float6E3M2}) {
    for (uint32_t code = 0; code < (1u << dtype_bits(t)); ++code) {
      const float f = lowp::to_float(t, code);
      if (std::isnan(f)) continue;
      EXPECT_EQ(lowp::from_double(t, double(f), false), code) << dtype_name(t) << " " << code;
    }
  }
}

TEST(DTypeSubByte, Float8E8M0Rounding) {
  const std::vector<float> in = {0.0f,
                                 1.0f,
                                 1.5f,
                                 1.75f,
                                 0.75f,
                                 3.0f,
                                 0.124f,
                                 1.7014118346046923e+38f,
                                 2.5521177519070385e+38f,
                                 5.877471754111438e-39f,
                                 8.816207631167156e-39f,
                                 4.408103815583578e-39f,
                                 2.938735877055719e-39f,
                                 kNaN,
                                 -2.0f,
                                 1e-45f};
  // onnx.numpy_helper.to_float8e8m0(x, saturate, mode).
  struct Mode {
    lowp::E8M0Rounding mode;
    bool saturate;
    std::vector<int> want;
  };
  using R = lowp::E8M0Rounding;
  const Mode modes[] = {
      {R::Up, true, {0, 127, 128, 128, 127, 129, 124, 254, 254, 1, 1, 1, 1, 255, 128, 1}},
      {R::Up, false, {0, 127, 128, 128, 127, 129, 124, 254, 255, 1, 1, 1, 1, 255, 128, 1}},
      {R::Down, true, {0, 127, 127, 127, 126, 128, 123, 254, 254, 0, 0, 0, 0, 255, 128, 0}},
      {R::Down, false, {0, 127, 127, 127, 126, 128, 123, 254, 254, 0, 0, 0, 0, 255, 128, 0}},
      {R::Nearest, true, {0, 127, 128, 128, 127, 129, 124, 254, 254, 0, 1, 0, 0, 255, 128, 0}},
      {R::Nearest, false, {0, 127, 128, 128, 127, 129, 124, 254, 255, 0, 1, 0, 0, 255, 128, 0}},
  };
  for (const Mode& m : modes)
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_EQ(lowp::e8m0_from_float(in[i], m.saturate, m.mode), uint8_t(m.want[i]))
          << "mode " << int(m.mode) << " saturate " << m.saturate << " of " << in[i];
  // Infinity: the largest value when saturating, as the spec's Cast table says (the reference
  // implementation gives NaN there), NaN otherwise.
  EXPECT_EQ(lowp::e8m0_from_float(kInf, true, R::Up), 0xFE);
  EXPECT_EQ(lowp::e8m0_from_float(kInf, false, R::Up), 0xFF);
  lowp::E8M0Rounding r{};
  EXPECT_TRUE(lowp::parse_e8m0_rounding("nearest", &r));
  EXPECT_EQ(r, R::Nearest);
  EXPECT_FALSE(lowp::parse_e8m0_rounding("even", &r));
}

TEST(DTypeSubByte, IntegerConversions) {
  // ml_dtypes: float → int4 truncates, and a truncation outside the range gives 0.
  const std::vector<double> in = {-8.5, -8.9, 7.99, 15.5, -0.9, 1.5, -2.9, 3.9, 8.0, -9.0, 100.0};
  struct Case {
    DType t;
    std::vector<int> want;
  };
  const Case cases[] = {
      {DType::Int4, {-8, -8, 7, 0, 0, 1, -2, 3, 0, 0, 0}},
      {DType::UInt4, {0, 0, 7, 15, 0, 1, 0, 3, 8, 0, 0}},
      {DType::Int2, {0, 0, 0, 0, 0, 1, -2, 0, 0, 0, 0}},
      {DType::UInt2, {0, 0, 0, 0, 0, 1, 0, 3, 0, 0, 0}},
  };
  for (const Case& c : cases)
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_EQ(lowp::int_value(c.t, lowp::int_code_from_double(c.t, in[i])), c.want[i])
          << dtype_name(c.t) << " of " << in[i];
  EXPECT_EQ(lowp::int_code_from_double(DType::Int4, double(kNaN)), 0u);
  EXPECT_EQ(lowp::int_code_from_double(DType::Int4, double(kInf)), 0u);
  // Integers wrap (ml_dtypes: np.array([7, 8, 9, 15, 16, -9, 127, -128, 200]).astype(int4)).
  const std::vector<int64_t> ints = {7, 8, 9, 15, 16, -9, 127, -128, 200};
  const std::vector<int> int4 = {7, -8, -7, -1, 0, 7, -1, 0, -8};
  const std::vector<int> uint4 = {7, 8, 9, 15, 0, 7, 15, 0, 8};
  for (size_t i = 0; i < ints.size(); ++i) {
    EXPECT_EQ(lowp::int_value(DType::Int4, lowp::int_code_wrapped(DType::Int4, ints[i])), int4[i]);
    EXPECT_EQ(lowp::int_value(DType::UInt4, lowp::int_code_wrapped(DType::UInt4, ints[i])),
              uint4[i]);
  }
}

// A TensorProto as bytes, written out by hand: dims, data_type and raw_data or int32_data.
std::string proto_bytes(const Shape& dims, DType t, const std::vector<uint8_t>& raw,
                        const std::vector<int32_t>& int32_data = {}) {
  onnx::TensorProto p;
  for (int64_t d : dims) p.add_dims(d);
  p.set_data_type(static_cast<int>(t));
  if (int32_data.empty()) p.set_raw_data(std::string(raw.begin(), raw.end()));
  for (int32_t v : int32_data) p.add_int32_data(v);
  return p.SerializeAsString();
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(lowp::get_value(t.dtype(), t.raw_data(), i));
  return v;
}

TEST(DTypeSubByte, TensorProtoImportMatchesOnnx) {
  // raw_data from onnx.numpy_helper.from_array of ml_dtypes arrays.
  struct Case {
    DType t;
    std::vector<uint8_t> raw;
    std::vector<double> values;
  };
  const Case cases[] = {
      {DType::Int4, {225, 3}, {1, -2, 3}},
      {DType::UInt4, {241, 115, 9}, {1, 15, 3, 7, 9}},
      {DType::Int2, {57, 1}, {1, -2, -1, 0, 1}},
      {DType::UInt2, {27, 7}, {3, 2, 1, 0, 3, 1}},
      {DType::Float4E2M1, {241, 3}, {0.5, -6, 1.5}},
      {DType::Float6E2M3, {193, 143, 60, 7}, {0.125, -7.5, 1.0, 1.875, 0.875}},
      {DType::Float6E3M2, {193, 143, 0}, {0.0625, -28, 0.5}},
      {DType::Float8E4M3FN, {56, 254, 1}, {1.0, -448, 0.001953125}},
      {DType::Float8E8M0, {127, 124, 254}, {1.0, 0.125, 1.7014118346046923e+38}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(dtype_name(c.t));
    const std::string bytes = proto_bytes({int64_t(c.values.size())}, c.t, c.raw);
    const Tensor t = parse_tensor_pb(bytes.data(), bytes.size(), "test");
    ASSERT_EQ(t.dtype(), c.t);
    ASSERT_EQ(t.nbytes(), c.raw.size());
    EXPECT_EQ(values_of(t), c.values);
    // Export writes the same bytes back.
    onnx::TensorProto out;
    onnx_io::tensor_to_proto(t, &out);
    EXPECT_EQ(out.data_type(), static_cast<int>(c.t));
    EXPECT_EQ(out.raw_data(), std::string(c.raw.begin(), c.raw.end()));
    // Raw data of the wrong size is refused.
    std::vector<uint8_t> longer = c.raw;
    longer.push_back(0);
    const std::string bad = proto_bytes({int64_t(c.values.size())}, c.t, longer);
    EXPECT_THROW(parse_tensor_pb(bad.data(), bad.size(), "bad"), Error);
  }
  // int32_data (onnx.helper.make_tensor): packed bytes for 4- and 2-bit types, one element per
  // entry otherwise, 6-bit floats included.
  struct Int32Case {
    DType t;
    std::vector<int32_t> data;
    std::vector<double> values;
  };
  const Int32Case icases[] = {
      {DType::Int4, {225, 3}, {1, -2, 3}},
      {DType::UInt2, {27, 3}, {3, 2, 1, 0, 3}},
      {DType::Float6E2M3, {1, 63, 8}, {0.125, -7.5, 1.0}},
      {DType::Float8E5M2, {60, 192, 123}, {1.0, -2.0, 57344.0}},
  };
  for (const Int32Case& c : icases) {
    SCOPED_TRACE(std::string("int32_data ") + dtype_name(c.t));
    const std::string bytes = proto_bytes({int64_t(c.values.size())}, c.t, {}, c.data);
    const Tensor t = parse_tensor_pb(bytes.data(), bytes.size(), "test");
    EXPECT_EQ(values_of(t), c.values);
  }
  // Empty tensors of every packed type (CastLike's "like" input in the onnx 1.23 node tests): no
  // memory to zero, nothing read.
  for (DType t : {DType::Int4, DType::UInt2, DType::Float4E2M1, DType::Float6E3M2}) {
    SCOPED_TRACE(std::string("empty ") + dtype_name(t));
    onnx::TensorProto p;  // neither raw_data nor int32_data, as onnx writes it
    p.add_dims(0);
    p.set_data_type(static_cast<int>(t));
    const std::string bytes = p.SerializeAsString();
    const Tensor e = parse_tensor_pb(bytes.data(), bytes.size(), "empty");
    EXPECT_EQ(e.dtype(), t);
    EXPECT_EQ(e.shape(), Shape{0});
  }
  // A count that does not match the shape is refused (3 int4 take 2 packed entries).
  const std::string bad = proto_bytes({3}, DType::Int4, {}, {225, 3, 0});
  EXPECT_THROW(parse_tensor_pb(bad.data(), bad.size(), "bad"), Error);
}

TEST(DTypeSubByte, ProtoRoundTripOfEveryType) {
  std::mt19937 gen(11);
  for (DType t : kAllNew) {
    SCOPED_TRACE(dtype_name(t));
    Tensor x = Tensor::empty(t, {2, 3, 5});
    std::memset(x.raw_data(), 0, x.nbytes());
    for (int64_t i = 0; i < x.numel(); ++i) lowp::set(t, x.raw_data(), i, gen());
    onnx::TensorProto p;
    onnx_io::tensor_to_proto(x, &p);
    const Tensor y = onnx_io::tensor_from_proto(p, {}, "round trip");
    ASSERT_EQ(y.dtype(), t);
    ASSERT_EQ(y.shape(), x.shape());
    ASSERT_EQ(y.nbytes(), dtype_nbytes(t, 30));
    EXPECT_EQ(std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()), 0);
  }
}

TEST(DTypeSubByte, OddLengthInt4TensorOccupiesTwoBytesAndCopies) {
  const uint8_t packed[2] = {0xE1, 0x03};  // 1, -2, 3 (onnx.numpy_helper.from_array)
  const Tensor t = Tensor::from_host(DType::Int4, {3}, packed, 2);
  EXPECT_EQ(t.nbytes(), 2u);
  EXPECT_THROW(Tensor::from_host(DType::Int4, {3}, packed, 3), Error);
  const Tensor c = t.clone();
  Tensor d = Tensor::empty(DType::Int4, {3});
  d.copy_from(t);
  const Tensor r = t.reshaped({1, 3});
  for (const Tensor* u : std::vector<const Tensor*>{&c, &d, &r}) {
    EXPECT_EQ(u->nbytes(), 2u);
    EXPECT_EQ(values_of(*u), (std::vector<double>{1, -2, 3}));
  }
  EXPECT_EQ(Tensor::zeros(DType::UInt2, {5}).nbytes(), 2u);
}

// ---- operators ----

std::vector<Value> run_model(test::ModelBuilder& b, const std::map<std::string, Value>& feeds) {
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.providers = {"cpu"};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  return s.run(feeds);
}

TEST(DTypeSubByte, CastThroughInt4AndFloat8) {
  // float → int4 → float and float → float8e4m3fn (saturate 0) → float16.
  test::ModelBuilder b(21);
  b.input("x", {7})
      .output("back", {7})
      .output("f8h", {7}, int(DType::Float16))
      .node("Cast", {"x"}, {"q"});
  test::set_int(test::last_node(b), "to", int64_t(DType::Int4));
  b.node("Cast", {"q"}, {"back"});
  test::set_int(test::last_node(b), "to", int64_t(DType::Float32));
  b.node("Cast", {"x"}, {"f8"});
  test::set_int(test::last_node(b), "to", int64_t(DType::Float8E4M3FN));
  test::set_int(test::last_node(b), "saturate", 0);
  b.node("Cast", {"f8"}, {"f8h"});
  test::set_int(test::last_node(b), "to", int64_t(DType::Float16));
  const auto out = run_model(
      b, {{"x", Tensor::from_vector<float>({7}, {-9.f, -8.f, 7.9f, 8.f, 0.3f, 465.f, 0.1f})}});
  EXPECT_EQ(out[0].tensor().to_vector<float>(),
            (std::vector<float>{0, -8, 7, 0, 0, 0, 0}));  // ml_dtypes: out of range → 0
  const std::vector<Float16> h = out[1].tensor().to_vector<Float16>();
  // 465 rounds past 448: NaN without saturation; 0.1 → 0.1015625 (code 29).
  EXPECT_EQ(float(h[0]), -9.f);
  EXPECT_EQ(float(h[4]), 0.3125f);
  EXPECT_TRUE(std::isnan(float(h[5])));
  EXPECT_EQ(float(h[6]), 0.1015625f);
}

TEST(DTypeSubByte, BlockedQuantizeToInt4AndBack) {
  // x [2, 4], blocks of 2 along axis 1: scale [2, 2].
  test::ModelBuilder b(21);
  b.input("x", {2, 4})
      .input("s", {2, 2})
      .output("y", {2, 4})
      .node("QuantizeLinear", {"x", "s"}, {"q"});
  test::set_int(test::last_node(b), "axis", 1);
  test::set_int(test::last_node(b), "block_size", 2);
  test::set_int(test::last_node(b), "output_dtype", int64_t(DType::Int4));
  b.node("DequantizeLinear", {"q", "s"}, {"y"});
  test::set_int(test::last_node(b), "axis", 1);
  test::set_int(test::last_node(b), "block_size", 2);
  const auto out =
      run_model(b, {{"x", Tensor::from_vector<float>({2, 4}, {1, -3, 100, 5, 0.5, 1.5, -2.5, -7})},
                    {"s", Tensor::from_vector<float>({2, 2}, {1, 2, 0.5, 1})}});
  // Worked by hand: x / s rounded half to even, clamped to [-8, 7], times s.
  //   row 0: 1/1=1, -3/1=-3, 100/2→7, 5/2=2.5→2   → 1, -3, 14, 4
  //   row 1: .5/.5=1, 1.5/.5=3, -2.5/1=-2.5→-2, -7 → 0.5, 1.5, -2, -7
  EXPECT_EQ(out[0].tensor().to_vector<float>(),
            (std::vector<float>{1, -3, 14, 4, 0.5f, 1.5f, -2, -7}));
}

TEST(DTypeSubByte, FastQuantizeTakesOpset21PlainAndDeclinesBlocks) {
  using test::OracleOp;
  auto r = OracleOp("QuantizeLinear", 21)
               .attr("output_dtype", int64_t(DType::Int8))
               .random({4, 33}, -3, 3)
               .input(Tensor::from_vector<float>({}, {0.05f}))
               .check();
  EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
  r = OracleOp("QuantizeLinear", 21)
          .attr("axis", int64_t{1})
          .attr("block_size", int64_t{11})
          .random({4, 33}, -3, 3)
          .input(test::random_tensor({4, 3}, 5, 0.01f, 0.1f))
          .input(Tensor::from_vector<int8_t>({4, 3}, std::vector<int8_t>(12, 3)))
          .check();
  EXPECT_EQ(r.impl.rfind("fast:", 0), std::string::npos) << r.impl;
}

}  // namespace
}  // namespace polyinfer
