// Elements of any dtype in buffers of 32-bit words, and 64-bit integers as pairs of words, for
// the shaders that compute on integers (cast_any.comp, compare.comp). Nothing here needs
// shaderInt64, 8- or 16-bit storage, which some devices lack.
//
// A dtype is described by its size in bytes (1, 2, 4, 8) and a kind (PI_KIND_*). Element i of a
// tensor whose buffer is `uint b[]` and whose offset is `off` elements:
//   PI_DEFINE_LOAD(load_x, x)   // uvec2 load_x(uint size, uint i): its bits, zero-extended
//   PI_DEFINE_STORE(store_y, y) // void store_y(uint size, uint i, uvec2 bits): the low bytes
// (one line each, outside any function). Sub-word elements are bytes of a little-endian word, as
// the host writes them; a sub-word store clears its bytes and ORs in the new ones with two
// atomics, so threads writing neighbours in one word never lose each other's writes. Such a
// buffer cannot be writeonly.
#ifndef PI_ELEM_GLSL
#define PI_ELEM_GLSL

#define PI_KIND_UINT 0u   // uint8..uint64
#define PI_KIND_INT 1u    // int8..int64, two's complement
#define PI_KIND_FLOAT 2u  // float16 (size 2), float32 (size 4)
#define PI_KIND_BOOL 3u   // one byte, 0 or 1

#define PI_DEFINE_LOAD(fn, b)                                         \
  uvec2 fn(uint size, uint i) {                                       \
    if (size == 8u) return uvec2(b[2u * i], b[2u * i + 1u]);          \
    if (size == 4u) return uvec2(b[i], 0u);                           \
    if (size == 2u) return uvec2((b[i >> 1] >> ((i & 1u) * 16u)) & 0xffffu, 0u); \
    return uvec2((b[i >> 2] >> ((i & 3u) * 8u)) & 0xffu, 0u);         \
  }

#define PI_DEFINE_STORE(fn, b)                                        \
  void fn(uint size, uint i, uvec2 v) {                               \
    if (size == 8u) {                                                 \
      b[2u * i] = v.x;                                                \
      b[2u * i + 1u] = v.y;                                           \
    } else if (size == 4u) {                                          \
      b[i] = v.x;                                                     \
    } else {                                                          \
      const uint per = 4u / size, s = (i % per) * size * 8u;          \
      const uint mask = (size == 2u ? 0xffffu : 0xffu) << s;          \
      atomicAnd(b[i / per], ~mask);                                   \
      atomicOr(b[i / per], (v.x << s) & mask);                        \
    }                                                                 \
  }

// ---- 64-bit integers as uvec2(low word, high word) ----

uvec2 pi_neg64(uvec2 v) {
  const uint lo = ~v.x + 1u;
  return uvec2(lo, ~v.y + (lo == 0u ? 1u : 0u));
}

uvec2 pi_shl64(uvec2 v, uint s) {  // s < 64
  if (s == 0u) return v;
  if (s >= 32u) return uvec2(0u, v.x << (s - 32u));
  return uvec2(v.x << s, (v.y << s) | (v.x >> (32u - s)));
}

uvec2 pi_shr64(uvec2 v, uint s) {  // s < 64, logical
  if (s == 0u) return v;
  if (s >= 32u) return uvec2(v.y >> (s - 32u), 0u);
  return uvec2((v.x >> s) | (v.y << (32u - s)), v.y >> s);
}

// 2^s - 1 (the low s bits set), 0 < s <= 64.
uvec2 pi_low_mask(uint s) {
  if (s >= 64u) return uvec2(~0u);
  if (s >= 32u) return uvec2(~0u, (1u << (s - 32u)) - 1u);
  return uvec2((1u << s) - 1u, 0u);
}

bool pi_ult64(uvec2 a, uvec2 b) { return a.y < b.y || (a.y == b.y && a.x < b.x); }

bool pi_slt64(uvec2 a, uvec2 b) {
  return int(a.y) < int(b.y) || (a.y == b.y && a.x < b.x);
}

// The bits of an element of `size` bytes and `kind`, widened to 64 bits: sign-extended for
// signed integers, zero-extended otherwise (a bool reads as 0 or 1, whatever its byte).
uvec2 pi_widen(uvec2 raw, uint size, uint kind) {
  if (kind == PI_KIND_BOOL) return uvec2(raw.x != 0u ? 1u : 0u, 0u);
  if (kind != PI_KIND_INT || size == 8u) return raw;
  const uint bits = size * 8u;
  uint lo = raw.x;
  if (bits < 32u && ((lo >> (bits - 1u)) & 1u) != 0u) lo |= ~0u << bits;
  return uvec2(lo, int(lo) < 0 ? ~0u : 0u);
}

#endif
