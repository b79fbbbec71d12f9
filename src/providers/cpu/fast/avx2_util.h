// AVX2+FMA pieces shared by the hand-written x86-64 kernels in this folder (conv_nhwc.cpp,
// conv_winograd.cpp, conv_im2col.cpp, conv_pointwise_depthwise.cpp, matmul_packed.cpp).
// Functions here carry PI_AVX2, so they compile into any translation unit and run only where
// the kernel checked __builtin_cpu_supports first.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ops/activation.h"
#include "polyinfer/status.h"
#include "providers/cpu/fast/math_coefficients.h"

namespace polyinfer::fast::avx2 {

// Whether activate() covers `kind`: the activations fused into a convolution that these kernels
// apply in registers before the store.
inline bool covers(ActKind kind) {
  return kind == ActKind::None || kind == ActKind::Relu || kind == ActKind::Clip ||
         kind == ActKind::LeakyRelu || kind == ActKind::Gelu || kind == ActKind::Sigmoid ||
         kind == ActKind::Silu || kind == ActKind::HardSigmoid || kind == ActKind::HardSwish;
}

// f(std::integral_constant<ActKind, K>{}) for an activation known only at run time: the
// one place where a kind becomes a template argument (so an epilogue applies it without a
// dispatch per vector), for the kinds covers() accepts. Kernels refuse the others when they are
// created, so one here is a bug: an Internal error naming `who`.
template <class F> auto with_activation(ActKind kind, const char* who, F&& f) {
  using A = ActKind;
  switch (kind) {
    case A::None: return f(std::integral_constant<A, A::None>{});
    case A::Relu: return f(std::integral_constant<A, A::Relu>{});
    case A::Clip: return f(std::integral_constant<A, A::Clip>{});
    case A::LeakyRelu: return f(std::integral_constant<A, A::LeakyRelu>{});
    case A::Gelu: return f(std::integral_constant<A, A::Gelu>{});
    case A::Sigmoid: return f(std::integral_constant<A, A::Sigmoid>{});
    case A::Silu: return f(std::integral_constant<A, A::Silu>{});
    case A::HardSigmoid: return f(std::integral_constant<A, A::HardSigmoid>{});
    case A::HardSwish: return f(std::integral_constant<A, A::HardSwish>{});
    default: break;
  }
  fail(ErrorCode::Internal, who, ": no AVX2 epilogue for fused activation ",
       static_cast<int>(kind));
}

// Row tiles for gemm_rows below: n rows cut into row_tiles(n) tiles of up to 6 rows, as even
// as can be, tile t having tile_rows(n, tiles, t). A tile of fewer than 5 rows keeps fewer
// accumulators than FMA latency x 2 pipes needs and runs each row at up to a third of the
// speed: 128 rows are 18 tiles of 6 and 4 of 5, not 21 of 6 and one of 2.
inline int64_t row_tiles(int64_t n) { return (n + 5) / 6; }
inline int tile_rows(int64_t n, int64_t tiles, int64_t t) {
  return static_cast<int>(n / tiles + (t < n % tiles));
}

// Whether this CPU runs the kernels compiled with PI_AVX2 (false where they are not compiled).
inline bool supported() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace polyinfer::fast::avx2

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define PI_X86_AVX2 1
#define PI_AVX2 __attribute__((target("avx2,fma")))

namespace polyinfer::fast::avx2 {

// Lanes [0, n) set: the tail of a block whose output channel count is not a multiple of 8.
PI_AVX2 inline __m256i lane_mask(int n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

// dst[m * tb + k] = src[k * sa + m] for an 8x8 block of floats (or any 4-byte elements), in
// registers: the classic unpack / shuffle / lane-permute sequence. AVX2 alone (no FMA): the
// fast Transpose calls it where the CPU has AVX2.
__attribute__((target("avx2"))) inline void transpose8x8(const float* src, int64_t sa, float* dst,
                                                         int64_t tb) {
  __m256 r[8], t[8], u[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(src + k * sa);
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(dst + k * tb, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
    _mm256_storeu_ps(dst + (k + 4) * tb, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
  }
}

// exp for 8 lanes: fast_util.h's fast_exp (Cephes polynomial, 2^n in two factors), the same
// coefficients (math_coefficients.h); +inf above 88.72, 0 below -103.28, NaN stays NaN.
PI_AVX2 inline __m256 exp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.7228390f), lo = _mm256_set1_ps(-103.27892990f);
  const __m256 xc = _mm256_min_ps(hi, _mm256_max_ps(lo, x));  // operands ordered: NaN passes
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 t = _mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504088896341f), magic);
  const __m256i n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic));
  const __m256 nf = _mm256_sub_ps(t, magic);
  __m256 r = _mm256_fnmadd_ps(nf, _mm256_set1_ps(kLn2Hi), xc);
  r = _mm256_fnmadd_ps(nf, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kExpP[0]);
