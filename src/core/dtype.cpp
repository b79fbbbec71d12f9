#include "polyinfer/dtype.h"

#include <cmath>
#include <string>

#include "polyinfer/status.h"

namespace polyinfer {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32:
    case DType::Int32:
    case DType::UInt32: return 4;
    case DType::Float64:
    case DType::Int64:
    case DType::UInt64:
    case DType::Complex64: return 8;
    case DType::Complex128: return 16;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int16:
    case DType::UInt16: return 2;
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool:
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
    case DType::Float8E8M0: return 1;
    case DType::String: return sizeof(std::string);
    case DType::Undefined: return 0;
    case DType::UInt4:
    case DType::Int4:
    case DType::Float4E2M1:
    case DType::UInt2:
    case DType::Int2:
    case DType::Float6E2M3:
    case DType::Float6E3M2:
      fail(ErrorCode::UnsupportedOp, "dtype ", dtype_name(t), " packs ", dtype_bits(t),
           "-bit elements into bytes, which this operation does not support");
  }
  return 0;
}

int dtype_bits(DType t) {
  switch (t) {
    case DType::UInt4:
    case DType::Int4:
    case DType::Float4E2M1: return 4;
    case DType::UInt2:
    case DType::Int2: return 2;
    case DType::Float6E2M3:
    case DType::Float6E3M2: return 6;
    default: return static_cast<int>(dtype_size(t) * 8);
  }
}

size_t dtype_nbytes(DType t, int64_t numel) {
  const auto n = static_cast<size_t>(numel);
  if (!is_packed(t)) return n * dtype_size(t);
  return (n * static_cast<size_t>(dtype_bits(t)) + 7) / 8;
}

bool is_packed(DType t) {
  switch (t) {
    case DType::UInt4:
    case DType::Int4:
    case DType::Float4E2M1:
    case DType::UInt2:
    case DType::Int2:
    case DType::Float6E2M3:
    case DType::Float6E3M2: return true;
    default: return false;
  }
}

bool is_low_precision_float(DType t) {
  switch (t) {
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
    case DType::Float8E8M0:
    case DType::Float4E2M1:
    case DType::Float6E2M3:
    case DType::Float6E3M2: return true;
    default: return false;
  }
}

bool is_low_precision_integer(DType t) {
  return t == DType::Int4 || t == DType::UInt4 || t == DType::Int2 || t == DType::UInt2;
}

bool is_tensor_dtype_code(int64_t code) {
  return code >= 1 && code <= kMaxDType && code != static_cast<int64_t>(DType::Complex64) &&
         code != static_cast<int64_t>(DType::Complex128);
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::UInt16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Float64: return "float64";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::BFloat16: return "bfloat16";
    case DType::Float8E4M3FN: return "float8e4m3fn";
    case DType::Float8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::Float8E5M2: return "float8e5m2";
    case DType::Float8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::UInt4: return "uint4";
    case DType::Int4: return "int4";
    case DType::Float4E2M1: return "float4e2m1";
    case DType::Float8E8M0: return "float8e8m0";
    case DType::UInt2: return "uint2";
    case DType::Int2: return "int2";
    case DType::Float6E2M3: return "float6e2m3";
    case DType::Float6E3M2: return "float6e3m2";
    case DType::Undefined: return "undefined";
  }
  return "unknown";
}

DType dtype_from_name(const std::string& name) {
  static const struct {
    const char* name;
    DType t;
  } kAliases[] = {
      {"float", DType::Float32}, {"fp32", DType::Float32}, {"double", DType::Float64},
      {"fp64", DType::Float64},  {"half", DType::Float16}, {"fp16", DType::Float16},
      {"bf16", DType::BFloat16},
  };
  for (const auto& a : kAliases)
    if (name == a.name) return a.t;
  for (int i = 1; i <= kMaxDType; ++i)
    if (name == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
  fail(ErrorCode::InvalidArgument, "unknown dtype '", name,
       "'; use one of float32, float16, bfloat16, float64, int8..int64, uint8..uint64, bool, "
       "string, float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz, float8e8m0, "
       "float6e2m3, float6e3m2, float4e2m1, int4, uint4, int2, uint2");
}

bool is_float(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

bool is_integer(DType t) {
  switch (t) {
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64: return true;
    default: return false;
  }
}

bool is_signed(DType t) {
  switch (t) {
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64: return true;
    default: return is_float(t);
  }
}

uint16_t Float16::from_float(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // subnormal half (or zero): scale with float arithmetic, exact rounding
    float a;
    std::memcpy(&a, &abs, 4);
    const float scaled = a * 16777216.0f;  // 2^24: one half-subnormal unit becomes 1.0
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  // Normal: rebias exponent, round mantissa to nearest even.
  uint32_t mant_odd = (abs >> 13) & 1u;
  uint32_t r = abs + 0xc8000fffu + mant_odd;  // -(127-15)<<23 + rounding bias
  return static_cast<uint16_t>(sign | (r >> 13));
}

float Float16::to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    float f = std::ldexp(static_cast<float>(mant), -24);
    std::memcpy(&bits, &f, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

uint16_t BFloat16::from_float(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace polyinfer
