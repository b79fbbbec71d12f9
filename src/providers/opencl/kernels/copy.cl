// Strided copy of elements of any size (elem_t; ops/copy.h): walks an iteration shape `dims`
// (rank <= 6) and copies element (coords) from x at sum(coords * sx) to y at sum(coords * sy).
// Transpose is the output shape with the input's strides permuted; each Concat input is its own
// shape with the output's strides, starting at its offset along the axis. Negative strides are
// passed as their 32-bit two's complement: the unsigned sums wrap to the right index.
typedef struct {
  uint n;  // elements copied
  uint rank;
  uint off_x, off_y;
  uint dims[PI_MAX_RANK], sx[PI_MAX_RANK], sy[PI_MAX_RANK];
} CopyParams;

__kernel void copy(__global const elem_t* x, __global elem_t* y, const CopyParams p) {
  const uint step = get_global_size(0);
  for (uint i = get_global_id(0); i < p.n; i += step) {
    uint rem = i, ix = p.off_x, iy = p.off_y;
    for (int k = (int)p.rank - 1; k >= 0; --k) {
      const uint d = p.dims[k];
      const uint coord = rem % d;
      rem /= d;
      ix += coord * p.sx[k];
      iy += coord * p.sy[k];
    }
    y[iy] = x[ix];
  }
}
