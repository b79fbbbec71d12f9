// What the two grouped-convolution kernels of this folder agree on: which shapes the AVX-512
// one (conv_grouped_avx512.cpp) takes, so that the AVX2 one (conv_grouped.cpp) steps aside for
// exactly those instead of the registry's order deciding.
#pragma once

#include <cstdint>

namespace polyinfer::fast {

// Whether the AVX-512 grouped kernel takes ci input and co output channels per group with a
// kh x kw window on this CPU: 4 or 8 of each, or 16 or 32 of each, windows up to 7x7, where
// the CPU has AVX-512 and POLYINFER_GROUPED_CONV_AVX512 is not "0".
bool avx512_grouped_takes(int64_t ci, int64_t co, int64_t kh, int64_t kw);

}  // namespace polyinfer::fast
