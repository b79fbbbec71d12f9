#include "core/low_precision.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include "polyinfer/status.h"

namespace polyinfer::lowp {
namespace {

// A sign-exponent-mantissa float of at most 8 bits.
struct Format {
  int exp_bits, man_bits, bias;
  double max;
  // FN: no infinity, NaN is every bit set after the sign (float8e4m3fn). FNUZ: no infinity and
  // no -0; the -0 pattern is the one NaN. IEEE: infinities and NaNs at the top exponent. None:
  // every pattern is a finite number (the 6- and 4-bit floats).
  enum class Special { FN, FNUZ, IEEE, None } special;
};

const Format& format_of(DType t) {
  static const Format kE4M3FN{4, 3, 7, 448.0, Format::Special::FN};
  static const Format kE4M3FNUZ{4, 3, 8, 240.0, Format::Special::FNUZ};
  static const Format kE5M2{5, 2, 15, 57344.0, Format::Special::IEEE};
  static const Format kE5M2FNUZ{5, 2, 16, 57344.0, Format::Special::FNUZ};
  static const Format kE2M1{2, 1, 1, 6.0, Format::Special::None};
  static const Format kE2M3{2, 3, 1, 7.5, Format::Special::None};
  static const Format kE3M2{3, 2, 3, 28.0, Format::Special::None};
  switch (t) {
    case DType::Float8E4M3FN: return kE4M3FN;
    case DType::Float8E4M3FNUZ: return kE4M3FNUZ;
    case DType::Float8E5M2: return kE5M2;
    case DType::Float8E5M2FNUZ: return kE5M2FNUZ;
    case DType::Float4E2M1: return kE2M1;
    case DType::Float6E2M3: return kE2M3;
    case DType::Float6E3M2: return kE3M2;
    default:
      fail(ErrorCode::Internal, "dtype ", dtype_name(t), " is not a sign-exponent-mantissa float");
  }
}

float e8m0_to_float(uint32_t code) {
  if (code == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(code) - 127);
}

}  // namespace

float to_float(DType t, uint32_t code) {
  if (t == DType::Float8E8M0) return e8m0_to_float(code & 0xFF);
  const Format& f = format_of(t);
  const int m = f.man_bits, e = f.exp_bits;
  const uint32_t sign_bit = 1u << (e + m);
  const uint32_t exp_ones = (1u << e) - 1, man_ones = (1u << m) - 1;
  code &= (sign_bit << 1) - 1;
  const uint32_t E = (code >> m) & exp_ones, M = code & man_ones;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  switch (f.special) {
    case Format::Special::FNUZ:
      if (code == sign_bit) return nan;
      break;
    case Format::Special::FN:
      if (E == exp_ones && M == man_ones) return code & sign_bit ? -nan : nan;
      break;
    case Format::Special::IEEE:
      if (E == exp_ones) {
        const float inf = std::numeric_limits<float>::infinity();
        if (M == 0) return code & sign_bit ? -inf : inf;
        return code & sign_bit ? -nan : nan;
      }
      break;
    case Format::Special::None: break;
  }
  const float v =
      E == 0 ? std::ldexp(static_cast<float>(M), 1 - f.bias - m)
             : std::ldexp(static_cast<float>((1u << m) + M), static_cast<int>(E) - f.bias - m);
  return code & sign_bit ? -v : v;
}

uint32_t from_double(DType t, double v, bool saturate) {
  const Format& f = format_of(t);
  const int m = f.man_bits, e = f.exp_bits;
  const uint32_t sign_bit = 1u << (e + m);
  const uint32_t exp_ones = (1u << e) - 1, man_ones = (1u << m) - 1;
  const bool negative = std::signbit(v);
  const uint32_t s = negative ? sign_bit : 0;
  if (std::isnan(v)) {
    switch (f.special) {
      case Format::Special::FN: return s | (sign_bit - 1);
      case Format::Special::FNUZ: return sign_bit;
      case Format::Special::IEEE: return s | (exp_ones << m) | (1u << (m - 1));
      case Format::Special::None: return negative ? 0 : sign_bit;
    }
  }
  const auto overflow = [&]() -> uint32_t {
    if (saturate || f.special == Format::Special::None) {
      // The largest finite pattern: FN keeps its top exponent for numbers but for the NaN.
      const uint32_t top = f.special == Format::Special::IEEE ? exp_ones - 1 : exp_ones;
      const uint32_t man = f.special == Format::Special::FN ? man_ones - 1 : man_ones;
      return s | (top << m) | man;
    }
    switch (f.special) {
      case Format::Special::IEEE: return s | (exp_ones << m);
      case Format::Special::FN: return s | (sign_bit - 1);
      default: return sign_bit;  // FNUZ's NaN
    }
  };
  const double a = std::fabs(v);
  if (std::isinf(a) || a > 2 * f.max) return overflow();
  const uint32_t zero = f.special == Format::Special::FNUZ ? 0 : s;
  if (a == 0) return zero;
  // Round to a multiple of the quantum of a's binade (of the subnormals' below the normals):
  // scaling by a power of two is exact and nearbyint rounds half to even.
  const int emin = 1 - f.bias;
  int exp = std::max(std::ilogb(a), emin);
  double r = std::nearbyint(std::ldexp(a, m - exp));
  if (std::ldexp(r, exp - m) > f.max) return overflow();
  if (r == 0) return zero;
  if (r >= std::ldexp(1.0, m + 1)) {  // rounded up into the next binade
    r /= 2;
    ++exp;
  }
  const auto units = static_cast<uint32_t>(r);
  if (units < (1u << m)) return s | units;  // subnormal (exp == emin)
  return s | (static_cast<uint32_t>(exp + f.bias) << m) | (units - (1u << m));
}

bool parse_e8m0_rounding(const char* text, E8M0Rounding* mode) {
  const std::string_view t(text);
  if (t == "up") *mode = E8M0Rounding::Up;
  else if (t == "down")
    *mode = E8M0Rounding::Down;
  else if (t == "nearest")
    *mode = E8M0Rounding::Nearest;
  else
    return false;
  return true;
}

uint8_t e8m0_from_float(float v, bool saturate, E8M0Rounding mode) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  uint32_t exponent = (bits >> 23) & 0xFF;
  if (exponent == 0xFF) return std::isinf(v) && saturate ? 0xFE : 0xFF;
  bool up = false;
  switch (mode) {
    case E8M0Rounding::Up: up = (bits & 0x7FFFFF) != 0; break;
    case E8M0Rounding::Down: break;
    case E8M0Rounding::Nearest: {
      // As the ONNX reference: up when the first dropped bit is set (a normal number's tie
      // rounds up), but a float subnormal's exact half rounds down.
      const bool guard = (bits & 0x400000) != 0;
      const bool rest = (bits & 0x3FFFFF) != 0;
      up = guard && (rest || exponent > 0);
      break;
    }
  }
  if (up && saturate && exponent == 0xFE) up = false;
  exponent += up ? 1 : 0;
  return static_cast<uint8_t>(exponent);
}

