// Where of elements of any size (move.glsl) with numpy broadcasting of all three inputs up to
// rank 6 (ops/where.cpp). The condition is a bool tensor, one byte per element: it is read as
// 32-bit words and the byte picked out (storage buffers are allocated in whole words, so the last
// word is inside the buffer). Its offset is in bytes, the others' in elements.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "move.glsl"
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Cond { uint c[]; };
layout(std430, set = 0, binding = 1) readonly buffer InX { PI_M x[]; };
layout(std430, set = 0, binding = 2) readonly buffer InY { PI_M y[]; };
layout(std430, set = 0, binding = 3) PI_WRITEONLY buffer Out { PI_M o[]; };

layout(push_constant) uniform Params {
  uint rank;
  uint n;       // output elements
  uint off_c;   // bytes
  uint off_x;
  uint off_y;
  uint off_o;
  uint dims[6];
  uint sc[6];
  uint sx[6];
  uint sy[6];
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    uint rem = i, ic = p.off_c, ix = p.off_x, iy = p.off_y;
    for (int k = int(p.rank) - 1; k >= 0; --k) {
      const uint d = p.dims[k];
      const uint coord = rem % d;
      rem /= d;
      ic += coord * p.sc[k];
      ix += coord * p.sx[k];
      iy += coord * p.sy[k];
    }
    const bool cond = ((c[ic >> 2] >> ((ic & 3u) * 8u)) & 0xffu) != 0u;
    PI_PUT(o, p.off_o + i, cond ? PI_GET(x, ix) : PI_GET(y, iy));
  }
}
