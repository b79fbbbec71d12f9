// Neural-network kernels (nn_kernels.h): one thread per output over grid-stride loops for the
// element-wise ones (padding, pooling windows, BatchNormalization), one 256-thread block per row
// for the reductions (warp shuffles, then one value per warp through shared memory). Float32
// accumulation everywhere, IEEE math, one rounding per stored 16-bit result (elem.cuh): the CPU
// reference kernels are the oracle.
#include <cfloat>

#include "providers/cuda/ops/elem.cuh"
#include "providers/cuda/ops/grid.cuh"
#include "providers/cuda/ops/nn_kernels.h"

namespace polyinfer::cuda {
namespace {

constexpr int kWarps = kBlock / 32;

template <class T>
__global__ void pad_planes(const T* __restrict__ x, T* __restrict__ y, int64_t total, int64_t h,
                           int64_t w, int64_t pt, int64_t pl, int64_t oh, int64_t ow) {
  PI_GRID_STRIDE(i, total) {
    const int64_t c = i % ow, r = i / ow % oh, plane = i / (ow * oh);
    const int64_t ir = r - pt, ic = c - pl;
    y[i] =
        (ir >= 0 && ir < h && ic >= 0 && ic < w) ? x[(plane * h + ir) * w + ic] : narrow<T>(0.0f);
  }
}

template <class T>
__global__ void pool(const T* __restrict__ x, T* __restrict__ y, int64_t total, PoolWindow p,
                     PoolMode mode) {
  PI_GRID_STRIDE(i, total) {
    const int64_t ow = i % p.out_w, oh = i / p.out_w % p.out_h, plane = i / (p.out_w * p.out_h);
    const T* xp = x + plane * p.in_h * p.in_w;
    const int64_t h0 = oh * p.s_h - p.p_t, w0 = ow * p.s_w - p.p_l;
    float best = -INFINITY, sum = 0.0f;
    int64_t valid = 0, rows_in = 0, cols_in = 0;
    for (int64_t kh = 0; kh < p.k_h; ++kh) {
      const int64_t ih = h0 + kh * p.d_h;
      if (ih >= -p.p_t && ih < p.in_h + p.p_b) ++rows_in;
      if (ih < 0 || ih >= p.in_h) continue;
      for (int64_t kw = 0; kw < p.k_w; ++kw) {
        const int64_t iw = w0 + kw * p.d_w;
        if (iw < 0 || iw >= p.in_w) continue;
        const float v = widen(xp[ih * p.in_w + iw]);
        best = v > best ? v : best;
        sum += v;
        ++valid;
      }
    }
    if (mode == PoolMode::Max) {
      y[i] = narrow<T>(best);
    } else if (mode == PoolMode::AvgExcludePad) {
      y[i] = narrow<T>(valid ? sum / static_cast<float>(valid) : 0.0f);
    } else {
      for (int64_t kw = 0; kw < p.k_w; ++kw) {
        const int64_t iw = w0 + kw * p.d_w;
        if (iw >= -p.p_l && iw < p.in_w + p.p_r) ++cols_in;
      }
      const int64_t div = rows_in * cols_in;
      y[i] = narrow<T>(div ? sum / static_cast<float>(div) : 0.0f);
    }
  }
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The block-wide sum (IsMax false) or maximum of one value per thread; every thread gets the
// result. (A minimum is the negated maximum of the negated values.)
template <bool IsMax> __device__ float block_reduce(float v, float* shared) {
  v = IsMax ? warp_max(v) : warp_sum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float r = lane < kWarps ? shared[lane] : (IsMax ? -INFINITY : 0.0f);
  r = IsMax ? warp_max(r) : warp_sum(r);
  __syncthreads();  // `shared` is reused by the next reduction
  return r;
}

template <class T>
__global__ void row_reduce(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n,
                           RowOp op) {
  __shared__ float shared[kWarps];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    if (op == RowOp::Max || op == RowOp::Min) {
      const float sign = op == RowOp::Max ? 1.0f : -1.0f;
      float m = -INFINITY;
      bool nan = false;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = widen(xr[i]);
        nan |= v != v;
        m = fmaxf(m, sign * v);
      }
      m = block_reduce<true>(m, shared);
      // fmaxf drops NaN; the CPU's max and min keep it.
      const float any_nan = block_reduce<false>(nan ? 1.0f : 0.0f, shared);
      if (threadIdx.x == 0) y[row] = narrow<T>(any_nan > 0.0f ? NAN : sign * m);
    } else {
      float s = 0.0f;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += widen(xr[i]);
      s = block_reduce<false>(s, shared);
      if (threadIdx.x == 0) y[row] = narrow<T>(op == RowOp::Mean ? s / static_cast<float>(n) : s);
    }
  }
}

__global__ void layer_norm(const float* __restrict__ x, const float* __restrict__ scale,
                           const float* __restrict__ bias, float* __restrict__ y, int64_t rows,
                           int64_t n, int64_t s_stride, int64_t b_stride, float eps) {
  __shared__ float shared[kWarps];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* xr = x + row * n;
    float* yr = y + row * n;
    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += xr[i];
    const float mean = block_reduce<false>(s, shared) / static_cast<float>(n);
    float v = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float d = xr[i] - mean;
      v += d * d;
    }
    const float var = block_reduce<false>(v, shared) / static_cast<float>(n);
    const float inv = 1.0f / sqrtf(var + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      float r = (xr[i] - mean) * inv * scale[i * s_stride];
      if (bias) r += bias[i * b_stride];
      yr[i] = r;
    }
  }
}

