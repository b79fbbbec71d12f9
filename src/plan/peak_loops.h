// The machine-bound inner loops of `plan --target this` (measure.cpp): register-bound
// multiply-add chains for the compute peaks, and the STREAM triad for bandwidth.
//
// One file per architecture — peak_loops_x86.cpp, peak_loops_arm.cpp, peak_loops_generic.cpp —
// each compiling to nothing elsewhere. Within a file the instruction set is picked at run time
// (every function carries its own target attribute), so the library needs no -m flags and one
// binary runs on any CPU of its architecture.
#pragma once

#include <cstddef>

// Measurement loops are not instrumented: under AddressSanitizer their register-bound chains
// would live in checked stack memory and the triad would time the checks (a sanitizer build
// measured a 16x lower FMA peak). They touch only their own locals and the arrays they are given.
#define PI_MEASURE_LOOP __attribute__((no_sanitize("address", "undefined")))

namespace polyinfer::plan::detail {

struct PeakLoop {
  const char* isa = nullptr;  // "avx512f", "avx2+fma", …; nullptr when this CPU has none
  double ops_per_iter = 0;    // operations of one iteration, all chains (multiply-add = 2)
  // Runs `iters` iterations of independent multiply-add chains that live in registers (no
  // memory traffic) and returns a value computed from every chain, so none can be optimized away.
  float (*run)(long iters) = nullptr;
  int chains = 0;  // independent accumulators, enough to cover latency × pipes
};

// The widest fp32 FMA loop this CPU runs (a mul+add loop where there is no FMA); always present.
PeakLoop fp32_peak_loop();
// A bf16 dot-product loop (fp32 accumulate) when the CPU has one; isa nullptr otherwise.
PeakLoop bf16_peak_loop();
// An int8 dot-product loop (int32 accumulate) when the CPU has one; isa nullptr otherwise.
PeakLoop int8_peak_loop();

// a[i] = b[i] + s * c[i] for i < n, at the widest vectors the CPU has. Out of line (and, on x86,
// behind an ifunc), so repeated calls over the same arrays cannot be merged or skipped.
void triad(double* __restrict a, const double* __restrict b, const double* __restrict c, double s,
           size_t n);

}  // namespace polyinfer::plan::detail
