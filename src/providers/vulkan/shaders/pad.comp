// Pad of elements of any size (move.glsl; ops/pad.cpp), rank <= 6: each output coordinate minus
// the dimension's pad before is mapped to an input coordinate as pad_source does (src/ops/pad.h):
// constant (outside: the value, as bits), reflect (period 2(dim-1), the edge not repeated), edge,
// wrap. Negative pads crop.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "move.glsl"
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { PI_M x[]; };
layout(std430, set = 0, binding = 1) PI_WRITEONLY buffer Out { PI_M y[]; };

layout(push_constant) uniform Params {
  uint rank;
  uint n;
  uint off_x;
  uint off_y;
  uint mode;    // 0 constant, 1 reflect, 2 edge, 3 wrap (cpu::PadMode)
  uint value_lo;  // the constant's bits (PI_BITS)
  uint value_hi;
  uint odims[6];
  int before[6];
  uint idims[6];
  uint xs[6];
} p;

// -1: the constant.
int source(int i, int dim) {
  if (i >= 0 && i < dim) return i;
  if (p.mode == 0u) return -1;
  if (p.mode == 2u) return i < 0 ? 0 : dim - 1;
  if (p.mode == 3u) return ((i % dim) + dim) % dim;
  if (dim == 1) return 0;
  const int period = 2 * (dim - 1);
  const int m = ((i % period) + period) % period;
  return m < dim ? m : period - m;
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    uint rem = i, ix = p.off_x;
    bool inside = true;
    for (int k = int(p.rank) - 1; k >= 0; --k) {
      const uint d = p.odims[k];
      const int coord = int(rem % d);
      rem /= d;
      const int s = source(coord - p.before[k], int(p.idims[k]));
      inside = inside && s >= 0;
      ix += uint(max(s, 0)) * p.xs[k];
    }
    PI_PUT(y, p.off_y + i, inside ? PI_GET(x, ix) : PI_BITS(p.value_lo, p.value_hi));
  }
}
