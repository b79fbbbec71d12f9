// Pad of elements of any size (elem_t; ops/pad.cpp), rank <= 6: each output coordinate minus
// the dimension's pad before is mapped to an input coordinate as pad_source does (src/ops/pad.h):
// constant (outside: the value, as bits), reflect (period 2(dim-1), the edge not repeated), edge,
// wrap. Negative pads crop.
typedef struct {
  uint rank;
  uint n;  // output elements
  uint off_x, off_y;
  uint mode;                // 0 constant, 1 reflect, 2 edge, 3 wrap (cpu::PadMode)
  uint value_lo, value_hi;  // the constant's bits: the low 8, 16 or 32 of lo, or both
  uint odims[PI_MAX_RANK];
  int before[PI_MAX_RANK];
  uint idims[PI_MAX_RANK], xs[PI_MAX_RANK];
} PadParams;

// -1: the constant.
int pad_source(int i, int dim, uint mode) {
  if (i >= 0 && i < dim) return i;
  if (mode == 0u) return -1;
  if (mode == 2u) return i < 0 ? 0 : dim - 1;
  if (mode == 3u) return ((i % dim) + dim) % dim;
  if (dim == 1) return 0;
  const int period = 2 * (dim - 1);
  const int m = ((i % period) + period) % period;
  return m < dim ? m : period - m;
}

__kernel void pad(__global const elem_t* x, __global elem_t* y, const PadParams p) {
  // Narrowing the 64 bits keeps the element's own low bits (OpenCL integer conversions wrap).
  const elem_t value = (elem_t)upsample(p.value_hi, p.value_lo);
  const uint step = get_global_size(0);
  for (uint i = get_global_id(0); i < p.n; i += step) {
    uint rem = i, ix = p.off_x;
    bool inside = true;
    for (int k = (int)p.rank - 1; k >= 0; --k) {
      const uint d = p.odims[k];
      const int coord = (int)(rem % d);
      rem /= d;
      const int s = pad_source(coord - p.before[k], (int)p.idims[k], p.mode);
      inside = inside && s >= 0;
      ix += (uint)max(s, 0) * p.xs[k];
    }
    y[p.off_y + i] = inside ? x[ix] : value;
  }
}
