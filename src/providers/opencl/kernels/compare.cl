// Comparisons and logic with a bool output (ops/compare.cpp): Equal, Less, LessOrEqual, Greater,
// GreaterOrEqual of two tensors of one dtype, And, Or, Xor of bools and Not (a only), with numpy
// broadcasting up to rank 6. -DPI_T=<type> is the inputs' element type: half for float16 (with
// -DPI_HALF), loaded with vload_half and compared as float32 (NaN unequal and unordered, -0 equal
// to 0); integers are compared in their own type, exact at every width; -DPI_BOOL marks bool
// inputs, which read as != 0 whatever their byte.
typedef struct {
  uint rank;
  uint n;  // output elements
  uint off_a, off_b, off_o;
  uint op;  // 0 Equal, 1 Less, 2 LessOrEqual, 3 Greater, 4 GreaterOrEqual, 5 And, 6 Or, 7 Xor,
            // 8 Not
  uint dims[PI_MAX_RANK], sa[PI_MAX_RANK], sb[PI_MAX_RANK];
} CompareParams;

#ifdef PI_HALF
#define PI_VALUE float
#define PI_LOAD(p, i) vload_half((i), (p))
#else
#define PI_VALUE PI_T
#define PI_LOAD(p, i) ((p)[i])
#endif

__kernel void compare(__global const PI_T* a, __global const PI_T* b, __global uchar* o,
                      const CompareParams p) {
  const uint step = get_global_size(0);
  for (uint i = get_global_id(0); i < p.n; i += step) {
    uint rem = i, ia = p.off_a, ib = p.off_b;
    for (int k = (int)p.rank - 1; k >= 0; --k) {
      const uint d = p.dims[k];
      const uint coord = rem % d;
      rem /= d;
      ia += coord * p.sa[k];
      ib += coord * p.sb[k];
    }
#ifdef PI_BOOL
    const bool x = a[ia] != 0, y = b[ib] != 0;
#else
    const PI_VALUE x = PI_LOAD(a, ia), y = PI_LOAD(b, ib);
#endif
    bool r;
    switch (p.op) {
      case 0u: r = x == y; break;
#ifdef PI_BOOL
      case 5u: r = x && y; break;
      case 6u: r = x || y; break;
      case 7u: r = x != y; break;
      default: r = !x; break;
#else
      case 1u: r = x < y; break;
      case 2u: r = x <= y; break;
      case 3u: r = x > y; break;
      default: r = x >= y; break;
#endif
    }
    o[p.off_o + i] = r ? 1 : 0;
  }
}
