// Strided copy of elements of any size (move.glsl; ops/copy.h): walks an iteration shape `dims`
// (rank <= 6) and copies element (coords) from x at sum(coords * sx) to y at sum(coords * sy).
// Transpose is the output shape with the input's strides permuted; each Concat input is its own
// shape with the output's strides, starting at its offset along the axis.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "move.glsl"
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { PI_M x[]; };
layout(std430, set = 0, binding = 1) PI_WRITEONLY buffer Out { PI_M y[]; };

layout(push_constant) uniform Params {
  uint n;
  uint rank;
  uint off_x;
  uint off_y;
  uint dims[6];
  uint sx[6];
  uint sy[6];
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    uint rem = i, ix = p.off_x, iy = p.off_y;
    for (int k = int(p.rank) - 1; k >= 0; --k) {
      const uint d = p.dims[k];
      const uint coord = rem % d;
      rem /= d;
      ix += coord * p.sx[k];
      iy += coord * p.sy[k];
    }
    PI_PUT(y, iy, PI_GET(x, ix));
  }
}
