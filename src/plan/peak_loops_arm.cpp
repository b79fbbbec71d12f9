// AArch64 peak loops (peak_loops.h): NEON for fp32 (every AArch64 CPU has it), BFDOT for bf16
// and SDOT for int8 when the kernel reports them (HWCAP2_BF16, HWCAP_ASIMDDP).
//
// 32 vector registers: 24 chains cover an FMA latency of 4 cycles on 4 pipes (Neoverse V1/V2,
// Apple cores) with room left for the constants. SVE is not used: NEON reaches the same FLOPs
// per cycle on 128-bit SVE cores, which most are.
#if defined(__aarch64__)

#include <arm_neon.h>
#include <sys/auxv.h>

#include "plan/peak_loops.h"

#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1 << 14)
#endif

namespace polyinfer::plan::detail {
namespace {

constexpr int kChains = 24;

// acc = acc * a + b converges to b / (1 - a), never overflowing or turning denormal.
PI_MEASURE_LOOP float fp32_neon(long iters) {
  float32x4_t acc[kChains];
#pragma GCC unroll 24
  for (int k = 0; k < kChains; ++k) acc[k] = vdupq_n_f32(1.0f + 0.01f * static_cast<float>(k));
  const float32x4_t a = vdupq_n_f32(0.999999f), b = vdupq_n_f32(1e-7f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 24
    for (int k = 0; k < kChains; ++k) acc[k] = vfmaq_f32(b, acc[k], a);
  }
  float32x4_t s = acc[0];
#pragma GCC unroll 24
  for (int k = 1; k < kChains; ++k) s = vaddq_f32(s, acc[k]);
  return vaddvq_f32(s);
}

// The dot products are written in assembly, as encoded words (.inst): clang's arm_neon.h has
// the bf16 types only when the whole file targets bf16, assemblers differ in which
// `.arch_extension` names they know, and a function-level target is what lets one binary run on
// cores without these instructions. The chains start at zero; `asm volatile` cannot be removed,
// so there is no result.

// BFDOT: two bf16 products added into each fp32 lane (8 multiply-adds per instruction). The
// inputs are 2^-11 (bf16 0x3a00): the sums grow slowly and stay normal.
PI_MEASURE_LOOP float bf16_neon(long iters) {
  if (iters <= 0) return 0;
  asm volatile(
      "movi v0.8h, #0x3a, lsl #8\n\t"
      "mov v1.16b, v0.16b\n\t"
      ".irp r, 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25\n\t"
      "movi v\\r\\().4s, #0\n\t"
      ".endr\n\t"
      "1:\n\t"
      ".irp r, 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25\n\t"
      ".inst 0x6e40fc00 | (1 << 16) | (0 << 5) | \\r\n\t"  // bfdot v<r>.4s, v0.8h, v1.8h
      ".endr\n\t"
      "subs %[n], %[n], #1\n\t"
      "b.ne 1b"
      : [n] "+r"(iters)
      :
      : "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12",
        "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25");
  return 0;
}

// SDOT: four s8 products added into each int32 lane (16 multiply-adds per instruction); the
// lanes wrap silently, which is fine: only the instruction count matters.
PI_MEASURE_LOOP float int8_neon(long iters) {
  if (iters <= 0) return 0;
  asm volatile(
      "movi v0.16b, #3\n\t"
      "movi v1.16b, #0xfe\n\t"
      ".irp r, 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25\n\t"
      "movi v\\r\\().4s, #0\n\t"
      ".endr\n\t"
      "1:\n\t"
      ".irp r, 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25\n\t"
      ".inst 0x4e809400 | (1 << 16) | (0 << 5) | \\r\n\t"  // sdot v<r>.4s, v0.16b, v1.16b
      ".endr\n\t"
      "subs %[n], %[n], #1\n\t"
      "b.ne 1b"
      : [n] "+r"(iters)
      :
      : "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12",
        "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25");
  return 0;
}

}  // namespace

// ops per iteration = chains × lanes × multiply-adds per lane × 2.
PeakLoop fp32_peak_loop() { return {"neon", kChains * 4 * 2.0, fp32_neon, kChains}; }

PeakLoop bf16_peak_loop() {
  if (getauxval(AT_HWCAP2) & HWCAP2_BF16)
    return {"bf16 (bfdot)", kChains * 4 * 2 * 2.0, bf16_neon, kChains};
  return {};
}

PeakLoop int8_peak_loop() {
  if (getauxval(AT_HWCAP) & HWCAP_ASIMDDP)
    return {"dotprod (sdot)", kChains * 4 * 4 * 2.0, int8_neon, kChains};
  return {};
}

PI_MEASURE_LOOP void triad(double* __restrict a, const double* __restrict b,
                           const double* __restrict c, double s, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace polyinfer::plan::detail

#endif  // __aarch64__
