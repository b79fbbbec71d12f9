// Float32 and float16 BatchNormalization in inference mode (ops/norm.cpp): every element of
// channel c becomes (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c], the CPU reference's
// formula in its order. One work-item per element, looping past the dispatch limit.
typedef struct {
  uint n;      // elements
  uint C;      // channels
  uint inner;  // elements per channel and image (the spatial size)
  uint off_x, off_s, off_b, off_m, off_v, off_y;
  float eps;
} BatchNormParams;

__kernel void batch_norm(CTPTR x, CTPTR s, CTPTR b, CTPTR m, CTPTR v, TPTR y,
                         const BatchNormParams p) {
  const uint step = get_global_size(0);
  for (uint i = get_global_id(0); i < p.n; i += step) {
    const uint c = (i / p.inner) % p.C;
    STORE(y, p.off_y + i,
          (LOAD(x, p.off_x + i) - LOAD(m, p.off_m + c)) / sqrt(LOAD(v, p.off_v + c) + p.eps) *
                  LOAD(s, p.off_s + c) +
              LOAD(b, p.off_b + c));
  }
}
