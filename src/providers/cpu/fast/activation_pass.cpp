#include "providers/cpu/fast/activation_pass.h"

#include "providers/cpu/fast/fast_util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PI_X86_AVX512 1
#define PI_AVX512 __attribute__((target("avx512f")))
#endif

namespace polyinfer::fast {
namespace {

#ifdef PI_X86_AVX512

// The all-lanes forms of max, min, roundscale and scalef, written as their masked forms with
// every lane set: GCC 12's plain forms pass _mm512_undefined_ps() through and trip
// -Wmaybe-uninitialized (GCC bug 105593), a false positive that -Werror would turn fatal.
constexpr __mmask16 kAll = 0xFFFF;
PI_AVX512 inline __m512 max16(__m512 a, __m512 b) { return _mm512_mask_max_ps(a, kAll, a, b); }
PI_AVX512 inline __m512 min16(__m512 a, __m512 b) { return _mm512_mask_min_ps(a, kAll, a, b); }

// exp(z) for 16 lanes: fast_exp's reduction and polynomial (the same constants, so the same
// error, < 2e-7 relative), with 2^n applied by VSCALEFPS, which goes to +inf or 0 at the ends
// without the two-factor split fast_exp needs. NaN stays NaN (the clamps let it through).
PI_AVX512 inline __m512 exp16(__m512 z) {
  z = min16(_mm512_set1_ps(88.7228390f), max16(_mm512_set1_ps(-103.2789299f), z));
  const __m512 t = _mm512_mul_ps(z, _mm512_set1_ps(1.44269504088896341f));
  const __m512 n =
      _mm512_mask_roundscale_ps(t, kAll, t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), z);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  return _mm512_mask_scalef_ps(p, kAll, p, n);
}

// y = x / (1 + exp(-x)) (kSilu) or 1 / (1 + exp(-x)) (Sigmoid), 16 at a time, the
// tail under a mask. One division per vector: the compiler's vectorization of the scalar form
// kept two (one per clamp branch), which bound the loop.
template <bool kSilu>
PI_AVX512 void sigmoid_family16(float* y, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(m, y + i);
    const __m512 d = _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x)));
    _mm512_mask_storeu_ps(y + i, m, _mm512_div_ps(kSilu ? x : one, d));
  }
}

bool avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}

#endif

}  // namespace

const char* activation_pass(cpu::ActKind kind) {
#ifdef PI_X86_AVX512
  if (avx512() && kind == cpu::ActKind::Silu) return "fast:avx512-silu";
  if (avx512() && kind == cpu::ActKind::Sigmoid) return "fast:avx512-sigmoid";
#endif
  (void)kind;
  return nullptr;
}

void activate_in_place(float* y, int64_t n, const cpu::FusedActivation& act, int threads) {
  if (act.kind == cpu::ActKind::None || n <= 0) return;
  // Transcendental work per element: worth threads from a quarter of the usual grain.
  parallel_for(n, threads, kGrain / 4, [&](int64_t b, int64_t e) {
#ifdef PI_X86_AVX512
    if (activation_pass(act.kind)) {
      if (act.kind == cpu::ActKind::Silu) return sigmoid_family16<true>(y + b, e - b);
      return sigmoid_family16<false>(y + b, e - b);
    }
#endif
    act.apply(y + b, static_cast<size_t>(e - b));
  });
}

}  // namespace polyinfer::fast
