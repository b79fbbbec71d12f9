// Float32 Reduce* over any set of axes (ops/reduce.cpp): Sum, Mean, Max, Min, Prod, L1, L2,
// LogSum, LogSumExp, SumSquare.
// One work-item per output element (looping past the dispatch limit) walks its reduced elements
// in row-major order: the kept dimensions (kdims, with the input's strides kstr) locate the
// output's first input element, the reduced ones (rdims, rstr) the rest. Max/Min propagate NaN as
// numpy and the CPU kernel do; an empty reduction gives the CPU's values: 0 (sums, norms), NaN
// (mean), -inf (max, LogSum, LogSumExp), +inf (min), 1 (prod). LogSumExp walks twice: the
// maximum first, subtracted before exp so large inputs do not overflow (an infinite or NaN
// maximum is the result itself, as on the CPU). Vulkan's reduce.comp, in the same order.
typedef struct {
  uint n_out;
  uint n_red;  // reduced elements per output element
  uint rank_k, rank_r;
  uint off_x, off_y;
  uint op;  // 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 l1, 6 l2, 7 log_sum, 8 log_sum_exp,
            // 9 sum_square
  uint kdims[PI_MAX_RANK], kstr[PI_MAX_RANK];
  uint rdims[PI_MAX_RANK], rstr[PI_MAX_RANK];
} ReduceParams;

// The input offset of the r-th reduced element of the output element whose first is at `base`.
uint rd_element(uint base, uint r, const ReduceParams* p) {
  uint off = base;
  for (int k = (int)p->rank_r - 1; k >= 0; --k) {
    off += (r % p->rdims[k]) * p->rstr[k];
    r /= p->rdims[k];
  }
  return off;
}

__kernel void reduce(__global const float* x, __global float* y, const ReduceParams p) {
  const uint step = get_global_size(0);
  for (uint o = get_global_id(0); o < p.n_out; o += step) {
    uint rem = o, base = p.off_x;
    for (int k = (int)p.rank_k - 1; k >= 0; --k) {
      base += (rem % p.kdims[k]) * p.kstr[k];
      rem /= p.kdims[k];
    }
    // LogSumExp's shift: the maximum of the reduced elements.
    float shift = 0.0f;
    if (p.op == 8u) {
      shift = -INFINITY;
      for (uint r = 0u; r < p.n_red; ++r) {
        const float v = x[rd_element(base, r, &p)];
        if (v > shift || isnan(v)) shift = v;
      }
    }
    float acc = p.op == 2u ? -INFINITY : (p.op == 3u ? INFINITY : (p.op == 4u ? 1.0f : 0.0f));
    for (uint r = 0u; r < p.n_red; ++r) {
      const float v = x[rd_element(base, r, &p)];
      if (p.op == 2u) {
        if (v > acc || isnan(v)) acc = v;
      } else if (p.op == 3u) {
        if (v < acc || isnan(v)) acc = v;
      } else if (p.op == 4u) {
        acc *= v;
      } else if (p.op == 5u) {
        acc += fabs(v);
      } else if (p.op == 6u || p.op == 9u) {
        acc += v * v;
      } else if (p.op == 8u) {
        acc += exp(v - shift);
      } else {
        acc += v;
      }
    }
    if (p.op == 1u) acc = acc / (float)p.n_red;
    if (p.op == 6u) acc = sqrt(acc);
    // OpenCL's log follows C at 0 (-inf) and below (NaN), as the CPU computes it.
    if (p.op == 7u) acc = log(acc);
    if (p.op == 8u) acc = isinf(shift) || isnan(shift) ? shift : log(acc) + shift;
    y[p.off_y + o] = acc;
  }
}
