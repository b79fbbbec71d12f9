// Data-movement kernels (layout_kernels.h): one thread per output element over grid-stride
// loops, 64-bit indexing. The copies move bits as unsigned words of the element's size (any
// dtype of that size, bit-exact); Resize widens to float32 and rounds once (elem.cuh).
#include "providers/cuda/ops/elem.cuh"
#include "providers/cuda/ops/grid.cuh"
#include "providers/cuda/ops/layout_kernels.h"

namespace polyinfer::cuda {
namespace {

template <class T>
__global__ void strided_copy(const T* __restrict__ x, T* __restrict__ y, int64_t n, StridedView v) {
  PI_GRID_STRIDE(i, n) {
    int64_t rest = i, off = v.base;
    for (int d = v.rank - 1; d >= 0; --d) {
      off += rest % v.dims[d] * v.stride[d];
      rest /= v.dims[d];
    }
    y[i] = x[off];
  }
}

template <class T, class Index>
__global__ void gather(const T* __restrict__ x, const Index* __restrict__ idx, T* __restrict__ y,
                       int64_t n, int64_t dim, int64_t n_idx, int64_t inner) {
  PI_GRID_STRIDE(i, n) {
    const int64_t in = i % inner, k = i / inner % n_idx, o = i / (inner * n_idx);
    int64_t j = static_cast<int64_t>(idx[k]);
    if (j < 0) j += dim;
    y[i] = x[(o * dim + j) * inner + in];
  }
}

// ops/pad.h's pad_source, on the device: the input coordinate for coordinate i of
// an axis of size dim, -1 for the constant.
__device__ int64_t pad_source(int mode, int64_t i, int64_t dim) {
  if (i >= 0 && i < dim) return i;
  if (mode == 0) return -1;                       // constant
  if (mode == 2) return i < 0 ? 0 : dim - 1;      // edge
  if (mode == 3) return ((i % dim) + dim) % dim;  // wrap
  if (dim == 1) return 0;                         // reflect: period 2(dim - 1), no edge repeated
  const int64_t period = 2 * (dim - 1);
  const int64_t m = ((i % period) + period) % period;
  return m < dim ? m : period - m;
}

template <class T>
__global__ void pad(const T* __restrict__ x, T* __restrict__ y, int64_t n, PadView v, float value) {
  PI_GRID_STRIDE(i, n) {
    int64_t rest = i, off = 0;
    bool inside = true;
    for (int d = v.rank - 1; d >= 0; --d) {
      const int64_t c = rest % v.odims[d];
      rest /= v.odims[d];
      const int64_t s = pad_source(v.mode, c - v.before[d], v.idims[d]);
      inside &= s >= 0;
      off += s * v.xstride[d];
    }
    y[i] = inside ? x[off] : narrow<T>(value);
  }
}

template <class T>
__global__ void resize(const T* __restrict__ x, T* __restrict__ y, int64_t n, int64_t h, int64_t w,
                       int64_t oh, int64_t ow, const int32_t* __restrict__ idx,
                       const float* __restrict__ wt, float extrapolation) {
  PI_GRID_STRIDE(i, n) {
    const int64_t c = i % ow, r = i / ow % oh, plane = i / (ow * oh);
    const int64_t tr = 2 * r, tc = 2 * (oh + c);
    if (idx[tr] < 0 || idx[tc] < 0) {
      y[i] = narrow<T>(extrapolation);
      continue;
    }
    const T* xp = x + plane * h * w;
    const T* r0 = xp + int64_t{idx[tr]} * w;
    const T* r1 = xp + int64_t{idx[tr + 1]} * w;
    const int64_t c0 = idx[tc], c1 = idx[tc + 1];
    const float a = wt[tc] * widen(r0[c0]) + wt[tc + 1] * widen(r0[c1]);
    const float b = wt[tc] * widen(r1[c0]) + wt[tc + 1] * widen(r1[c1]);
    y[i] = narrow<T>(wt[tr] * a + wt[tr + 1] * b);
  }
}

// f(As<U>{}) with U the unsigned word of `bytes` bytes: 1, 2, 4 or 8 (the callers pass the size
// of a float or 8-bit dtype; any other is a bug there).
template <class F> void with_word(size_t bytes, F&& f) {
  if (bytes == 1) f(As<uint8_t>{});
  else if (bytes == 2)
    f(As<uint16_t>{});
  else if (bytes == 8)
    f(As<uint64_t>{});
  else
    f(As<uint32_t>{});
}

}  // namespace

void launch_resize(Elem e, const void* x, void* y, int64_t planes, int64_t h, int64_t w, int64_t oh,
                   int64_t ow, const int32_t* idx, const float* wt, float extrapolation,
                   int max_grid, cudaStream_t stream) {
  const int64_t n = planes * oh * ow;
  if (n <= 0) return;
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    resize<T><<<grid_for(n, max_grid), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), n, h, w, oh, ow, idx, wt, extrapolation);
  });
}

void launch_pad(Elem e, const void* x, void* y, int64_t n, const PadView& v, float value,
                int max_grid, cudaStream_t stream) {
  if (n <= 0) return;
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    pad<T><<<grid_for(n, max_grid), kBlock, 0, stream>>>(static_cast<const T*>(x),
                                                         static_cast<T*>(y), n, v, value);
  });
}

void launch_strided_copy(size_t elem_bytes, const void* x, void* y, int64_t n, const StridedView& v,
                         int max_grid, cudaStream_t stream) {
  if (n <= 0) return;
  with_word(elem_bytes, [&](auto as) {
    using U = typename decltype(as)::type;
    strided_copy<U><<<grid_for(n, max_grid), kBlock, 0, stream>>>(static_cast<const U*>(x),
                                                                  static_cast<U*>(y), n, v);
  });
}

void launch_gather(size_t elem_bytes, const void* x, const void* indices, bool wide, void* y,
                   int64_t outer, int64_t dim, int64_t n_idx, int64_t inner, int max_grid,
                   cudaStream_t stream) {
  const int64_t n = outer * n_idx * inner;
  if (n <= 0) return;
  with_word(elem_bytes, [&](auto as) {
    using U = typename decltype(as)::type;
    const auto* ux = static_cast<const U*>(x);
    auto* uy = static_cast<U*>(y);
    if (wide)
      gather<<<grid_for(n, max_grid), kBlock, 0, stream>>>(ux, static_cast<const int64_t*>(indices),
                                                           uy, n, dim, n_idx, inner);
    else
      gather<<<grid_for(n, max_grid), kBlock, 0, stream>>>(ux, static_cast<const int32_t*>(indices),
                                                           uy, n, dim, n_idx, inner);
  });
}

}  // namespace polyinfer::cuda
