// Add/Sub/Mul/Div/Pow with numpy broadcasting up to rank 6 (ops/binary.cpp): `dims` is the
// output shape and sa/sb the inputs' element strides in it (0 on broadcast dimensions).
typedef struct {
  uint op;  // 0 Add, 1 Sub, 2 Mul, 3 Div, 4 Pow
  uint rank;
  uint n;  // output elements
  uint off_a, off_b, off_c;
  uint dims[PI_MAX_RANK], sa[PI_MAX_RANK], sb[PI_MAX_RANK];
} BinaryParams;

// C's pow (the CPU computes in double and rounds), the special cases spelled out so that the
// device's pow only sees |x| > 0, as on Vulkan.
float pi_pow(float x, float y) {
  if (y == 0.0f || x == 1.0f) return 1.0f;
  if (isnan(x) || isnan(y)) return x + y;
  const bool integer = floor(y) == y;
  const bool odd = integer && fabs(fmod(y, 2.0f)) == 1.0f;
  if (x < 0.0f && !integer && !isinf(y)) return NAN;
  const float ax = fabs(x);
  float r;
  if (ax == 0.0f) r = y > 0.0f ? 0.0f : INFINITY;
  else if (ax == 1.0f) r = 1.0f;
  else if (isinf(y)) r = (ax > 1.0f) == (y > 0.0f) ? INFINITY : 0.0f;
  else if (isinf(ax)) r = y > 0.0f ? ax : 0.0f;
  else r = pow(ax, y);
  return (odd && (x < 0.0f || (x == 0.0f && signbit(x)))) ? -r : r;
}

__kernel void binary(CTPTR a, CTPTR b, TPTR c, const BinaryParams p) {
  const uint step = get_global_size(0);
  for (uint i = get_global_id(0); i < p.n; i += step) {
    uint rem = i, ia = p.off_a, ib = p.off_b;
    for (int k = (int)p.rank - 1; k >= 0; --k) {
      const uint d = p.dims[k];
      const uint coord = rem % d;
      rem /= d;
      ia += coord * p.sa[k];
      ib += coord * p.sb[k];
    }
    const float x = LOAD(a, ia), y = LOAD(b, ib);
    float r;
    if (p.op == 0u) r = x + y;
    else if (p.op == 1u) r = x - y;
    else if (p.op == 2u) r = x * y;
    else if (p.op == 3u) r = x / y;
    else r = pi_pow(x, y);
    STORE(c, p.off_c + i, r);
  }
}
