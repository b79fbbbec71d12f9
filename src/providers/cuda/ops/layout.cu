// Data-movement kernels (layout_kernels.h): one thread per output element over grid-stride
// loops, 64-bit indexing. Only copies: the results are bit-exact.
#include "providers/cuda/ops/layout_kernels.h"

namespace polyinfer::cuda {
namespace {

constexpr int kBlock = 256;

unsigned grid_for(int64_t n, int max_grid) {
  const int64_t g = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(g < 1 ? 1 : (g < max_grid ? g : max_grid));
}

__global__ void strided_copy(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                             StridedView v) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rest = i, off = v.base;
    for (int d = v.rank - 1; d >= 0; --d) {
      off += rest % v.dims[d] * v.stride[d];
      rest /= v.dims[d];
    }
    y[i] = x[off];
  }
}

template <class Index>
__global__ void gather(const float* __restrict__ x, const Index* __restrict__ idx,
                       float* __restrict__ y, int64_t n, int64_t dim, int64_t n_idx,
                       int64_t inner) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t in = i % inner, k = i / inner % n_idx, o = i / (inner * n_idx);
    int64_t j = static_cast<int64_t>(idx[k]);
    if (j < 0) j += dim;
    y[i] = x[(o * dim + j) * inner + in];
  }
}

__global__ void resize(const float* __restrict__ x, float* __restrict__ y, int64_t n, int64_t h,
                       int64_t w, int64_t oh, int64_t ow, const int32_t* __restrict__ idx,
                       const float* __restrict__ wt, float extrapolation) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t c = i % ow, r = i / ow % oh, plane = i / (ow * oh);
    const int64_t tr = 2 * r, tc = 2 * (oh + c);
    if (idx[tr] < 0 || idx[tc] < 0) {
      y[i] = extrapolation;
      continue;
    }
    const float* xp = x + plane * h * w;
    const float* r0 = xp + int64_t{idx[tr]} * w;
    const float* r1 = xp + int64_t{idx[tr + 1]} * w;
    const int64_t c0 = idx[tc], c1 = idx[tc + 1];
    const float a = wt[tc] * r0[c0] + wt[tc + 1] * r0[c1];
    const float b = wt[tc] * r1[c0] + wt[tc + 1] * r1[c1];
    y[i] = wt[tr] * a + wt[tr + 1] * b;
  }
}

}  // namespace

void launch_resize(const float* x, float* y, int64_t planes, int64_t h, int64_t w, int64_t oh,
                   int64_t ow, const int32_t* idx, const float* wt, float extrapolation,
                   int max_grid, cudaStream_t stream) {
  const int64_t n = planes * oh * ow;
  if (n <= 0) return;
  resize<<<grid_for(n, max_grid), kBlock, 0, stream>>>(x, y, n, h, w, oh, ow, idx, wt,
                                                       extrapolation);
}

void launch_strided_copy(const float* x, float* y, int64_t n, const StridedView& v, int max_grid,
                         cudaStream_t stream) {
  if (n <= 0) return;
  strided_copy<<<grid_for(n, max_grid), kBlock, 0, stream>>>(x, y, n, v);
}

void launch_gather(const float* x, const void* indices, bool wide, float* y, int64_t outer,
                   int64_t dim, int64_t n_idx, int64_t inner, int max_grid, cudaStream_t stream) {
  const int64_t n = outer * n_idx * inner;
  if (n <= 0) return;
  if (wide)
    gather<<<grid_for(n, max_grid), kBlock, 0, stream>>>(
        x, static_cast<const int64_t*>(indices), y, n, dim, n_idx, inner);
  else
    gather<<<grid_for(n, max_grid), kBlock, 0, stream>>>(
        x, static_cast<const int32_t*>(indices), y, n, dim, n_idx, inner);
}

}  // namespace polyinfer::cuda
