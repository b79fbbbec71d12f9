// The element type of the data-movement shaders (copy, gather, pad, where). They move elements as
// bits and compute nothing on them, so one shader serves every dtype of one size. Each is compiled
// four times (CMakeLists.txt):
//   <name>      4-byte elements: float32, int32, uint32
//   <name>_f16  2-byte (-DPI_FP16): float16, bfloat16, int16, uint16; needs 16-bit storage
//   <name>_b8   1-byte (-DPI_B8): bool, int8, uint8, the 8-bit floats
//   <name>_b64  8-byte (-DPI_B64): int64, uint64, float64, complex64
// Include it first, before any code: it may declare an extension.
//
//   layout(std430, binding = 0) readonly buffer In { PI_M x[]; };
//   layout(std430, binding = 1) PI_WRITEONLY buffer Out { PI_M y[]; };
//   PI_V v = PI_GET(x, i);     // element i, as bits
//   PI_PUT(y, i, v);           // a statement
//   PI_V c = PI_BITS(lo, hi);  // an element from its bits (the low 8, 16 or 32 of lo, or both)
//
// No variant needs shaderInt64 or 8-bit storage, which some devices lack: 8-byte elements are
// pairs of 32-bit words, and 1-byte elements live in 32-bit words, element i being byte i & 3 of
// word i >> 2 (little-endian, as the host writes them). A 1-byte store clears its byte and ORs in
// the new one with two atomics, so threads writing neighbouring bytes of one word never lose each
// other's writes (a plain read-modify-write would); such an output buffer cannot be writeonly.
// 2-byte values are widened to uint as they are loaded: with only 16-bit storage (no shaderInt16),
// a shader may load, store and convert 16-bit values but not select between them.
#ifdef PI_FP16
#extension GL_EXT_shader_16bit_storage : require
#define PI_M uint16_t
#define PI_V uint
#define PI_GET(b, i) uint(b[i])
#define PI_PUT(b, i, v) b[i] = uint16_t(v)
#define PI_BITS(lo, hi) ((lo) & 0xffffu)
#define PI_WRITEONLY writeonly
#elif defined(PI_B8)
#define PI_M uint
#define PI_V uint
#define PI_GET(b, i) ((b[(i) >> 2] >> (((i) & 3u) * 8u)) & 0xffu)
#define PI_PUT(b, i, v)                                       \
  {                                                           \
    const uint pi_i_ = (i), pi_s_ = (pi_i_ & 3u) * 8u;         \
    atomicAnd(b[pi_i_ >> 2], ~(0xffu << pi_s_));              \
    atomicOr(b[pi_i_ >> 2], ((v) & 0xffu) << pi_s_);          \
  }
#define PI_BITS(lo, hi) ((lo) & 0xffu)
#define PI_WRITEONLY
#elif defined(PI_B64)
#define PI_M uvec2
#define PI_V uvec2
#define PI_GET(b, i) b[i]
#define PI_PUT(b, i, v) b[i] = (v)
#define PI_BITS(lo, hi) uvec2(lo, hi)
#define PI_WRITEONLY writeonly
#else
#define PI_M uint
#define PI_V uint
#define PI_GET(b, i) b[i]
#define PI_PUT(b, i, v) b[i] = (v)
#define PI_BITS(lo, hi) (lo)
#define PI_WRITEONLY writeonly
#endif
