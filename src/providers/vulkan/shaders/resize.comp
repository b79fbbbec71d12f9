// Float32 Resize over the last two axes (ops/resize.cpp): the output viewed as [outer, OH, OW],
// each output row and column reading at most two input rows and columns with the weights the
// CPU's resize::plan_axis computed on the host (nearest: one tap of weight 1; linear: two),
// from a table of 4 floats per output index: index 0, index 1 (exact integers), weight 0,
// weight 1; index 0 < 0 marks tf_crop_and_resize's extrapolation. As on the CPU the columns are
// interpolated first, then the rows.
#version 450
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Table { float tab[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params {
  uint n;
  uint oh, ow, h, w;
  uint off_x, off_t, off_y;
  uint t_cols;        // where the columns' entries start in the table (after the rows')
  float extrapolation;
} p;

float row(uint base, int r, uint c0, uint c1, float w0, float w1) {
  const uint at = base + uint(r) * p.w;
  float v = w0 * x[at + c0];
  if (w1 != 0.0) v += w1 * x[at + c1];  // never 0 * inf (the CPU has no such tap)
  return v;
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    const uint oc = i % p.ow;
    const uint t = i / p.ow;
    const uint orow = t % p.oh;
    const uint outer = t / p.oh;
    const uint tr = p.off_t + orow * 4u, tc = p.off_t + p.t_cols + oc * 4u;
    const float r0 = tab[tr], c0 = tab[tc];
    float v = p.extrapolation;
    if (r0 >= 0.0 && c0 >= 0.0) {
      const uint base = p.off_x + outer * p.h * p.w;
      const uint c0u = uint(c0), c1u = uint(tab[tc + 1u]);
      const float cw0 = tab[tc + 2u], cw1 = tab[tc + 3u];
      v = tab[tr + 2u] * row(base, int(r0), c0u, c1u, cw0, cw1);
      const float rw1 = tab[tr + 3u];
      if (rw1 != 0.0) v += rw1 * row(base, int(tab[tr + 1u]), c0u, c1u, cw0, cw1);
    }
    y[p.off_y + i] = v;
  }
}
