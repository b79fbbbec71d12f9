// Float32 BatchNormalization in inference mode (ops/norm.cpp): every element of channel c
// becomes (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c], the CPU reference's formula in
// its order. One thread per element, looping past the dispatch limit.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { PI_T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Scale { PI_T s[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { PI_T b[]; };
layout(std430, set = 0, binding = 3) readonly buffer Mean { PI_T m[]; };
layout(std430, set = 0, binding = 4) readonly buffer Var { PI_T v[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Out { PI_T y[]; };

layout(push_constant) uniform Params {
  uint n;      // elements
  uint C;      // channels
  uint inner;  // elements per channel and image (the spatial size)
  uint off_x, off_s, off_b, off_m, off_v, off_y;
  float eps;
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    const uint c = (i / p.inner) % p.C;
    y[p.off_y + i] = PI_ST((PI_LD(x[p.off_x + i]) - PI_LD(m[p.off_m + c])) /
                               sqrt(PI_LD(v[p.off_v + c]) + p.eps) * PI_LD(s[p.off_s + c]) +
                           PI_LD(b[p.off_b + c]));
  }
}
