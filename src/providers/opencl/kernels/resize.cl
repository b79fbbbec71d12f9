// Float32 Resize over the last two axes (ops/resize.cpp): the output viewed as [outer, OH, OW],
// each output row and column reading at most two input rows and columns with the weights the
// CPU's resize::plan_axis computed on the host (nearest: one tap of weight 1; linear: two),
// from a table of 4 floats per output index: index 0, index 1 (exact integers), weight 0,
// weight 1; index 0 < 0 marks tf_crop_and_resize's extrapolation. As on the CPU the columns are
// interpolated first, then the rows.
typedef struct {
  uint n;
  uint oh, ow, h, w;
  uint off_x, off_t, off_y;
  uint t_cols;  // where the columns' entries start in the table (after the rows')
  float extrapolation;
} ResizeParams;

float resize_row(__global const float* x, uint w, uint base, uint r, uint c0, uint c1, float w0,
                 float w1) {
  const uint at = base + r * w;
  float v = w0 * x[at + c0];
  if (w1 != 0.0f) v += w1 * x[at + c1];  // never 0 * inf (the CPU has no such tap)
  return v;
}

__kernel void resize(__global const float* x, __global const float* tab, __global float* y,
                     const ResizeParams p) {
  const uint step = get_global_size(0);
  for (uint i = get_global_id(0); i < p.n; i += step) {
    const uint oc = i % p.ow;
    const uint t = i / p.ow;
    const uint orow = t % p.oh;
    const uint outer = t / p.oh;
    const uint tr = p.off_t + orow * 4u, tc = p.off_t + p.t_cols + oc * 4u;
    const float r0 = tab[tr], c0 = tab[tc];
    float v = p.extrapolation;
    if (r0 >= 0.0f && c0 >= 0.0f) {
      const uint base = p.off_x + outer * p.h * p.w;
      const uint c0u = (uint)c0, c1u = (uint)tab[tc + 1u];
      const float cw0 = tab[tc + 2u], cw1 = tab[tc + 3u];
      v = tab[tr + 2u] * resize_row(x, p.w, base, (uint)r0, c0u, c1u, cw0, cw1);
      const float rw1 = tab[tr + 3u];
      if (rw1 != 0.0f) v += rw1 * resize_row(x, p.w, base, (uint)tab[tr + 1u], c0u, c1u, cw0, cw1);
    }
    y[p.off_y + i] = v;
  }
}
