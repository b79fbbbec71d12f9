// The Cast kernel's launcher (cast.cu), called by cast.cpp. Plain types only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "providers/cuda/ops/elem.h"

namespace polyinfer::cuda {

// y[i] = x[i] converted from `from` to `to` (n elements).
void launch_cast(Elem from, Elem to, const void* x, void* y, int64_t n, int max_grid,
                 cudaStream_t stream);

}  // namespace polyinfer::cuda