#pragma GCC unroll 8
  for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP[i]));
  p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  const __m256i h = _mm256_srai_epi32(n, 1), bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, bias), 23));
  const __m256 s2 =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(n, h), bias), 23));
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  y = _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
  return _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()), _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
}

// erf for 8 lanes: fast_util.h's fast_erf (x * P(x^2) / Q(x^2) on [-4, 4], +-1 beyond), the
// same coefficients, so a GEMM's epilogue and the fast Gelu operator agree.
PI_AVX2 inline __m256 erf8(__m256 x) {
  const __m256 xc = _mm256_max_ps(_mm256_set1_ps(-4.f), _mm256_min_ps(x, _mm256_set1_ps(4.f)));
  const __m256 z = _mm256_mul_ps(xc, xc);
  __m256 p = _mm256_set1_ps(kErfP[0]);
#pragma GCC unroll 8
  for (int i = 1; i < 7; ++i) p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(kErfP[i]));
  __m256 q = _mm256_set1_ps(kErfQ[0]);
#pragma GCC unroll 8
  for (int i = 1; i < 5; ++i) q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(kErfQ[i]));
  return _mm256_div_ps(_mm256_mul_ps(xc, p), q);
}

// Gelu (erf form) below x = -3 for 8 lanes: fast_util.h's fast_gelu_erf_tail, x^2 split
// exactly as h + l by an FMA.
PI_AVX2 inline __m256 gelu_tail8(__m256 x) {
  const __m256 xc = _mm256_max_ps(x, _mm256_set1_ps(-20.f));
  const __m256 h = _mm256_mul_ps(xc, xc);
  const __m256 l = _mm256_fmsub_ps(xc, xc, h);
  const __m256 half = _mm256_set1_ps(0.5f);
  const __m256 e = _mm256_mul_ps(exp8(_mm256_mul_ps(_mm256_set1_ps(-0.5f), h)),
                                 _mm256_fnmadd_ps(half, l, _mm256_set1_ps(1.f)));
  const __m256 u = _mm256_div_ps(_mm256_set1_ps(2.f), h);
  __m256 p = _mm256_set1_ps(kGeluTailP[0]);
#pragma GCC unroll 8
  for (int i = 1; i < 8; ++i) p = _mm256_fmadd_ps(p, u, _mm256_set1_ps(kGeluTailP[i]));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(-kInvSqrt2Pi), e), p);
  return _mm256_blendv_ps(y, _mm256_mul_ps(x, _mm256_setzero_ps()),
                          _mm256_cmp_ps(x, _mm256_set1_ps(-20.f), _CMP_LT_OQ));
}

