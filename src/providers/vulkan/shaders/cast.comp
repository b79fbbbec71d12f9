// Cast between float32 and float16 (ops/cast.cpp), element by element; the conversions are
// storage.glsl's (round to nearest even, inf beyond the float16 range, NaNs and subnormals kept),
// so results match the CPU's Cast bit for bit. Both tensors are bound twice, once per element
// type; the shader reads and writes only the pair `to_half` selects. Needs 16-bit storage: the
// kernel refuses on devices without it.
#version 450
#extension GL_GOOGLE_include_directive : require
#define PI_FP16
#include "storage.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer InF { float xf[]; };
layout(std430, set = 0, binding = 1) readonly buffer InH { uint16_t xh[]; };
layout(std430, set = 0, binding = 2) writeonly buffer OutF { float yf[]; };
layout(std430, set = 0, binding = 3) writeonly buffer OutH { uint16_t yh[]; };

layout(push_constant) uniform Params {
  uint to_half;  // 1: float32 -> float16, 0: float16 -> float32
  uint n;
  uint off_x;    // in elements of the input's type
  uint off_y;    // in elements of the output's type
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    if (p.to_half != 0u) yh[p.off_y + i] = PI_ST(xf[p.off_x + i]);
    else yf[p.off_y + i] = PI_LD(xh[p.off_x + i]);
  }
}
