// A fused activation applied in place over a float32 buffer, as a pass of its own after a
// library kernel that computed the values without it.
//
// Why a separate pass can beat a fused epilogue: oneDNN 2.6's AVX-512 convolutions (brgconv,
// brdgmm) apply transcendental post-ops slowly, at about what a mobile model's convolution
// costs per output element itself; the pass below runs SiLU and Sigmoid in a fraction of that
// over an output still in L2/L3 (docs/kernels.md has the figures).
#pragma once

#include <cstdint>

#include "ops/activation.h"

namespace polyinfer::fast {

// The pass's implementation name for `kind` on this CPU ("fast:avx512-silu"), or null where it
// has no vector code for it (it has for Silu and Sigmoid on AVX-512): activate_in_place is then
// correct but no faster than a fused epilogue.
const char* activation_pass(ActKind kind);

// y[i] = act(y[i]) for i in [0, n), split over up to `threads` OpenMP threads. Values agree with
// FusedActivation::apply within the fast kernels' tolerance (fast_unary_test.cpp); NaN stays NaN.
void activate_in_place(float* y, int64_t n, const FusedActivation& act, int threads);

}  // namespace polyinfer::fast
