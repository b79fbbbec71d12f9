// AVX-512 vector math for 16 lanes: exp, erf, GELU and the fused activations, for the zmm
// GEMM tile's epilogue (avx512_gemm.h) and the softmax of the AVX-512 attention kernel.
//
// Why not avx2_util.h's 8-lane forms twice: on a Zen 4 core each zmm instruction costs the
// front end what a ymm one does, and erf8 divides (vdivps) where erf16 takes a reciprocal
// estimate and one Newton step: a GELU epilogue costs less (in an epilogue it does not overlap
// the next tile's FMAs, so its cost shows; docs/kernels.md has the figures). The coefficients
// are math_coefficients.h's, as in fast_util.h's fast_exp and fast_erf, so the three forms
// agree to within an ulp or two.
#pragma once

#include <immintrin.h>

#include <cmath>

#include "providers/cpu/fast/avx2_util.h"

#ifdef PI_X86_AVX2

#define PI_X86_AVX512 1
#define PI_AVX512 __attribute__((target("avx512f,avx2,fma")))

namespace polyinfer::fast::avx512 {

// Whether this CPU runs the code compiled with PI_AVX512.
inline bool supported() {
  static const bool yes = avx2::supported() && __builtin_cpu_supports("avx512f");
  return yes;
}

// AVX2 code given AVX-512VL's 32 ymm registers instead of 16, for loops whose ymm sums and
// operands outgrow 16; vl_supported() says whether this CPU runs it.
#define PI_AVX512VL __attribute__((target("avx512f,avx512vl,avx2,fma")))
inline bool vl_supported() {
  static const bool yes = supported() && __builtin_cpu_supports("avx512vl");
  return yes;
}

// The all-lanes forms of max and min, written as their masked forms with every lane set:
// GCC 12's plain forms pass _mm512_undefined_ps() through and trip -Wmaybe-uninitialized
// (GCC bug 105593), a false positive that -Werror would turn fatal.
constexpr __mmask16 kAll = 0xFFFF;
PI_AVX512 inline __m512 max16(__m512 a, __m512 b) { return _mm512_mask_max_ps(a, kAll, a, b); }
PI_AVX512 inline __m512 min16(__m512 a, __m512 b) { return _mm512_mask_min_ps(a, kAll, a, b); }

// The sum and the maximum of the 16 lanes. The halves come through the zero-masked extract:
// GCC 12's plain forms and _mm512_reduce_* trip the same false positive.
PI_AVX512 inline __m128 fold_halves(__m512 v, bool sum) {
  const __m512d d = _mm512_castps_pd(v);
  const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, d, 0));
  const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, d, 1));
  const __m256 h = sum ? _mm256_add_ps(lo, hi) : _mm256_max_ps(lo, hi);
  const __m128 a = _mm256_castps256_ps128(h), b = _mm256_extractf128_ps(h, 1);
  return sum ? _mm_add_ps(a, b) : _mm_max_ps(a, b);
}
PI_AVX512 inline float hsum16(__m512 v) {
  __m128 x = fold_halves(v, true);
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
}
PI_AVX512 inline float hmax16(__m512 v) {
  __m128 x = fold_halves(v, false);
  x = _mm_max_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_max_ss(x, _mm_movehdup_ps(x)));
}

// a / b as the 14-bit reciprocal estimate of b and one Newton step (relative error ~2^-23),
// for a finite, normal b.
PI_AVX512 inline __m512 divide(__m512 a, __m512 b) {
  __m512 r = _mm512_mask_rcp14_ps(b, kAll, b);
  r = _mm512_mul_ps(r, _mm512_fnmadd_ps(b, r, _mm512_set1_ps(2.f)));
  return _mm512_mul_ps(a, r);
}

// exp(x) for 16 lanes: fast_exp's reduction and polynomial (the same constants, so the same
// error, < 2e-7 relative), with 2^n applied by VSCALEFPS, which needs no two-factor split near
// the subnormals. As fast_exp and avx2::exp8: +inf above 88.72, 0 below -103.28 (a softmax's
// -inf gives exactly 0), NaN stays NaN (the clamps let it through).
PI_AVX512 inline __m512 exp16(__m512 x) {
  const __m512 hi = _mm512_set1_ps(88.7228390f), lo = _mm512_set1_ps(-103.2789299f);
  const __m512 z = min16(hi, max16(lo, x));
  const __m512 t = _mm512_mul_ps(z, _mm512_set1_ps(1.44269504088896341f));
  const __m512 n =
      _mm512_mask_roundscale_ps(t, kAll, t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), z);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kExpP[0]);
#pragma GCC unroll 8
  for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP[i]));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  const __m512 y = _mm512_mask_scalef_ps(p, kAll, p, n);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ),
                              _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ), y),
                              _mm512_set1_ps(__builtin_inff()));
}

