// Float32 Softmax and LogSoftmax (ops/softmax.cpp). The input is seen as rows of n elements at
// stride `inner` (opset 13's single axis: n = shape[axis], inner = the product after it; opsets
// before 13 flatten at the axis: n = the product from it, inner = 1). One work-group of 256
// normalizes one row (looping over rows past the dispatch limit): the work-items stride over the
// row, then reduce in local memory, first the maximum, which is subtracted before exp so that
// nothing overflows, then the sum of the exponentials (Vulkan's softmax.comp, in the same order).
typedef struct {
  uint n;      // elements per row
  uint inner;  // stride between a row's elements
  uint rows;   // outer * inner
  uint off_x, off_y;
  uint log_softmax;
} SoftmaxParams;

__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void softmax(__global const float* x,
                                                                       __global float* y,
                                                                       const SoftmaxParams p) {
  __local float red[256];
  const uint t = get_local_id(0);
  for (uint row = get_group_id(0); row < p.rows; row += get_num_groups(0)) {
    const uint o = row / p.inner, i = row % p.inner;
    const uint base = o * p.n * p.inner + i;
    // A NaN anywhere makes the row NaN, as on the CPU: fmax alone would drop it.
    float m = -INFINITY;
    for (uint k = t; k < p.n; k += 256u) {
      const float v = x[p.off_x + base + k * p.inner];
      if (v > m || isnan(v)) m = v;
    }
    red[t] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 128u; s > 0u; s >>= 1) {
      if (t < s) {
        const float w = red[t + s];
        if (w > red[t] || isnan(w)) red[t] = w;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    float sum = 0.0f;
    for (uint k = t; k < p.n; k += 256u) sum += exp(x[p.off_x + base + k * p.inner] - m);
    red[t] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 128u; s > 0u; s >>= 1) {
      if (t < s) red[t] += red[t + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    sum = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);  // red[] is reused by the next row
    // (v - m) - log(sum), not v - (m + log(sum)): v - m is exact for nearby values, so large
    // inputs keep their small differences.
    const float log_sum = log(sum);
    for (uint k = t; k < p.n; k += 256u) {
      const uint e = base + k * p.inner;
      const float v = x[p.off_x + e];
      y[p.off_y + e] = p.log_softmax != 0u ? (v - m) - log_sum : exp(v - m) / sum;
    }
  }
}
