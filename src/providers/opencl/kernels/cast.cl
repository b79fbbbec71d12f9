// Cast between bool, the 8- to 64-bit integers, float16 and float32 (ops/cast.cpp), element by
// element, with the CPU's rules (src/providers/cpu/reference/cast.cpp):
// - integer -> integer wraps (the low bytes of the 64-bit two's complement value);
// - anything -> bool is != 0 (NaN is true, -0 false); bool -> anything is 0 or 1;
// - float -> integer truncates toward zero and saturates at the target's range; NaN gives 0;
// - integer -> float16/float32 rounds once, to nearest even (float16: inf past 65504);
// - float32 <-> float16 as the CPU's Float16 does, bit for bit.
// One variant per pair, built with (ops/cast.cpp):
//   -DPI_SRC=<type> -DPI_SRC_KIND=<PI_KIND_*>  the input's element type and kind
//   -DPI_DST=<type> -DPI_DST_KIND=<PI_KIND_*>  the output's; integers as the unsigned type of
//                   their size, since only their bits are stored
//   -DPI_DST_BITS=<n> -DPI_DST_SIGNED=<0|1>    the output integer's width and signedness
// float16 is ushort (its bits) in both places, marked by -DPI_SRC_IS_HALF=1 or
// -DPI_DST_IS_HALF=1; float32 is float.
#define PI_KIND_UINT 0
#define PI_KIND_INT 1
#define PI_KIND_FLOAT 2
#define PI_KIND_BOOL 3

typedef struct {
  uint n;
  uint off_x, off_y;  // in elements of each tensor's type
} CastParams;

// float16 bits -> float32 and back in integer arithmetic, not vload_half/vstore_half_rte: the
// CPU's Float16 turns every NaN into the quiet NaN of its sign, which a driver's conversion need
// not do, and a device flushing float32 subnormals could not keep float16's.
float pi_half_to_float(uint h) {
  const uint s = (h & 0x8000u) << 16;
  const uint e = (h >> 10) & 0x1fu;
  const uint m = h & 0x3ffu;
  if (e == 0u) return as_float(s | as_uint((float)m * 5.9604644775390625e-8f));
  if (e == 31u) return as_float(s | 0x7f800000u | (m << 13));
  return as_float(s | ((e + 112u) << 23) | (m << 13));
}

ushort pi_float_to_half(uint x) {
  const uint s = (x >> 16) & 0x8000u;
  const uint a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return (ushort)(s | 0x7e00u);   // NaN
  if (a >= 0x477ff000u) return (ushort)(s | 0x7c00u);  // rounds past 65504: inf
  if (a >= 0x38800000u) {                              // a normal half (>= 2^-14)
    const uint r = a - 0x38000000u;                    // exponent rebiased from 127 to 15
    return (ushort)(s | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
  }
  if (a < 0x33000000u) return (ushort)s;  // <= 2^-25 rounds to (signed) zero
  // A subnormal half: the value in units of 2^-24, rounded to nearest even.
  const uint mant = (a & 0x7fffffu) | 0x800000u;
  const uint shift = 126u - (a >> 23);  // 14..24
  uint q = mant >> shift;
  const uint rem = mant & ((1u << shift) - 1u), half_ulp = 1u << (shift - 1u);
  if (rem > half_ulp || (rem == half_ulp && (q & 1u) != 0u)) ++q;
  return (ushort)(s | q);
}

#if PI_SRC_KIND == PI_KIND_FLOAT && PI_DST_KIND != PI_KIND_FLOAT && PI_DST_KIND != PI_KIND_BOOL
// Truncated toward zero and saturated at the output's range, NaN 0; the bounds are powers of
// two, exact in float32, so the conversion of what lies between them is exact and defined.
ulong float_to_int(float f) {
  if (isnan(f)) return 0ul;
  const float t = trunc(f);
#if PI_DST_SIGNED
  const float bound = (float)(1ul << (PI_DST_BITS - 1));
  if (t < -bound) return ~0ul << (PI_DST_BITS - 1);
  if (t >= bound) return ~0ul >> (65 - PI_DST_BITS);
  return (ulong)convert_long(t);
#else
  const float bound = 2.0f * (float)(1ul << (PI_DST_BITS - 1));
  if (t < 0.0f) return 0ul;
  if (t >= bound) return ~0ul >> (64 - PI_DST_BITS);
  return convert_ulong(t);
#endif
}
#endif

__kernel void cast(__global const PI_SRC* x, __global PI_DST* y, const CastParams p) {
  const uint step = get_global_size(0);
  for (uint i = get_global_id(0); i < p.n; i += step) {
    const PI_SRC raw = x[p.off_x + i];
#if PI_SRC_KIND == PI_KIND_FLOAT
    // The bits decide != 0, so a device that flushes subnormals still calls them nonzero.
#if PI_SRC_IS_HALF
    const float f = pi_half_to_float(raw);
    const bool nonzero = (raw & 0x7fffu) != 0u;
#else
    const float f = raw;
    const bool nonzero = (as_uint(raw) & 0x7fffffffu) != 0u;
#endif
#if PI_DST_KIND == PI_KIND_BOOL
    y[p.off_y + i] = nonzero ? 1 : 0;
#elif PI_DST_KIND == PI_KIND_FLOAT
#if PI_DST_IS_HALF
    y[p.off_y + i] = pi_float_to_half(as_uint(f));
#else
    y[p.off_y + i] = f;
#endif
#else
    y[p.off_y + i] = (PI_DST)float_to_int(f);
#endif
#else  // an integer or bool input, widened to 64 bits
#if PI_SRC_KIND == PI_KIND_BOOL
    const ulong v = raw != 0 ? 1ul : 0ul;
#elif PI_SRC_KIND == PI_KIND_INT
    const ulong v = (ulong)(long)raw;  // sign-extended
#else
    const ulong v = (ulong)raw;
#endif
#if PI_DST_KIND == PI_KIND_BOOL
    y[p.off_y + i] = v != 0ul ? 1 : 0;
#elif PI_DST_KIND == PI_KIND_FLOAT
#if PI_SRC_KIND == PI_KIND_INT
    const float f = convert_float_rte((long)v);
#else
    const float f = convert_float_rte(v);
#endif
#if PI_DST_IS_HALF
    // One rounding: integers below 2^24 are exact in float32, and any larger one is past
    // float16's range either way.
    y[p.off_y + i] = pi_float_to_half(as_uint(f));
#else
    y[p.off_y + i] = f;
#endif
#else
    y[p.off_y + i] = (PI_DST)v;  // the low bytes
#endif
#endif
  }
}
