// Where of elements of any size (common.cl's elem_t, moved as bits) with numpy broadcasting of
// all three inputs up to rank 6 (ops/where.cpp). The condition is a bool tensor, one byte per
// element, any nonzero byte true.
typedef struct {
  uint rank;
  uint n;  // output elements
  uint off_c, off_x, off_y, off_o;
  uint dims[PI_MAX_RANK], sc[PI_MAX_RANK], sx[PI_MAX_RANK], sy[PI_MAX_RANK];
} WhereParams;

__kernel void where(__global const uchar* c, __global const elem_t* x, __global const elem_t* y,
                    __global elem_t* o, const WhereParams p) {
  const uint step = get_global_size(0);
  for (uint i = get_global_id(0); i < p.n; i += step) {
    uint rem = i, ic = p.off_c, ix = p.off_x, iy = p.off_y;
    for (int k = (int)p.rank - 1; k >= 0; --k) {
      const uint d = p.dims[k];
      const uint coord = rem % d;
      rem /= d;
      ic += coord * p.sc[k];
      ix += coord * p.sx[k];
      iy += coord * p.sy[k];
    }
    o[p.off_o + i] = c[ic] != 0 ? x[ix] : y[iy];
  }
}
