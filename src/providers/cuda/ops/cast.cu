// Cast between float32, float16 and bfloat16 (cast.cpp): widen to float32 (exact), round to the
// target once (elem.cuh: nearest even, overflow to inf, NaN kept as a NaN, subnormals kept), as
// the CPU's Float16/BFloat16 conversions do.
#include "providers/cuda/ops/cast_kernels.h"
#include "providers/cuda/ops/elem.cuh"
#include "providers/cuda/ops/grid.cuh"

namespace polyinfer::cuda {
namespace {

template <class From, class To>
__global__ void cast(const From* __restrict__ x, To* __restrict__ y, int64_t n) {
  PI_GRID_STRIDE(i, n)
  y[i] = narrow<To>(widen(x[i]));
}

}  // namespace

void launch_cast(Elem from, Elem to, const void* x, void* y, int64_t n, int max_grid,
                 cudaStream_t stream) {
  if (n <= 0) return;
  const unsigned grid = grid_for(n, max_grid);
  with_elem(from, [&](auto in) {
    using From = typename decltype(in)::type;
    with_elem(to, [&](auto out) {
      using To = typename decltype(out)::type;
      cast<From, To>
          <<<grid, kBlock, 0, stream>>>(static_cast<const From*>(x), static_cast<To*>(y), n);
    });
  });
}

}  // namespace polyinfer::cuda
