// Float32 ReduceSum, ReduceMean, ReduceMax, ReduceMin over any set of axes (ops/reduce.cpp).
// One thread per output element (looping past the dispatch limit) walks its reduced elements in
// row-major order: the kept dimensions (kdims, with the input's strides kstr) locate the output's
// first input element, the reduced ones (rdims, rstr) the rest. Max/Min propagate NaN as numpy
// and the CPU kernel do; an empty reduction gives 0, NaN (mean), -inf (max) or +inf (min).
#version 450
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params {
  uint n_out;
  uint n_red;     // reduced elements per output element
  uint rank_k, rank_r;
  uint off_x, off_y;
  uint op;        // 0 sum, 1 mean, 2 max, 3 min
  uint kdims[6];
  uint kstr[6];
  uint rdims[6];
  uint rstr[6];
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint o = gl_GlobalInvocationID.x; o < p.n_out; o += step) {
    uint rem = o, base = p.off_x;
    for (int k = int(p.rank_k) - 1; k >= 0; --k) {
      base += (rem % p.kdims[k]) * p.kstr[k];
      rem /= p.kdims[k];
    }
    float acc = p.op == 2u ? -1.0 / 0.0 : (p.op == 3u ? 1.0 / 0.0 : 0.0);
    for (uint r = 0u; r < p.n_red; ++r) {
      uint rr = r, off = base;
      for (int k = int(p.rank_r) - 1; k >= 0; --k) {
        off += (rr % p.rdims[k]) * p.rstr[k];
        rr /= p.rdims[k];
      }
      const float v = x[off];
      if (p.op == 2u) {
        if (v > acc || isnan(v)) acc = v;
      } else if (p.op == 3u) {
        if (v < acc || isnan(v)) acc = v;
      } else {
        acc += v;
      }
    }
    if (p.op == 1u) acc = acc / float(p.n_red);
    y[p.off_y + o] = acc;
  }
}
