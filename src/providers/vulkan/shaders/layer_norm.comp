// Float32 LayerNormalization and InstanceNormalization (ops/norm.cpp): rows of n contiguous
// elements, one workgroup per
// row (looping past the dispatch limit). Two passes as the CPU reference makes them: the mean,
// then the mean of squared deviations (no E[x^2] - E[x]^2 cancellation), each a strided
// per-thread sum followed by a tree in shared memory; then y = (x - mean) * inv * scale + bias.
// Scale and bias are either one value per element of the row or a single value (stride 0)
// (LayerNormalization), or one value per channel, the row's index modulo `channels` (row stride
// 1: InstanceNormalization, whose rows are the (n, c) planes).
#version 450
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Scale { float s[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { float b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params {
  uint n;        // elements per row
  uint rows;
  uint off_x, off_s, off_b, off_y;
  uint s_stride, b_stride;  // 1, or 0 for a single value
  uint has_b;
  float eps;
  uint channels;            // rows per scale/bias period (1 for LayerNormalization)
  uint s_row, b_row;        // per-row strides: 1 for one value per channel, else 0
} p;

shared float red[256];

float row_sum(float v) {
  const uint t = gl_LocalInvocationID.x;
  red[t] = v;
  barrier();
  for (uint k = 128u; k > 0u; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    barrier();
  }
  const float total = red[0];
  barrier();  // red[] is reused by the next sum
  return total;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    const uint base = p.off_x + row * p.n;
    float acc = 0.0;
    for (uint i = t; i < p.n; i += 256u) acc += x[base + i];
    const float mean = row_sum(acc) / float(p.n);
    acc = 0.0;
    for (uint i = t; i < p.n; i += 256u) {
      const float d = x[base + i] - mean;
      acc += d * d;
    }
    const float inv = 1.0 / sqrt(row_sum(acc) / float(p.n) + p.eps);
    const uint c = row % p.channels;
    for (uint i = t; i < p.n; i += 256u) {
      float v = (x[base + i] - mean) * inv * s[p.off_s + i * p.s_stride + c * p.s_row];
      if (p.has_b != 0u) v += b[p.off_b + i * p.b_stride + c * p.b_row];
      y[p.off_y + row * p.n + i] = v;
    }
  }
}
