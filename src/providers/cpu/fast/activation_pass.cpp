#include "providers/cpu/fast/activation_pass.h"

#include "providers/cpu/fast/avx512_math.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

#ifdef PI_X86_AVX512

using avx512::exp16;

// y = x / (1 + exp(-x)) (kSilu) or 1 / (1 + exp(-x)) (Sigmoid), 16 at a time, the
// tail under a mask. One division per vector: the compiler's vectorization of the scalar form
// kept two (one per clamp branch), which bound the loop.
template <bool kSilu> PI_AVX512 void sigmoid_family16(float* y, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(m, y + i);
    const __m512 d = _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x)));
    _mm512_mask_storeu_ps(y + i, m, _mm512_div_ps(kSilu ? x : one, d));
  }
}

#endif

}  // namespace

const char* activation_pass(ActKind kind) {
#ifdef PI_X86_AVX512
  if (avx512::supported() && kind == ActKind::Silu) return "fast:avx512-silu";
  if (avx512::supported() && kind == ActKind::Sigmoid) return "fast:avx512-sigmoid";
#endif
  (void)kind;
  return nullptr;
}

void activate_in_place(float* y, int64_t n, const FusedActivation& act, int threads) {
  if (act.kind == ActKind::None || n <= 0) return;
  // Transcendental work per element: worth threads from a quarter of the usual grain.
  parallel_for(n, threads, kGrain / 4, [&](int64_t b, int64_t e) {
#ifdef PI_X86_AVX512
    if (activation_pass(act.kind)) {
      if (act.kind == ActKind::Silu) return sigmoid_family16<true>(y + b, e - b);
      return sigmoid_family16<false>(y + b, e - b);
    }
#endif
    act.apply(y + b, static_cast<size_t>(e - b));
  });
}

}  // namespace polyinfer::fast
