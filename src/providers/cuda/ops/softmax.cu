// Softmax / LogSoftmax. Two kernels by layout:
//  - inner == 1 (the usual last-axis case): one block per row of n contiguous elements; the
//    block's threads stride the row, reduce max then sum (warp shuffles, then one value per warp
//    through shared memory), then write.
//  - inner > 1: one thread per (outer, inner) column walking n with stride `inner`; adjacent
//    threads read adjacent addresses, so the loads still coalesce.
// Three passes over the row (max, sum, write) in fp32 with expf: the same arithmetic as the CPU
// reference, in another summation order.
#include <cfloat>

#include "providers/cuda/ops/softmax_kernels.h"

namespace polyinfer::cuda {
namespace {

constexpr int kRowBlock = 256;  // threads per row: 8 warps
constexpr int kWarps = kRowBlock / 32;

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The block-wide reduction of one value per thread; every thread gets the result.
template <bool IsMax> __device__ float block_reduce(float v, float* shared) {
  v = IsMax ? warp_max(v) : warp_sum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float r = lane < kWarps ? shared[lane] : (IsMax ? -FLT_MAX : 0.0f);
  r = IsMax ? warp_max(r) : warp_sum(r);
  __syncthreads();  // `shared` is reused by the next reduction
  return r;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int64_t rows,
                             int64_t n, bool log_softmax) {
  __shared__ float shared[kWarps];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* xr = x + row * n;
    float* yr = y + row * n;
    float m = -FLT_MAX;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, xr[i]);
    m = block_reduce<true>(m, shared);
    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += expf(xr[i] - m);
    s = block_reduce<false>(s, shared);
    if (log_softmax) {
      const float ls = logf(s);
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = xr[i] - m - ls;
    } else {
      const float inv = 1.0f / s;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = expf(xr[i] - m) * inv;
    }
  }
}

__global__ void softmax_columns(const float* __restrict__ x, float* __restrict__ y, int64_t outer,
                                int64_t n, int64_t inner, bool log_softmax) {
  const int64_t columns = outer * inner;
  for (int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; c < columns;
       c += int64_t{blockDim.x} * gridDim.x) {
    const int64_t o = c / inner, in = c % inner;
    const float* xc = x + o * n * inner + in;
    float* yc = y + o * n * inner + in;
    float m = -FLT_MAX;
    for (int64_t i = 0; i < n; ++i) m = fmaxf(m, xc[i * inner]);
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s += expf(xc[i * inner] - m);
    if (log_softmax) {
      const float ls = logf(s);
      for (int64_t i = 0; i < n; ++i) yc[i * inner] = xc[i * inner] - m - ls;
    } else {
      const float inv = 1.0f / s;
      for (int64_t i = 0; i < n; ++i) yc[i * inner] = expf(xc[i * inner] - m) * inv;
    }
  }
}

}  // namespace

void launch_softmax(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                    bool log_softmax, int max_grid, cudaStream_t stream) {
  if (outer <= 0 || n <= 0 || inner <= 0) return;
  if (inner == 1) {
    const int64_t g = outer < max_grid ? outer : max_grid;
    softmax_rows<<<static_cast<unsigned>(g), kRowBlock, 0, stream>>>(x, y, outer, n, log_softmax);
  } else {
    const int64_t g0 = (outer * inner + 255) / 256;
    const int64_t g = g0 < max_grid ? g0 : max_grid;
    softmax_columns<<<static_cast<unsigned>(g), 256, 0, stream>>>(x, y, outer, n, inner,
                                                                  log_softmax);
  }
}

}  // namespace polyinfer::cuda
