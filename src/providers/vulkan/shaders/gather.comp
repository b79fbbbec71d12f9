// Gather of elements of any size (move.glsl; ops/gather.cpp): data viewed as [outer, dim, inner]
// around the axis, the output as [outer, n, inner] for n indices. The indices are int32 or int64
// (wide = 1: the low word of each pair), already checked on the host to lie in [-dim, dim), so the
// low word read as int is the index; negative ones count from the end.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "move.glsl"
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { PI_M x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Idx { uint ind[]; };
layout(std430, set = 0, binding = 2) PI_WRITEONLY buffer Out { PI_M y[]; };

layout(push_constant) uniform Params {
  uint n_out;
  uint inner;
  uint n_idx;
  uint dim;
  uint off_x;
  uint off_i;  // in 32-bit words
  uint off_y;
  uint wide;   // 1: int64 indices
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n_out; i += step) {
    const uint k = i % p.inner;
    const uint t = i / p.inner;
    const uint j = t % p.n_idx;
    const uint o = t / p.n_idx;
    int v = int(ind[p.off_i + (j << p.wide)]);
    if (v < 0) v += int(p.dim);
    PI_PUT(y, p.off_y + i, PI_GET(x, p.off_x + (o * p.dim + uint(v)) * p.inner + k));
  }
}
