// x86-64 peak loops (peak_loops.h): AVX-512 → AVX2+FMA → SSE2 for fp32, AVX512-BF16 for bf16,
// AVX512-VNNI → AVX-VNNI for int8, chosen with __builtin_cpu_supports.
//
// How many chains: a chain issues one instruction per latency (4–6 cycles for FMA and the dot
// products on current cores) and a core has up to 2 such pipes, so 8–12 chains keep every pipe
// busy. AVX-512 has 32 vector registers: 24 chains leave room for the constants. AVX2 and SSE
// have 16: 12 chains.
#if defined(__x86_64__)

#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>

#include "plan/peak_loops.h"

namespace polyinfer::plan::detail {
namespace {

constexpr int kWide = 24;    // chains with 32 registers
constexpr int kNarrow = 12;  // chains with 16 registers

// fp32: acc = acc * a + b converges to b / (1 - a), never overflowing or turning denormal.
PI_MEASURE_LOOP __attribute__((target("avx512f"))) float fp32_avx512(long iters) {
  __m512 acc[kWide];
  for (int k = 0; k < kWide; ++k) acc[k] = _mm512_set1_ps(1.0f + 0.01f * static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i) {
    // Fully unrolled, so that the chains live in registers rather than in memory.
#pragma GCC unroll 24
    for (int k = 0; k < kWide; ++k) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  }
  __m512 s = acc[0];
  for (int k = 1; k < kWide; ++k) s = _mm512_add_ps(s, acc[k]);
  // Through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized (a false positive).
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0] + out[15];
}

PI_MEASURE_LOOP __attribute__((target("avx2,fma"))) float fp32_avx2(long iters) {
  __m256 acc[kNarrow];
  for (int k = 0; k < kNarrow; ++k) acc[k] = _mm256_set1_ps(1.0f + 0.01f * static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < kNarrow; ++k) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  }
  __m256 s = acc[0];
  for (int k = 1; k < kNarrow; ++k) s = _mm256_add_ps(s, acc[k]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

// SSE2 (every x86-64 CPU) has no FMA: a multiply and an add, the same 2 FLOPs per lane.
PI_MEASURE_LOOP float fp32_sse2(long iters) {
  __m128 acc[kNarrow];
  for (int k = 0; k < kNarrow; ++k) acc[k] = _mm_set1_ps(1.0f + 0.01f * static_cast<float>(k));
  const __m128 a = _mm_set1_ps(0.999999f), b = _mm_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < kNarrow; ++k) acc[k] = _mm_add_ps(_mm_mul_ps(acc[k], a), b);
  }
  __m128 s = acc[0];
  for (int k = 1; k < kNarrow; ++k) s = _mm_add_ps(s, acc[k]);
  float out[4];
  _mm_storeu_ps(out, s);
  return out[0] + out[3];
}

// bf16: vdpbf16ps adds two bf16 products into each fp32 lane (32 multiply-adds per
// instruction). The products are small (1e-6) and positive, so the sums grow slowly and stay
// normal: ~1e-3 after 1e9 iterations.
PI_MEASURE_LOOP __attribute__((target("avx512f,avx512bf16"))) float bf16_avx512(long iters) {
  __m512 acc[kWide];
  for (int k = 0; k < kWide; ++k) acc[k] = _mm512_set1_ps(0.01f * static_cast<float>(k));
  const __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 24
    for (int k = 0; k < kWide; ++k) acc[k] = _mm512_dpbf16_ps(acc[k], x, x);
  }
  __m512 s = acc[0];
  for (int k = 1; k < kWide; ++k) s = _mm512_add_ps(s, acc[k]);
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0] + out[15];
}