template <class T>
__global__ void batch_norm(const T* __restrict__ x, const T* __restrict__ scale,
                           const T* __restrict__ bias, const T* __restrict__ mean,
                           const T* __restrict__ var, T* __restrict__ y, int64_t total,
                           int64_t channels, int64_t spatial, float eps) {
  PI_GRID_STRIDE(i, total) {
    const int64_t c = i / spatial % channels;
    y[i] = narrow<T>((widen(x[i]) - widen(mean[c])) / sqrtf(widen(var[c]) + eps) * widen(scale[c]) +
                     widen(bias[c]));
  }
}

unsigned rows_grid(int64_t rows, int max_grid) {
  return static_cast<unsigned>(rows < max_grid ? rows : max_grid);
}

}  // namespace

void launch_pad_planes(Elem e, const void* x, void* y, int64_t planes, int64_t h, int64_t w,
                       int64_t pt, int64_t pl, int64_t oh, int64_t ow, int max_grid,
                       cudaStream_t stream) {
  const int64_t total = planes * oh * ow;
  if (total <= 0) return;
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    pad_planes<T><<<grid_for(total, max_grid), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), total, h, w, pt, pl, oh, ow);
  });
}

void launch_pool(Elem e, const void* x, void* y, int64_t planes, const PoolWindow& w, PoolMode mode,
                 int max_grid, cudaStream_t stream) {
  const int64_t total = planes * w.out_h * w.out_w;
  if (total <= 0) return;
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    pool<T><<<grid_for(total, max_grid), kBlock, 0, stream>>>(static_cast<const T*>(x),
                                                              static_cast<T*>(y), total, w, mode);
  });
}

void launch_max_pool_q8(bool is_signed, const void* x, void* y, int64_t planes, const PoolWindow& w,
                        int max_grid, cudaStream_t stream) {
  const int64_t total = planes * w.out_h * w.out_w;
  if (total <= 0) return;
  auto go = [&](auto as) {
    using T = typename decltype(as)::type;
    pool<T><<<grid_for(total, max_grid), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), total, w, PoolMode::Max);
  };
  if (is_signed) go(As<int8_t>{});
  else
    go(As<uint8_t>{});
}

void launch_row_reduce(Elem e, const void* x, void* y, int64_t rows, int64_t n, RowOp op,
                       int max_grid, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    row_reduce<T><<<rows_grid(rows, max_grid), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, n, op);
  });
}

void launch_layer_norm(const float* x, const float* scale, const float* bias, float* y,
                       int64_t rows, int64_t n, int64_t s_stride, int64_t b_stride, float eps,
                       int max_grid, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;
  layer_norm<<<rows_grid(rows, max_grid), kBlock, 0, stream>>>(x, scale, bias, y, rows, n, s_stride,
                                                               b_stride, eps);
}

void launch_batch_norm(Elem e, const void* x, const void* scale, const void* bias, const void* mean,
                       const void* var, void* y, int64_t batch, int64_t channels, int64_t spatial,
                       float eps, int max_grid, cudaStream_t stream) {
  const int64_t total = batch * channels * spatial;
  if (total <= 0) return;
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    batch_norm<T><<<grid_for(total, max_grid), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<const T*>(bias),
        static_cast<const T*>(mean), static_cast<const T*>(var), static_cast<T*>(y), total,
        channels, spatial, eps);
  });
}

}  // namespace polyinfer::cuda
