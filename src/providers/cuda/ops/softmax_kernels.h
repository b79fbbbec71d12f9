// Softmax and LogSoftmax launchers (softmax.cu), called by softmax.cpp.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace polyinfer::cuda {

// Normalizes x viewed as [outer, n, inner] along n: y = exp(x - max) / sum (log: x - max -
// log(sum)). `log_softmax` picks LogSoftmax.
void launch_softmax(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                    bool log_softmax, int max_grid, cudaStream_t stream);

}  // namespace polyinfer::cuda
