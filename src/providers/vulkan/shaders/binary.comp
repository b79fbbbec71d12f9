// Float32 Add/Sub/Mul/Div/Pow with numpy broadcasting up to rank 6 (ops/elementwise.cpp).
// The tensors are whole VkBuffers (binding offsets would need minStorageBufferOffsetAlignment);
// each tensor's start inside its buffer comes as an element offset. `dims` is the output shape
// (rank <= 6) and sa/sb the inputs' element strides in it (0 on broadcast dimensions).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer InA { PI_T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer InB { PI_T b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { PI_T c[]; };

layout(push_constant) uniform Params {
  uint op;     // 0 Add, 1 Sub, 2 Mul, 3 Div, 4 Pow
  uint rank;
  uint n;      // output elements
  uint off_a;
  uint off_b;
  uint off_c;
  uint dims[6];
  uint sa[6];
  uint sb[6];
} p;

// C's pow (the CPU computes in double and rounds): GLSL's pow is undefined for x < 0 and for
// x = 0 with y <= 0, so the sign, zeros and the special cases are handled here and only
// pow(|x|, y) with |x| > 0 is left to the device.
float pi_pow(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;  // even for a NaN in the other operand
  if (isnan(x) || isnan(y)) return x + y;
  const bool integer = floor(y) == y;
  const bool odd = integer && abs(mod(y, 2.0)) == 1.0;
  if (x < 0.0 && !integer && !isinf(y)) return uintBitsToFloat(0x7fc00000u);  // NaN
  const float ax = abs(x);
  float r;
  if (ax == 0.0) r = y > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
  else if (ax == 1.0) r = 1.0;  // (-1)^±inf
  else if (isinf(y)) r = (ax > 1.0) == (y > 0.0) ? uintBitsToFloat(0x7f800000u) : 0.0;
  else if (isinf(ax)) r = y > 0.0 ? ax : 0.0;
  else r = pow(ax, y);
  // A negative base (or -0) keeps its sign under an odd integer exponent.
  return (odd && (x < 0.0 || (x == 0.0 && 1.0 / x < 0.0))) ? -r : r;
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    uint rem = i;
    uint ia = p.off_a;
    uint ib = p.off_b;
    for (int k = int(p.rank) - 1; k >= 0; --k) {
      const uint d = p.dims[k];
      const uint coord = rem % d;
      rem /= d;
      ia += coord * p.sa[k];
      ib += coord * p.sb[k];
    }
    const float x = PI_LD(a[ia]);
    const float y = PI_LD(b[ib]);
    float r;
    if (p.op == 0u) r = x + y;
    else if (p.op == 1u) r = x - y;
    else if (p.op == 2u) r = x * y;
    else if (p.op == 3u) r = x / y;
    else r = pi_pow(x, y);
    c[p.off_c + i] = PI_ST(r);
  }
}
