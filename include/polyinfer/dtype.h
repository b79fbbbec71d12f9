// polyinfer/dtype.h — element types.
//
// DType's values are those of ONNX's TensorProto.DataType, so a model's type numbers map over
// without a table. float16 and bfloat16 are stored as 16-bit patterns (Float16, BFloat16) and
// converted to float for arithmetic.
//
// The low-precision types (8-bit floats, and the packed 6-, 4- and 2-bit types) are stored as ONNX
// stores them: one byte per 8-bit float, and the packed types as a little-endian bit stream,
// element i in bits [i*b, (i+1)*b), so two int4 per byte low nibble first and four int2 per byte.
// A packed tensor of n elements holds dtype_nbytes(t, n) = ceil(n*b/8) bytes, and dtype_size()
// refuses it: code that sizes or indexes memory by whole elements cannot misread one. Only the
// kernels that know these types (Cast, CastLike, QuantizeLinear, DequantizeLinear, and the ones
// that move a tensor without reading it) take them; see src/core/low_precision.h and
// docs/design.md "Data types".
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace polyinfer {

enum class DType : int32_t {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  Float8E4M3FN = 17,    // 1-4-3, bias 7, no infinity, NaN S.1111.111, max 448
  Float8E4M3FNUZ = 18,  // 1-4-3, bias 8, no infinity or -0, NaN 0x80, max 240
  Float8E5M2 = 19,      // 1-5-2, bias 15, IEEE-like with infinities, max 57344
  Float8E5M2FNUZ = 20,  // 1-5-2, bias 16, no infinity or -0, NaN 0x80, max 57344
  UInt4 = 21,           // packed, 2 per byte
  Int4 = 22,            // packed, 2 per byte
  Float4E2M1 = 23,      // packed, 2 per byte; 1-2-1, bias 1, no infinity or NaN, max 6
  Float8E8M0 = 24,      // unsigned power of two 2^(e-127), 0xFF NaN
  UInt2 = 25,           // packed, 4 per byte
  Int2 = 26,            // packed, 4 per byte
  Float6E2M3 = 27,      // packed, 4 per 3 bytes; 1-2-3, bias 1, no infinity or NaN, max 7.5
  Float6E3M2 = 28,      // packed, 4 per 3 bytes; 1-3-2, bias 3, no infinity or NaN, max 28
};

// The largest DType value.
constexpr int32_t kMaxDType = 28;

// Bytes per element; 0 for Undefined. String tensors hold std::string objects. Throws
// UnsupportedOp for a packed type (is_packed), whose elements are not whole bytes: use
// dtype_bits / dtype_nbytes, or refuse the type.
size_t dtype_size(DType t);
// Bits per element: 8 * dtype_size for whole-byte types, 6, 4 or 2 for the packed ones, 0 for
// Undefined.
int dtype_bits(DType t);
// Bytes that `numel` elements occupy: ceil(numel * bits / 8). numel must be >= 0 and below the
// tensor size limit (shape_numel checks both).
size_t dtype_nbytes(DType t, int64_t numel);
// Elements smaller than a byte, packed into a bit stream (int4, uint4, float4e2m1, int2, uint2,
// float6e2m3, float6e3m2).
bool is_packed(DType t);
// The 8-, 6- and 4-bit floats and float8e8m0: kept as bit patterns, computed with only by the
// kernels that convert them (src/core/low_precision.h).
bool is_low_precision_float(DType t);
// int4, uint4, int2, uint2.
bool is_low_precision_integer(DType t);
// Whether `code` (a TensorProto.DataType number) is a type a polyinfer tensor can hold: every
// ONNX type but complex.
bool is_tensor_dtype_code(int64_t code);
// ONNX-style lower-case name: "float", "float16", "int64", "string", "bool", "float8e4m3fn",
// "int4", ...
const char* dtype_name(DType t);
// Parses a dtype_name (also accepts "float32", "fp32", "fp16", "bf16", "double").
DType dtype_from_name(const std::string& name);
bool is_float(DType t);    // float32/64, float16, bfloat16 (not the low-precision floats)
bool is_integer(DType t);  // signed and unsigned whole-byte integers (not bool, not int4/int2)
bool is_signed(DType t);   // signed integers and floats

// IEEE 754 binary16, stored as its bit pattern. Converts implicitly to and from float so that
// kernels can write generic arithmetic; the arithmetic itself happens in float.
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  Float16(float f) : bits(from_float(f)) {}
  operator float() const { return to_float(bits); }
  static uint16_t from_float(float f);  // round to nearest even, overflow to inf, NaN kept
  static float to_float(uint16_t h);
};

// bfloat16: the upper half of a float32, stored as its bit pattern.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(from_float(f)) {}
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static uint16_t from_float(float f);  // round to nearest even, NaN kept
};

// Maps a C++ type to its DType: dtype_of<float>() == DType::Float32.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }
template <> constexpr DType dtype_of<Float16>() { return DType::Float16; }
template <> constexpr DType dtype_of<BFloat16>() { return DType::BFloat16; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::UInt16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::UInt32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::UInt64; }
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<std::string>() { return DType::String; }

}  // namespace polyinfer
