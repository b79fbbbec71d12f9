// polyinfer/dtype.h — element types.
//
// DType's values are those of ONNX's TensorProto.DataType, so a model's type numbers map over
// without a table. float16 and bfloat16 are stored as 16-bit patterns (Float16, BFloat16) and
// converted to float for arithmetic.
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
};

// Bytes per element; 0 for Undefined. String tensors hold std::string objects.
size_t dtype_size(DType t);
// ONNX-style lower-case name: "float", "float16", "int64", "string", "bool", ...
const char* dtype_name(DType t);
// Parses a dtype_name (also accepts "float32", "fp32", "fp16", "bf16", "double").
DType dtype_from_name(const std::string& name);
bool is_float(DType t);    // float32/64, float16, bfloat16
bool is_integer(DType t);  // signed and unsigned integers (not bool)
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
