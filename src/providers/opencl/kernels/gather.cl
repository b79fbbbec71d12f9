// Gather of elements of any size (elem_t; ops/gather.cpp): data viewed as [outer, dim, inner]
// around the axis, the output as [outer, n, inner] for n indices. The indices are int32 or int64
// (wide = 1: the low word of each pair, little-endian), already checked on the host to lie in
// [-dim, dim), so the low word is the index; negative ones count from the end. Reading words
// lets one kernel take both index types, at an offset in 4-byte words.
typedef struct {
  uint n_out;
  uint inner;
  uint n_idx;
  uint dim;
  uint off_x;
  uint off_i;  // in 4-byte words
  uint off_y;
  uint wide;  // 1: int64 indices
} GatherParams;

__kernel void gather(__global const elem_t* x, __global const int* ind, __global elem_t* y,
                     const GatherParams p) {
  const uint step = get_global_size(0);
  for (uint i = get_global_id(0); i < p.n_out; i += step) {
    const uint k = i % p.inner;
    const uint t = i / p.inner;
    const uint j = t % p.n_idx;
    const uint o = t / p.n_idx;
    int v = ind[p.off_i + (j << p.wide)];
    if (v < 0) v += (int)p.dim;
    y[p.off_y + i] = x[p.off_x + (o * p.dim + (uint)v) * p.inner + k];
  }
}
