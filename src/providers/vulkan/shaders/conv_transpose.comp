// ConvTranspose over 1-D, 2-D and 3-D float32 or float16 tensors (storage.glsl)
// (ops/conv_transpose.cpp), as a gather: one thread per output element (looping past the dispatch
// limit) sums, over the input channels of its group and the kernel taps, the input elements that
// land on it — input position i reaches output position o through tap k when
// o = i * stride - pad_begin + k * dilation. The CPU reference scatters instead (each input
// element times the kernel into the output), which needs atomics on a GPU; the gather writes
// every output once. Fewer spatial dimensions than 3 are leading dimensions of size 1.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer InX { PI_T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer InW { PI_T w[]; };
layout(std430, set = 0, binding = 2) readonly buffer InB { PI_T bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { PI_T y[]; };

layout(push_constant) uniform Params {
  uint n_out;
  uint C, M, cg, mg;  // input and output channels, and per group
  uint in_[3], out_[3], k[3], s[3], d[3];
  int pb[3];          // begin pads
  uint off_x, off_w, off_b, off_y;
  uint has_b;
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint osz = p.out_[0] * p.out_[1] * p.out_[2];
  const uint isz = p.in_[0] * p.in_[1] * p.in_[2];
  const uint ksz = p.k[0] * p.k[1] * p.k[2];
  for (uint idx = gl_GlobalInvocationID.x; idx < p.n_out; idx += step) {
    uint rem = idx;
    const int o2 = int(rem % p.out_[2]);
    rem /= p.out_[2];
    const int o1 = int(rem % p.out_[1]);
    rem /= p.out_[1];
    const int o0 = int(rem % p.out_[0]);
    rem /= p.out_[0];
    const uint m = rem % p.M, n = rem / p.M;
    const uint g = m / p.mg, mm = m % p.mg;
    float acc = 0.0;
    for (uint c = 0u; c < p.cg; ++c) {
      const uint ci = g * p.cg + c;
      const uint xbase = p.off_x + (n * p.C + ci) * isz;
      const uint wbase = p.off_w + (ci * p.mg + mm) * ksz;
      for (uint k0 = 0u; k0 < p.k[0]; ++k0) {
        const int t0 = o0 + p.pb[0] - int(k0 * p.d[0]);
        if (t0 < 0 || t0 % int(p.s[0]) != 0) continue;
        const uint i0 = uint(t0) / p.s[0];
        if (i0 >= p.in_[0]) continue;
        for (uint k1 = 0u; k1 < p.k[1]; ++k1) {
          const int t1 = o1 + p.pb[1] - int(k1 * p.d[1]);
          if (t1 < 0 || t1 % int(p.s[1]) != 0) continue;
          const uint i1 = uint(t1) / p.s[1];
          if (i1 >= p.in_[1]) continue;
          for (uint k2 = 0u; k2 < p.k[2]; ++k2) {
            const int t2 = o2 + p.pb[2] - int(k2 * p.d[2]);
            if (t2 < 0 || t2 % int(p.s[2]) != 0) continue;
            const uint i2 = uint(t2) / p.s[2];
            if (i2 >= p.in_[2]) continue;
            acc += PI_LD(x[xbase + (i0 * p.in_[1] + i1) * p.in_[2] + i2]) *
                   PI_LD(w[wbase + (k0 * p.k[1] + k1) * p.k[2] + k2]);
          }
        }
      }
    }
    if (p.has_b != 0u) acc += PI_LD(bias[p.off_b + m]);
    y[p.off_y + idx] = PI_ST(acc);
  }
}
