// Float MaxPool / AveragePool over 1-D and 2-D windows, and the global pools as one window over
// the flattened spatial dimensions (ops/pool.cpp). One work-item per output element (looping past
// the dispatch limit); the window is walked row by row as the CPU reference walks it, so sums add
// in the same order. Taps in the padding are skipped; the average divides by the taps read, or
// with count_include_pad by the taps inside the padded input (not the extra end padding
// ceil_mode adds), as the CPU kernel does.
typedef struct {
  uint H, W, OH, OW, KH, KW;
  uint sh, sw, dh, dw;
  int ph, pw;  // begin pads
  int eh, ew;  // end pads
  uint n;      // output elements
  uint off_x, off_y;
  uint mode;  // 0 max, 1 average of the taps read, 2 average counting the padding
} PoolParams;

__kernel void pool(CTPTR x, TPTR y, const PoolParams p) {
  const uint step = get_global_size(0);
  for (uint idx = get_global_id(0); idx < p.n; idx += step) {
    const uint ow = idx % p.OW;
    const uint oh = (idx / p.OW) % p.OH;
    const uint plane = idx / (p.OW * p.OH);
    const uint xb = p.off_x + plane * p.H * p.W;
    float acc = p.mode == 0u ? -INFINITY : 0.0f;
    bool first = true;
    uint valid = 0u;
    int padded_h = 0, padded_w = 0;
    for (uint kh = 0u; kh < p.KH; ++kh) {
      const int ih = (int)(oh * p.sh + kh * p.dh) - p.ph;
      if (ih >= -p.ph && ih < (int)p.H + p.eh) ++padded_h;
      if (ih < 0 || ih >= (int)p.H) continue;
      for (uint kw = 0u; kw < p.KW; ++kw) {
        const int iw = (int)(ow * p.sw + kw * p.dw) - p.pw;
        if (iw < 0 || iw >= (int)p.W) continue;
        const float v = LOAD(x, xb + (uint)ih * p.W + (uint)iw);
        if (p.mode == 0u) {
          // The CPU's max: the first tap, then any greater one (a NaN tap is kept only first).
          if (first || v > acc) acc = v;
          first = false;
        } else {
          acc += v;
        }
        ++valid;
      }
    }
    for (uint kw = 0u; kw < p.KW; ++kw) {
      const int iw = (int)(ow * p.sw + kw * p.dw) - p.pw;
      if (iw >= -p.pw && iw < (int)p.W + p.ew) ++padded_w;
    }
    if (p.mode != 0u) {
      const uint div = p.mode == 2u ? (uint)(padded_h * padded_w) : valid;
      acc = div > 0u ? acc / (float)div : NAN;
    }
    STORE(y, p.off_y + idx, acc);
  }
}
