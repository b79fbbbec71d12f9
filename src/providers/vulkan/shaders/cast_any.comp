// Cast between the integer types, bool, float16 and float32 (ops/cast.cpp), element by element,
// with the CPU's rules (src/providers/cpu/reference/cast.cpp):
// - integer -> integer wraps (the low bytes of the 64-bit two's complement value);
// - anything -> bool is != 0 (NaN is true, -0 false); bool -> anything is 0 or 1;
// - float -> integer truncates toward zero and saturates at the target's range; NaN gives 0;
// - integer -> float16/float32 rounds once, to nearest even (float16: inf past 65504).
// Everything is 32-bit integer arithmetic on the elements' bits (elem.glsl, half.glsl): no
// shaderInt64 and no 8- or 16-bit storage needed, and the roundings are exact on every device.
// float32 <-> float16 alone goes through cast.comp.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"
#include "half.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { uint x[]; };
layout(std430, set = 0, binding = 1) buffer Out { uint y[]; };

layout(push_constant) uniform Params {
  uint n;
  uint off_x;  // in elements of the input's type
  uint off_y;  // in elements of the output's type
  uint from_size;
  uint from_kind;  // PI_KIND_*
  uint to_size;
  uint to_kind;
} p;

PI_DEFINE_LOAD(load_x, x)
PI_DEFINE_STORE(store_y, y)

// float32 bits -> the integer of `size` bytes (signed or not): truncated toward zero, saturated
// at the type's range, NaN 0. The magnitude is built from the exponent and mantissa, so no float
// -> int conversion (undefined out of range) is involved.
uvec2 float_to_int(uint f, uint size, bool to_signed) {
  const bool neg = (f >> 31) != 0u;
  const uint e = (f >> 23) & 0xffu, m = f & 0x7fffffu;
  if (e == 255u && m != 0u) return uvec2(0u);
  const uint bits = size * 8u;
  uvec2 bound;  // the largest magnitude of the sign's side
  if (to_signed) {
    bound = pi_shl64(uvec2(1u, 0u), bits - 1u);
    if (!neg) bound = bound.x != 0u ? uvec2(bound.x - 1u, bound.y) : uvec2(~0u, bound.y - 1u);
  } else {
    bound = neg ? uvec2(0u) : pi_low_mask(bits);
  }
  uvec2 mag = uvec2(0u);
  bool huge = e == 255u;  // infinity
  if (!huge && e >= 127u) {
    const uint exp = e - 127u, m24 = m | 0x800000u;
    if (exp <= 23u) mag = uvec2(m24 >> (23u - exp), 0u);
    else if (exp >= 64u) huge = true;
    else mag = pi_shl64(uvec2(m24, 0u), exp - 23u);
  }
  if (huge || pi_ult64(bound, mag)) mag = bound;
  return neg ? pi_neg64(mag) : mag;
}

// A 64-bit integer (signed or not) -> float32 bits, or float16 bits when to_half,
// rounded to nearest even: the magnitude keeps its top 24 (11) bits, rounded on the rest.
uint int_to_float(uvec2 v, bool is_signed, bool to_half) {
  const bool neg = is_signed && int(v.y) < 0;
  const uvec2 mag = neg ? pi_neg64(v) : v;
  const uint sign = neg ? 1u : 0u;
  const uint prec = to_half ? 11u : 24u;
  if (mag.y == 0u && mag.x < (1u << prec)) {  // exact
    const float f = float(mag.x);
    return to_half ? (sign << 15) | pi_float_to_half(f) : (sign << 31) | floatBitsToUint(f);
  }
  const uint top = mag.y != 0u ? uint(findMSB(mag.y)) + 32u : uint(findMSB(mag.x));
  uint s = top + 1u - prec;  // bits dropped, >= 1
  uint q = pi_shr64(mag, s).x;  // < 2^prec
  const uvec2 rem = mag & pi_low_mask(s);
  const uvec2 halfway = pi_shl64(uvec2(1u, 0u), s - 1u);
  if (pi_ult64(halfway, rem) || (rem == halfway && (q & 1u) != 0u)) {
    ++q;
    if (q == (1u << prec)) {
      q >>= 1;
      ++s;
    }
  }
  const uint exp = s + prec - 1u;  // q * 2^s = 1.f * 2^exp
  if (to_half) {
    if (exp > 15u) return (sign << 15) | 0x7c00u;  // past 65504: inf
    return (sign << 15) | ((exp + 15u) << 10) | (q & 0x3ffu);
  }
  return (sign << 31) | ((exp + 127u) << 23) | (q & 0x7fffffu);
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const bool from_float = p.from_kind == PI_KIND_FLOAT;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    const uvec2 raw = load_x(p.from_size, p.off_x + i);
    uvec2 out_bits;
    if (p.to_kind == PI_KIND_BOOL) {
      const bool nonzero = from_float ? (raw.x & (p.from_size == 2u ? 0x7fffu : 0x7fffffffu)) != 0u
                                      : (raw.x | raw.y) != 0u;
      out_bits = uvec2(nonzero ? 1u : 0u, 0u);
    } else if (from_float) {
      // float16 widens exactly; to_kind is an integer (float -> float is cast.comp's).
      const uint f = p.from_size == 2u ? floatBitsToUint(pi_half_to_float(raw.x)) : raw.x;
      out_bits = float_to_int(f, p.to_size, p.to_kind == PI_KIND_INT);
    } else {
      const uvec2 v = pi_widen(raw, p.from_size, p.from_kind);
      if (p.to_kind == PI_KIND_FLOAT)
        out_bits = uvec2(int_to_float(v, p.from_kind == PI_KIND_INT, p.to_size == 2u), 0u);
      else
        out_bits = v;  // integer -> integer: the store keeps the low bytes
    }
    store_y(p.to_size, p.off_y + i, out_bits);
  }
}
