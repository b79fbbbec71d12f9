// The element type of a shader's tensor buffers. Each shader that includes this file is
// compiled twice (CMakeLists.txt): as is, for float32 tensors, and with -DPI_FP16 into
// "<name>_f16", for float16 tensors. Include it first, before any code: it may declare an
// extension.
//
//   layout(std430, binding = 0) readonly buffer In { PI_T x[]; };
//   float v = PI_LD(x[i]);     // every load widens to float32
//   y[i] = PI_ST(v);           // every store rounds once
//
// Float16 is storage only: arithmetic and accumulation stay float32 (accuracy, and 16-bit
// storage is the widely supported feature; shaderFloat16 arithmetic is not). The values are
// moved as uint16_t bit patterns and converted with integer arithmetic (half.glsl), not with
// float16_t(x): Vulkan lets a device convert float32 -> float16 by rounding toward zero and
// flush float16 subnormals, while these conversions round to nearest even, overflow to inf and
// keep subnormals and NaNs on every device, exactly as the CPU's Float16 does.
#ifdef PI_FP16
#extension GL_EXT_shader_16bit_storage : require

#include "half.glsl"

#define PI_T uint16_t
#define PI_LD(v) pi_half_to_float(uint(v))
#define PI_ST(v) uint16_t(pi_float_to_half(v))
#else
#define PI_T float
#define PI_LD(v) (v)
#define PI_ST(v) (v)
#endif
