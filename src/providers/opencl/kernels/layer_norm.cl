// Float32 LayerNormalization and InstanceNormalization (ops/norm.cpp): rows of n contiguous
// elements, one work-group of 256 per row (looping past the dispatch limit). Two passes as the
// CPU reference makes them: the mean, then the mean of squared deviations (no E[x^2] - E[x]^2
// cancellation), each a strided per-work-item sum followed by a tree in local memory; then
// y = (x - mean) * inv * scale + bias. Scale and bias are either one value per element of the
// row or a single value (stride 0) (LayerNormalization), or one value per channel, the row's
// index modulo `channels` (row stride 1: InstanceNormalization, whose rows are the (n, c)
// planes). Vulkan's layer_norm.comp, in the same order.
typedef struct {
  uint n;  // elements per row
  uint rows;
  uint off_x, off_s, off_b, off_y;
  uint s_stride, b_stride;  // 1, or 0 for a single value
  uint has_b;
  float eps;
  uint channels;      // rows per scale/bias period (1 for LayerNormalization)
  uint s_row, b_row;  // per-row strides: 1 for one value per channel, else 0
} LayerNormParams;

// The work-group's sum of each work-item's v; every work-item gets it.
float ln_row_sum(float v, __local float* red) {
  const uint t = get_local_id(0);
  red[t] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = 128u; k > 0u; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float total = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // red[] is reused by the next sum
  return total;
}

__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void layer_norm(__global const float* x,
                                                                          __global const float* s,
                                                                          __global const float* b,
                                                                          __global float* y,
                                                                          const LayerNormParams p) {
  __local float red[256];
  const uint t = get_local_id(0);
  for (uint row = get_group_id(0); row < p.rows; row += get_num_groups(0)) {
    const uint base = p.off_x + row * p.n;
    float acc = 0.0f;
    for (uint i = t; i < p.n; i += 256u) acc += x[base + i];
    const float mean = ln_row_sum(acc, red) / (float)p.n;
    acc = 0.0f;
    for (uint i = t; i < p.n; i += 256u) {
      const float d = x[base + i] - mean;
      acc += d * d;
    }
    const float inv = 1.0f / sqrt(ln_row_sum(acc, red) / (float)p.n + p.eps);
    const uint c = row % p.channels;
    for (uint i = t; i < p.n; i += 256u) {
      float v = (x[base + i] - mean) * inv * s[p.off_s + i * p.s_stride + c * p.s_row];
      if (p.has_b != 0u) v += b[p.off_b + i * p.b_stride + c * p.b_row];
      y[p.off_y + row * p.n + i] = v;
    }
  }
}
