// The launch shape the CUDA element-wise kernels share: 256-thread blocks over a grid-stride
// loop, the grid capped at the device's limit, so any element count fits one launch.
#pragma once

#include <cstdint>

namespace polyinfer::cuda {

constexpr int kBlock = 256;

// Blocks for n elements: at least 1, at most max_grid (the loop covers the rest).
inline unsigned grid_for(int64_t n, int max_grid) {
  const int64_t g = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(g < 1 ? 1 : (g < max_grid ? g : max_grid));
}

}  // namespace polyinfer::cuda

// for (int64_t i = this thread's first element; i < n; i += the grid's thread count)
#define PI_GRID_STRIDE(i, n)                                                \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{blockDim.x} * gridDim.x)