// erf for 16 lanes: avx2::erf8's rational function (x * P(x^2) / Q(x^2) on [-4, 4], +-1
// beyond), the quotient through divide().
PI_AVX512 inline __m512 erf16(__m512 x) {
  const __m512 xc = max16(_mm512_set1_ps(-4.f), min16(x, _mm512_set1_ps(4.f)));
  const __m512 z = _mm512_mul_ps(xc, xc);
  __m512 p = _mm512_set1_ps(kErfP[0]);
#pragma GCC unroll 8
  for (int i = 1; i < 7; ++i) p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(kErfP[i]));
  __m512 q = _mm512_set1_ps(kErfQ[0]);
#pragma GCC unroll 8
  for (int i = 1; i < 5; ++i) q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(kErfQ[i]));
  return divide(_mm512_mul_ps(xc, p), q);
}

// avx2::gelu_tail8 for 16 lanes: Gelu (erf form) below x = -3, fast_gelu_erf_tail's formula.
PI_AVX512 inline __m512 gelu_tail16(__m512 x) {
  const __m512 xc = max16(x, _mm512_set1_ps(-20.f));
  const __m512 h = _mm512_mul_ps(xc, xc);
  const __m512 l = _mm512_fmsub_ps(xc, xc, h);
  const __m512 e = _mm512_mul_ps(exp16(_mm512_mul_ps(_mm512_set1_ps(-0.5f), h)),
                                 _mm512_fnmadd_ps(_mm512_set1_ps(0.5f), l, _mm512_set1_ps(1.f)));
  const __m512 u = _mm512_div_ps(_mm512_set1_ps(2.f), h);
  __m512 p = _mm512_set1_ps(kGeluTailP[0]);
#pragma GCC unroll 8
  for (int i = 1; i < 8; ++i) p = _mm512_fmadd_ps(p, u, _mm512_set1_ps(kGeluTailP[i]));
  const __m512 y = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(-kInvSqrt2Pi), e), p);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-20.f), _CMP_LT_OQ), y,
                              _mm512_mul_ps(x, _mm512_setzero_ps()));
}

// Gelu (erf form) for the lanes of `live`; as avx2::gelu8, lanes below -3 (where erf16's
// absolute error would not be small next to 1 + erf) come from gelu_tail16.
PI_AVX512 inline __m512 gelu16(__m512 x, __mmask16 live = 0xFFFF) {
  const __m512 half_x = _mm512_mul_ps(_mm512_set1_ps(0.5f), x);
  const __m512 v = _mm512_fmadd_ps(
      half_x, erf16(_mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f))), half_x);
  const __mmask16 low = _mm512_mask_cmp_ps_mask(live, x, _mm512_set1_ps(-3.f), _CMP_LT_OQ);
  return low ? _mm512_mask_blend_ps(low, v, gelu_tail16(x)) : v;
}

// avx2::activate_as for 16 lanes (of which `live` are kept), the same formulas and NaN
// handling, for the kinds avx2::covers() accepts.
template <ActKind K>
PI_AVX512 inline __m512 activate_as(__m512 v, const FusedActivation& a, __mmask16 live = 0xFFFF) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.f);
  if constexpr (K == ActKind::Relu) {
    return max16(v, zero);  // max(NaN, 0) is 0, as the reference's x > 0 ? x : 0
  } else if constexpr (K == ActKind::Clip) {
    return min16(_mm512_set1_ps(a.beta), max16(_mm512_set1_ps(a.alpha), v));
  } else if constexpr (K == ActKind::LeakyRelu) {
    const __mmask16 ge = _mm512_cmp_ps_mask(v, zero, _CMP_GE_OQ);
    return _mm512_mask_blend_ps(ge, _mm512_mul_ps(v, _mm512_set1_ps(a.alpha)), v);
  } else if constexpr (K == ActKind::Gelu) {
    return gelu16(v, live);
  } else if constexpr (K == ActKind::Sigmoid) {
    return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(zero, v))));
  } else if constexpr (K == ActKind::Silu) {  // x * sigmoid(x), as x / (1 + exp(-x))
    return _mm512_div_ps(v, _mm512_add_ps(one, exp16(_mm512_sub_ps(zero, v))));
  } else if constexpr (K == ActKind::HardSigmoid) {
    const __m512 y = _mm512_fmadd_ps(_mm512_set1_ps(a.alpha), v, _mm512_set1_ps(a.beta));
    return min16(one, max16(zero, y));
  } else if constexpr (K == ActKind::HardSwish) {
    const __m512 y = _mm512_add_ps(_mm512_div_ps(v, _mm512_set1_ps(6.f)), _mm512_set1_ps(0.5f));
    return _mm512_mul_ps(v, min16(one, max16(zero, y)));
  } else {
    return v;
  }
}

}  // namespace polyinfer::fast::avx512

#endif  // PI_X86_AVX2
