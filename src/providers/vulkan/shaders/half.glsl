// Float16 <-> float32 conversions on 32-bit integers (no 16-bit feature needed): storage.glsl's
// float16 loads and stores, and cast_any.comp. They round to nearest even, overflow to inf and
// keep subnormals and NaNs on every device, exactly as the CPU's Float16 does; Vulkan lets a
// device's own float16_t(x) round toward zero and flush subnormals.
#ifndef PI_HALF_GLSL
#define PI_HALF_GLSL

// float16 bits -> float32 (exact: every float16 value is a float32 value).
float pi_half_to_float(uint h) {
  const uint s = (h & 0x8000u) << 16;
  const uint e = (h >> 10) & 0x1fu;
  const uint m = h & 0x3ffu;
  if (e == 0u) return uintBitsToFloat(s | floatBitsToUint(float(m) * 5.9604644775390625e-8));
  if (e == 31u) return uintBitsToFloat(s | 0x7f800000u | (m << 13));
  return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
}

// float32 -> float16 bits, rounded to nearest even; beyond 65504 (after rounding) inf, a NaN
// becomes the quiet NaN of its sign (the CPU's Float16::from_float, bit for bit), tiny values
// become subnormals or signed zero.
uint pi_float_to_half(float f) {
  const uint x = floatBitsToUint(f);
  const uint s = (x >> 16) & 0x8000u;
  const uint a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return s | 0x7e00u;  // NaN
  if (a >= 0x477ff000u) return s | 0x7c00u;  // >= 65520 rounds past the largest half: inf
  if (a >= 0x38800000u) {                    // a normal half (>= 2^-14)
    const uint r = a - 0x38000000u;          // exponent rebiased from 127 to 15
    return s | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13);
  }
  if (a < 0x33000000u) return s;             // <= 2^-25 rounds to (signed) zero
  // A subnormal half: the value in units of 2^-24, rounded to nearest even.
  const uint mant = (a & 0x7fffffu) | 0x800000u;
  const uint shift = 126u - (a >> 23);       // 14..24
  uint q = mant >> shift;
  const uint rem = mant & ((1u << shift) - 1u), half_ulp = 1u << (shift - 1u);
  if (rem > half_ulp || (rem == half_ulp && (q & 1u) != 0u)) ++q;
  return s | q;
}

#endif
