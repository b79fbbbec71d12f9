// AVX2+FMA pieces shared by the hand-written x86-64 convolution kernels in this folder
// (conv_nhwc.cpp, conv_winograd.cpp). Functions here carry PI_AVX2, so they compile into any
// translation unit and run only where the kernel checked __builtin_cpu_supports first.
#pragma once

#include "providers/cpu/ops/fused_activation.h"

namespace polyinfer::fast::avx2 {

// Whether activate() covers `kind`: the activations fused into a convolution that these kernels
// apply in registers before the store.
inline bool covers(cpu::ActKind kind) {
  return kind == cpu::ActKind::None || kind == cpu::ActKind::Relu ||
         kind == cpu::ActKind::Clip || kind == cpu::ActKind::LeakyRelu;
}

}  // namespace polyinfer::fast::avx2

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define PI_X86_AVX2 1
#define PI_AVX2 __attribute__((target("avx2,fma")))

namespace polyinfer::fast::avx2 {

// Whether this CPU runs the kernels compiled with PI_AVX2.
inline bool supported() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// Lanes [0, n) set: the tail of a block whose output channel count is not a multiple of 8.
PI_AVX2 inline __m256i lane_mask(int n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

PI_AVX2 inline __m256 activate(__m256 v, const cpu::FusedActivation& a) {
  switch (a.kind) {
    case cpu::ActKind::Relu:  // max(v, 0) returns 0 for NaN, as the reference's x > 0 ? x : 0 does
      return _mm256_max_ps(v, _mm256_setzero_ps());
    case cpu::ActKind::Clip:  // operands ordered so a NaN passes through, as in the reference
      return _mm256_min_ps(_mm256_set1_ps(a.beta), _mm256_max_ps(_mm256_set1_ps(a.alpha), v));
    case cpu::ActKind::LeakyRelu: {
      const __m256 ge = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GE_OQ);
      return _mm256_blendv_ps(_mm256_mul_ps(v, _mm256_set1_ps(a.alpha)), v, ge);
    }
    default:
      return v;
  }
}

}  // namespace polyinfer::fast::avx2

#endif
