// Float32 Softmax and LogSoftmax (ops/softmax.cpp). The input is seen as rows of n elements at
// stride `inner` (opset 13's single axis: n = shape[axis], inner = the product after it; opsets
// before 13 flatten at the axis: n = the product from it, inner = 1). One workgroup normalizes
// one row (looping over rows past the dispatch limit): the threads stride over the row, then
// reduce in shared memory, first the maximum, which is subtracted before exp so that nothing
// overflows, then the sum of the exponentials.
#version 450
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params {
  uint n;       // elements per row
  uint inner;   // stride between a row's elements
  uint rows;    // outer * inner
  uint off_x;
  uint off_y;
  uint log_softmax;
} p;

shared float red[256];

void main() {
  const uint t = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    const uint o = row / p.inner, i = row % p.inner;
    const uint base = o * p.n * p.inner + i;
    // A NaN anywhere makes the row NaN, as on the CPU: max() alone may drop it.
    float m = -1.0 / 0.0;
    for (uint k = t; k < p.n; k += 256u) {
      const float v = x[p.off_x + base + k * p.inner];
      if (v > m || isnan(v)) m = v;
    }
    red[t] = m;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
      if (t < s) {
        const float w = red[t + s];
        if (w > red[t] || isnan(w)) red[t] = w;
      }
      barrier();
    }
    m = red[0];
    barrier();
    float sum = 0.0;
    for (uint k = t; k < p.n; k += 256u) sum += exp(x[p.off_x + base + k * p.inner] - m);
    red[t] = sum;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
      if (t < s) red[t] += red[t + s];
      barrier();
    }
    sum = red[0];
    barrier();  // red[] is reused by the next row
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
