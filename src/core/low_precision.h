// The low-precision element types (include/polyinfer/dtype.h): the 8-, 6- and 4-bit floats,
// float8e8m0 and the 4- and 2-bit integers, as bit patterns ("codes"), and the packed storage of
// the sub-byte ones. Kernels convert through double and these functions; nothing computes in
// these types directly.
//
// Where the ONNX spec leaves a case open (NaN into a type without NaN, a float outside an int4's
// range), the result is what ml_dtypes gives, because ml_dtypes computes ONNX's expected outputs.
#pragma once

#include <cstdint>

#include "polyinfer/dtype.h"

namespace polyinfer::lowp {

// ---- floats ----

// The value of a low-precision float's bit pattern (is_low_precision_float), exactly: every such
// value is a float. NaN codes give NaN.
float to_float(DType t, uint32_t code);

// `v` as a low-precision float other than float8e8m0, rounded to nearest even (Cast's table in
// the ONNX spec):
// - a value whose rounding exceeds the largest finite one: that largest value with `saturate`;
//   without it, infinity for float8e5m2 and NaN for the other 8-bit floats. The 6- and 4-bit
//   floats have neither and always saturate;
// - infinity: as an out-of-range value;
// - NaN: the type's NaN; the 6- and 4-bit floats give a zero of the opposite sign (ml_dtypes);
// - the FNUZ types have no -0: negative values that round to zero give +0.
uint32_t from_double(DType t, double v, bool saturate);

// Cast's round_mode for float8e8m0: up (away from zero), down (toward zero), nearest (ties up).
enum class E8M0Rounding { Up, Down, Nearest };
// Parses "up", "down" or "nearest"; false for anything else.
bool parse_e8m0_rounding(const char* text, E8M0Rounding* mode);

// `v` (as float) as float8e8m0: the exponent of |v|, rounded by `mode` on the mantissa bits, as
// onnx.numpy_helper.to_float8e8m0 computes it (zero and float subnormals give the smallest
// value, 2^-127, or 2^-126 when rounded up). NaN gives NaN; infinity the largest value (2^127)
// with `saturate` (the spec's table), NaN without; a finite value rounding past 2^127 gives NaN
// without `saturate` and 2^127 with it. The sign is ignored (negative input is undefined).
uint8_t e8m0_from_float(float v, bool saturate, E8M0Rounding mode);

// ---- integers (int4, uint4, int2, uint2) ----

int64_t int_min(DType t);
int64_t int_max(DType t);
// The value of a code (sign-extended for int4 and int2).
int64_t int_value(DType t, uint32_t code);
// An integer's code, wrapping modulo 2^bits (integer → integer casts discard the high bits).
uint32_t int_code_wrapped(DType t, int64_t v);
// A float's code: truncated toward zero; NaN, infinities and values whose truncation lies
// outside the type's range give 0 (ml_dtypes; the spec leaves this undefined).
uint32_t int_code_from_double(DType t, double v);

// ---- storage ----

// Code of element i of a tensor of low-precision type t (packed or one byte each) whose bytes
// start at `data`.
uint32_t get(DType t, const void* data, int64_t i);
// Writes element i's code; other elements' bits are kept. A writer of a whole packed tensor
// zeroes its bytes first so that the padding bits of the last byte are zero, as ONNX writes them.
void set(DType t, void* data, int64_t i, uint32_t code);

// Element i as a double: a float's value (NaN and infinities included) or an integer's.
double get_value(DType t, const void* data, int64_t i);

}  // namespace polyinfer::lowp
