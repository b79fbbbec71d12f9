// Peak loops for architectures without their own file (peak_loops.h): plain C++ chains, which
// the compiler vectorizes at the baseline ISA at best; no bf16 or int8 dot products.
#if !defined(__x86_64__) && !defined(__aarch64__)

#include "plan/peak_loops.h"

namespace polyinfer::plan::detail {
namespace {

constexpr int kChains = 8;

PI_MEASURE_LOOP float fp32_scalar(long iters) {
  float acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = 1.0f + 0.01f * static_cast<float>(k);
  for (long i = 0; i < iters; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * 0.999999f + 1e-7f;
  float s = 0;
  for (float v : acc) s += v;
  return s;
}

}  // namespace

PeakLoop fp32_peak_loop() { return {"scalar", kChains * 2.0, fp32_scalar, kChains}; }
PeakLoop bf16_peak_loop() { return {}; }
PeakLoop int8_peak_loop() { return {}; }

PI_MEASURE_LOOP void triad(double* __restrict a, const double* __restrict b,
                           const double* __restrict c, double s, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace polyinfer::plan::detail

#endif