// Gelu (erf form) for 8 lanes. Below -3, 1 + erf(x / sqrt 2) < 2.7e-3 and erf8's absolute
// error (< 3e-7) would no longer be small next to it: vectors with such lanes (0.1% of a unit
// normal) take them from gelu_tail8, as the fast Gelu operator does.
PI_AVX2 inline __m256 gelu8(__m256 x) {
  const __m256 half_x = _mm256_mul_ps(_mm256_set1_ps(0.5f), x);
  const __m256 v =
      _mm256_fmadd_ps(half_x, erf8(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f))), half_x);
  const __m256 low = _mm256_cmp_ps(x, _mm256_set1_ps(-3.f), _CMP_LT_OQ);
  return _mm256_movemask_ps(low) ? _mm256_blendv_ps(v, gelu_tail8(x), low) : v;
}

// activate() for an activation known at compile time, so loops can hoist the dispatch.
template <ActKind K> PI_AVX2 inline __m256 activate_as(__m256 v, const FusedActivation& a) {
  if constexpr (K == ActKind::Relu) {
    // max(v, 0) returns 0 for NaN, as the reference's x > 0 ? x : 0 does
    return _mm256_max_ps(v, _mm256_setzero_ps());
  } else if constexpr (K == ActKind::Clip) {
    // operands ordered so a NaN passes through, as in the reference
    return _mm256_min_ps(_mm256_set1_ps(a.beta), _mm256_max_ps(_mm256_set1_ps(a.alpha), v));
  } else if constexpr (K == ActKind::LeakyRelu) {
    const __m256 ge = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GE_OQ);
    return _mm256_blendv_ps(_mm256_mul_ps(v, _mm256_set1_ps(a.alpha)), v, ge);
  } else if constexpr (K == ActKind::Gelu) {
    return gelu8(v);
  } else if constexpr (K == ActKind::Sigmoid) {
    const __m256 one = _mm256_set1_ps(1.f);
    return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), v))));
  } else if constexpr (K == ActKind::Silu) {  // x * sigmoid(x), as x / (1 + exp(-x))
    const __m256 one = _mm256_set1_ps(1.f);
    return _mm256_div_ps(v, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), v))));
  } else if constexpr (K == ActKind::HardSigmoid) {
    // operands ordered so a NaN passes through, as in the reference
    const __m256 y = _mm256_fmadd_ps(_mm256_set1_ps(a.alpha), v, _mm256_set1_ps(a.beta));
    return _mm256_min_ps(_mm256_set1_ps(1.f), _mm256_max_ps(_mm256_setzero_ps(), y));
  } else if constexpr (K == ActKind::HardSwish) {
    const __m256 y = _mm256_add_ps(_mm256_div_ps(v, _mm256_set1_ps(6.f)), _mm256_set1_ps(0.5f));
    return _mm256_mul_ps(v,
                         _mm256_min_ps(_mm256_set1_ps(1.f), _mm256_max_ps(_mm256_setzero_ps(), y)));
  } else {
    return v;
  }
}

// Per vector, for loops that dispatch once per call (a lambda for with_activation would need
// the AVX2 attribute); an activation covers() rejects is returned as it is.
PI_AVX2 inline __m256 activate(__m256 v, const FusedActivation& a) {
  switch (a.kind) {
    case ActKind::Relu: return activate_as<ActKind::Relu>(v, a);
    case ActKind::Clip: return activate_as<ActKind::Clip>(v, a);
    case ActKind::LeakyRelu: return activate_as<ActKind::LeakyRelu>(v, a);
    case ActKind::Gelu: return activate_as<ActKind::Gelu>(v, a);
    case ActKind::Sigmoid: return activate_as<ActKind::Sigmoid>(v, a);
    case ActKind::Silu: return activate_as<ActKind::Silu>(v, a);
    case ActKind::HardSigmoid: return activate_as<ActKind::HardSigmoid>(v, a);
    case ActKind::HardSwish: return activate_as<ActKind::HardSwish>(v, a);
    default: return v;
  }
}

// How many k steps (lines of a packed B) gemm_rows fetches ahead.
inline constexpr int64_t kGemmPrefetch = 32;