int64_t int_min(DType t) {
  switch (t) {
    case DType::Int4: return -8;
    case DType::Int2: return -2;
    default: return 0;
  }
}

int64_t int_max(DType t) {
  switch (t) {
    case DType::Int4: return 7;
    case DType::UInt4: return 15;
    case DType::Int2: return 1;
    case DType::UInt2: return 3;
    default: fail(ErrorCode::Internal, "dtype ", dtype_name(t), " is not a 4- or 2-bit integer");
  }
}

int64_t int_value(DType t, uint32_t code) {
  const int bits = dtype_bits(t);
  const uint32_t mask = (1u << bits) - 1;
  code &= mask;
  if ((t == DType::Int4 || t == DType::Int2) && (code >> (bits - 1)))
    return static_cast<int64_t>(code) - (int64_t{1} << bits);
  return static_cast<int64_t>(code);
}

uint32_t int_code_wrapped(DType t, int64_t v) {
  return static_cast<uint32_t>(static_cast<uint64_t>(v) & ((1u << dtype_bits(t)) - 1));
}

uint32_t int_code_from_double(DType t, double v) {
  if (!std::isfinite(v)) return 0;
  const double r = std::trunc(v);
  if (r < static_cast<double>(int_min(t)) || r > static_cast<double>(int_max(t))) return 0;
  return int_code_wrapped(t, static_cast<int64_t>(r));
}

uint32_t get(DType t, const void* data, int64_t i) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (!is_packed(t)) return p[i];
  const int bits = dtype_bits(t);
  const uint64_t bit = static_cast<uint64_t>(i) * static_cast<uint64_t>(bits);
  const size_t byte = bit / 8;
  const int shift = static_cast<int>(bit % 8);
  uint32_t v = static_cast<uint32_t>(p[byte]) >> shift;
  // A 6-bit element may continue into the next byte, which then exists: it holds its high bits.
  if (shift + bits > 8) v |= static_cast<uint32_t>(p[byte + 1]) << (8 - shift);
  return v & ((1u << bits) - 1);
}

void set(DType t, void* data, int64_t i, uint32_t code) {
  auto* p = static_cast<uint8_t*>(data);
  if (!is_packed(t)) {
    p[i] = static_cast<uint8_t>(code);
    return;
  }
  const int bits = dtype_bits(t);
  const uint32_t mask = (1u << bits) - 1;
  code &= mask;
  const uint64_t bit = static_cast<uint64_t>(i) * static_cast<uint64_t>(bits);
  const size_t byte = bit / 8;
  const int shift = static_cast<int>(bit % 8);
  p[byte] = static_cast<uint8_t>((p[byte] & ~(mask << shift)) | (code << shift));
  if (shift + bits > 8) {
    const int done = 8 - shift;
    const uint32_t hi_mask = mask >> done;
    p[byte + 1] = static_cast<uint8_t>((p[byte + 1] & ~hi_mask) | (code >> done));
  }
}

double get_value(DType t, const void* data, int64_t i) {
  const uint32_t code = get(t, data, i);
  if (is_low_precision_integer(t)) return static_cast<double>(int_value(t, code));
  return static_cast<double>(to_float(t, code));
}

}  // namespace polyinfer::lowp
