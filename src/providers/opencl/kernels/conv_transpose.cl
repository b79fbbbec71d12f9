// ConvTranspose over 1-D, 2-D and 3-D float32 or float16 tensors (ops/conv_transpose.cpp), a
// port of the Vulkan conv_transpose.comp, as a gather: one work-item per output element
// (looping past the dispatch limit) sums, over the input channels of its group and the kernel
// taps, the input elements that land on it — input position i reaches output position o through
// tap k when o = i * stride - pad_begin + k * dilation. The CPU reference scatters instead (each
// input element times the kernel into the output), which needs atomics on a GPU; the gather
// writes every output once. Fewer spatial dimensions than 3 are leading dimensions of size 1.
typedef struct {
  uint n_out;
  uint C, M, cg, mg;  // input and output channels, and per group
  uint in_[3], out_[3], k[3], s[3], d[3];
  int pb[3];  // begin pads
  uint off_x, off_w, off_b, off_y;
  uint has_b;
} ConvTransposeParams;

__kernel void conv_transpose(CTPTR x, CTPTR w, CTPTR bias, TPTR y, const ConvTransposeParams p) {
  const uint step = get_global_size(0);
  const uint isz = p.in_[0] * p.in_[1] * p.in_[2];
  const uint ksz = p.k[0] * p.k[1] * p.k[2];
  for (uint idx = get_global_id(0); idx < p.n_out; idx += step) {
    uint rem = idx;
    const int o2 = (int)(rem % p.out_[2]);
    rem /= p.out_[2];
    const int o1 = (int)(rem % p.out_[1]);
    rem /= p.out_[1];
    const int o0 = (int)(rem % p.out_[0]);
    rem /= p.out_[0];
    const uint m = rem % p.M, n = rem / p.M;
    const uint g = m / p.mg, mm = m % p.mg;
    float acc = 0.0f;
    for (uint c = 0u; c < p.cg; ++c) {
      const uint ci = g * p.cg + c;
      const uint xbase = p.off_x + (n * p.C + ci) * isz;
      const uint wbase = p.off_w + (ci * p.mg + mm) * ksz;
      for (uint k0 = 0u; k0 < p.k[0]; ++k0) {
        const int t0 = o0 + p.pb[0] - (int)(k0 * p.d[0]);
        if (t0 < 0 || t0 % (int)p.s[0] != 0) continue;
        const uint i0 = (uint)t0 / p.s[0];
        if (i0 >= p.in_[0]) continue;
        for (uint k1 = 0u; k1 < p.k[1]; ++k1) {
          const int t1 = o1 + p.pb[1] - (int)(k1 * p.d[1]);
          if (t1 < 0 || t1 % (int)p.s[1] != 0) continue;
          const uint i1 = (uint)t1 / p.s[1];
          if (i1 >= p.in_[1]) continue;
          for (uint k2 = 0u; k2 < p.k[2]; ++k2) {
            const int t2 = o2 + p.pb[2] - (int)(k2 * p.d[2]);
            if (t2 < 0 || t2 % (int)p.s[2] != 0) continue;
            const uint i2 = (uint)t2 / p.s[2];
            if (i2 >= p.in_[2]) continue;
            acc += LOAD(x, xbase + (i0 * p.in_[1] + i1) * p.in_[2] + i2) *
                   LOAD(w, wbase + (k0 * p.k[1] + k1) * p.k[2] + k2);
          }
        }
      }
    }
    if (p.has_b != 0u) acc += LOAD(bias, p.off_b + m);
    STORE(y, p.off_y + idx, acc);
  }
}