// int8: vpdpbusd adds four u8×s8 products into each int32 lane (64 multiply-adds per 512-bit
// instruction). In assembly, because GCC 12 spills these accumulators to the stack on every
// iteration when written with intrinsics (its vpdpbusd pattern defeats register allocation),
// which would measure the store port instead. The chains start at zero and wrap silently; only
// the instruction count matters, and `asm volatile` cannot be removed, so there is no result.
PI_MEASURE_LOOP __attribute__((target("avx512f,avx512vnni"))) float int8_avx512(long iters) {
  if (iters <= 0) return 0;
  asm volatile(
      "vpbroadcastd %[u], %%zmm0\n\t"
      "vpbroadcastd %[s], %%zmm1\n\t"
      ".irp r, 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25\n\t"
      "vpxord %%zmm\\r, %%zmm\\r, %%zmm\\r\n\t"
      ".endr\n\t"
      "1:\n\t"
      ".irp r, 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm\\r\n\t"
      ".endr\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "vzeroupper"  // what the compiler does after wide code: no SSE transition penalty later
      : [n] "+r"(iters)
      : [u] "r"(0x03030303), [s] "r"(0xfefefefe)
      : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19",
        "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25");
  return 0;
}

// AVX-VNNI: the same instruction on 256-bit registers (Alder Lake and later without AVX-512);
// {vex} asks for its VEX encoding, which needs no AVX-512.
PI_MEASURE_LOOP __attribute__((target("avx2,avxvnni"))) float int8_avxvnni(long iters) {
  if (iters <= 0) return 0;
  asm volatile(
      "vmovd %[u], %%xmm0\n\t"
      "vpbroadcastd %%xmm0, %%ymm0\n\t"
      "vmovd %[s], %%xmm1\n\t"
      "vpbroadcastd %%xmm1, %%ymm1\n\t"
      ".irp r, 2,3,4,5,6,7,8,9,10,11,12,13\n\t"
      "vpxor %%ymm\\r, %%ymm\\r, %%ymm\\r\n\t"
      ".endr\n\t"
      "1:\n\t"
      ".irp r, 2,3,4,5,6,7,8,9,10,11,12,13\n\t"
      "%{vex%} vpdpbusd %%ymm1, %%ymm0, %%ymm\\r\n\t"
      ".endr\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "vzeroupper"
      : [n] "+r"(iters)
      : [u] "r"(0x03030303), [s] "r"(0xfefefefe)
      : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13");
  return 0;
}

}  // namespace

// ops per iteration = chains × lanes × multiply-adds per lane × 2.
PeakLoop fp32_peak_loop() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512f", kWide * 16 * 2.0, fp32_avx512, kWide};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2+fma", kNarrow * 8 * 2.0, fp32_avx2, kNarrow};
  return {"sse2 (mul+add)", kNarrow * 4 * 2.0, fp32_sse2, kNarrow};
}

PeakLoop bf16_peak_loop() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16"))
    return {"avx512_bf16 (vdpbf16ps)", kWide * 16 * 2 * 2.0, bf16_avx512, kWide};
  return {};
}

// AVX-VNNI is CPUID leaf 7, sub-leaf 1, EAX bit 4 (read directly: clang 14's
// __builtin_cpu_supports does not know "avxvnni").
static bool has_avx_vnni() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
  return (eax >> 4) & 1u;
}

PeakLoop int8_peak_loop() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni"))
    return {"avx512_vnni (vpdpbusd)", kWide * 16 * 4 * 2.0, int8_avx512, kWide};
  if (has_avx_vnni()) return {"avx_vnni (vpdpbusd)", kNarrow * 8 * 4 * 2.0, int8_avxvnni, kNarrow};
  return {};
}

// One version per vector width, picked per call (a branch per pass is nothing beside the pass).
// Not target_clones: clang refuses to combine it with no_sanitize.
static PI_MEASURE_LOOP __attribute__((target("avx512f"))) void triad_avx512(
    double* __restrict a, const double* __restrict b, const double* __restrict c, double s,
    size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

static PI_MEASURE_LOOP __attribute__((target("avx2,fma"))) void triad_avx2(
    double* __restrict a, const double* __restrict b, const double* __restrict c, double s,
    size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

static PI_MEASURE_LOOP void triad_sse2(double* __restrict a, const double* __restrict b,
                                       const double* __restrict c, double s, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

void triad(double* __restrict a, const double* __restrict b, const double* __restrict c, double s,
           size_t n) {
  static const int isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 2;
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
  }();
  if (isa == 2) triad_avx512(a, b, c, s, n);
  else if (isa == 1)
    triad_avx2(a, b, c, s, n);
  else
    triad_sse2(a, b, c, s, n);
}

}  // namespace polyinfer::plan::detail

#endif  // __x86_64__