// The GEMM register tile: c[r][0, n) = act(bias + sum over k of a[r * lda + k] * b[k * 16 + j])
// for R rows (R <= 6: 12 ymm accumulators, two B vectors and a broadcast fill the 16
// registers), n = 16 or 8 columns of a 16-wide packed B ([K][16], 32-byte aligned). Each k
// loads one B pair and feeds 12 FMAs. Row r's columns 0-7 go to c + r * ldc and 8-15 to
// c + r * ldc + hi (hi = 8: one row of 16; else a second plane of 8-channel blocks).
// `bias` (16 floats) or null for zeros; `z`, laid out as c, added before the activation, or
// null (z may be c itself: a sum continued over a further block of K). The activation is
// known at compile time (`act` holds its parameters; null for ActKind::None): dispatched per
// vector in the epilogue it slowed short-K layers (docs/kernels.md).
// kPrefetch fetches B's line kGemmPrefetch steps ahead, for a B that comes from memory; a B
// that stays in L1 (a small K, reused by every tile) only loses load slots to it.
template <int R, ActKind kAct, bool kPrefetch>
PI_AVX2 void gemm_rows(const float* a, int64_t lda, const float* b, int64_t K, float* c,
                       int64_t ldc, int64_t hi, const float* bias, const float* z,
                       const FusedActivation* act, int n) {
  __m256 acc[R][2];
  const __m256 b0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
  const __m256 b1 = bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    acc[r][0] = b0;
    acc[r][1] = b1;
  }
  for (int64_t k = 0; k < K; ++k) {
    // A hint: past B's end it is dropped. Weights read once per run come from memory, where
    // the hardware prefetcher alone leaves the tile short of the FMA peak (docs/kernels.md).
    if constexpr (kPrefetch)
      _mm_prefetch(reinterpret_cast<const char*>(b + (k + kGemmPrefetch) * 16), _MM_HINT_T0);
    const __m256 w0 = _mm256_load_ps(b + k * 16), w1 = _mm256_load_ps(b + k * 16 + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r * lda + k);
      acc[r][0] = _mm256_fmadd_ps(x, w0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x, w1, acc[r][1]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    if (z) {
      acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_loadu_ps(z + r * ldc));
      if (n > 8) acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_loadu_ps(z + r * ldc + hi));
    }
    if constexpr (kAct != ActKind::None) {
      acc[r][0] = activate_as<kAct>(acc[r][0], *act);
      acc[r][1] = activate_as<kAct>(acc[r][1], *act);
    }
    _mm256_storeu_ps(c + r * ldc, acc[r][0]);
    if (n > 8) _mm256_storeu_ps(c + r * ldc + hi, acc[r][1]);
  }
}

using GemmRowsFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t, int64_t,
                            const float*, const float*, const FusedActivation*, int);

// gemm_rows<R, kAct, kPrefetch> by R (index 0 unused).
template <ActKind kAct, bool kPrefetch>
inline constexpr GemmRowsFn kGemmRowsAs[7] = {nullptr,
                                              gemm_rows<1, kAct, kPrefetch>,
                                              gemm_rows<2, kAct, kPrefetch>,
                                              gemm_rows<3, kAct, kPrefetch>,
                                              gemm_rows<4, kAct, kPrefetch>,
                                              gemm_rows<5, kAct, kPrefetch>,
                                              gemm_rows<6, kAct, kPrefetch>};

template <bool kPrefetch> const GemmRowsFn* gemm_rows_as(ActKind kind) {
  return with_activation(kind, "gemm_rows", [](auto k) -> const GemmRowsFn* {
    return kGemmRowsAs<decltype(k)::value, kPrefetch>;
  });
}

// The tiles by row count (index 0 unused) for activation `act` (null: none), one that covers()
// accepts, with B fetched ahead or not.
inline const GemmRowsFn* gemm_rows_for(const FusedActivation* act, bool prefetch) {
  const ActKind kind = act ? act->kind : ActKind::None;
  return prefetch ? gemm_rows_as<true>(kind) : gemm_rows_as<false>(kind);
}

}  // namespace polyinfer::fast::avx2

#endif
