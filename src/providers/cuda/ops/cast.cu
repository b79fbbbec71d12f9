// Cast between float32, float16 and bfloat16 (cast.cpp): widen to float32 (exact), round to the
// target once (elem.cuh: nearest even, overflow to inf, NaN kept as a NaN, subnormals kept), as
// the CPU's Float16/BFloat16 conversions do.
#include "providers/cuda/ops/cast_kernels.h"
#include "providers/cuda/ops/elem.cuh"

namespace polyinfer::cuda {
namespace {

constexpr int kBlock = 256;

template <class From, class To>
__global__ void cast(const From* __restrict__ x, To* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x)
    y[i] = narrow<To>(widen(x[i]));
}

}  // namespace

void launch_cast(Elem from, Elem to, const void* x, void* y, int64_t n, int max_grid,
                 cudaStream_t stream) {
  if (n <= 0) return;
  const int64_t g = (n + kBlock - 1) / kBlock;
  const auto grid = static_cast<unsigned>(g < max_grid ? g : max_grid);
  with_elem(from, [&](auto in) {
    using From = typename decltype(in)::type;
    with_elem(to, [&](auto out) {
      using To = typename decltype(out)::type;
      cast<From, To><<<grid, kBlock, 0, stream>>>(static_cast<const From*>(x),
                                                  static_cast<To*>(y), n);
    });
  });
}

}  // namespace polyinfer::cuda
