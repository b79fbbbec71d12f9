// Quantized kernels (quant_kernels.h): one thread per output over grid-stride loops. The 8-bit
// storage type is a run-time switch inside the loop (uniform across a warp), not a template
// parameter: every operand pair of QLinearAdd would otherwise be its own instantiation, for
// kernels bound by memory either way.
#include "providers/cuda/ops/elem.cuh"
#include "providers/cuda/ops/grid.cuh"
#include "providers/cuda/ops/quant_kernels.h"

namespace polyinfer::cuda {
namespace {

__device__ __forceinline__ int32_t load_q(QElem t, const void* p, int64_t i) {
  if (t == QElem::U8) return static_cast<const uint8_t*>(p)[i];
  if (t == QElem::S8) return static_cast<const int8_t*>(p)[i];
  return static_cast<const int32_t*>(p)[i];
}

// The CPU's saturate_round: rint (half to even) plus the zero point, NaN to 0, clamped to the
// type's range.
__device__ __forceinline__ void store_saturated(QElem t, void* p, int64_t i, double v, int32_t zp) {
  double r = __dadd_rn(rint(v), static_cast<double>(zp));
  if (r != r) r = 0;
  if (t == QElem::U8) {
    static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
  } else {
    static_cast<int8_t*>(p)[i] = static_cast<int8_t>(r < -128 ? -128 : (r > 127 ? 127 : r));
  }
}

// An 8-bit value as the int8 of the products: uint8 moves down by 128.
__device__ __forceinline__ int8_t shifted(QElem t, int32_t q) {
  return static_cast<int8_t>(t == QElem::U8 ? q - 128 : q);
}

__device__ __forceinline__ int64_t param_of(const QAxis& a, int64_t i) {
  return a.count == 1 ? 0 : (i / a.inner) % a.count;
}

template <class T>
__global__ void quantize(const T* __restrict__ x, QElem yt, void* __restrict__ y, int64_t n,
                         const float* __restrict__ scale, const int32_t* __restrict__ zp,
                         QAxis axis) {
  PI_GRID_STRIDE(i, n) {
    const int64_t p = param_of(axis, i);
    store_saturated(yt, y, i, static_cast<double>(__fdiv_rn(widen(x[i]), scale[p])), zp[p]);
  }
}

__global__ void dequantize(QElem xt, const void* __restrict__ x, float* __restrict__ y, int64_t n,
                           const float* __restrict__ scale, const int32_t* __restrict__ zp,
                           QAxis axis) {
  PI_GRID_STRIDE(i, n) {
    const int64_t p = param_of(axis, i);
    const double d = static_cast<double>(int64_t{load_q(xt, x, i)} - zp[p]);  // exact
    y[i] = __fmul_rn(__double2float_rn(d), scale[p]);
  }
}

__global__ void qlinear_add(QElem at, const void* __restrict__ a, QElem bt,
                            const void* __restrict__ b, QElem ct, void* __restrict__ c, int64_t n,
                            QAdd p) {
  PI_GRID_STRIDE(i, n) {
    const float va = __fmul_rn(static_cast<float>(load_q(at, a, i) - p.za), p.sa);
    const float vb = __fmul_rn(static_cast<float>(load_q(bt, b, i) - p.zb), p.sb);
    store_saturated(ct, c, i, static_cast<double>(__fdiv_rn(__fadd_rn(va, vb), p.sc)), p.zc);
  }
}

__global__ void im2col_s8(QElem xt, const void* __restrict__ x, int8_t* __restrict__ cols,
                          int64_t total, int64_t valid_rows, int64_t taps_all, int64_t kp,
                          QConvGeom g, int8_t pad) {
  const int64_t P = g.out_h * g.out_w, taps = g.k_h * g.k_w;
  PI_GRID_STRIDE(i, total) {
    const int64_t k = i % kp, r = i / kp;
    int8_t v = 0;
    if (r < valid_rows && k < taps_all) {
      const int64_t n = r / P, p = r % P, oh = p / g.out_w, ow = p % g.out_w;
      const int64_t c = k / taps, t = k % taps, kh = t / g.k_w, kw = t % g.k_w;
      const int64_t ih = oh * g.s_h - g.p_t + kh * g.d_h, iw = ow * g.s_w - g.p_l + kw * g.d_w;
      v = (ih >= 0 && ih < g.in_h && iw >= 0 && iw < g.in_w)
              ? shifted(xt, load_q(xt, x, ((n * g.channels + c) * g.in_h + ih) * g.in_w + iw))
              : pad;
    }
    cols[i] = v;
  }
}

__global__ void rows_s8(QElem xt, const void* __restrict__ x, int8_t* __restrict__ y, int64_t total,
                        int64_t k, int64_t kp) {
  PI_GRID_STRIDE(i, total) {
    const int64_t c = i % kp, r = i / kp;
    y[i] = c < k ? shifted(xt, load_q(xt, x, r * k + c)) : int8_t{0};
  }
}

__global__ void int8_gemm(const int8_t* __restrict__ a, const int8_t* __restrict__ b,
                          int32_t* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  PI_GRID_STRIDE(idx, m * n) {
    const int64_t i = idx % m, j = idx / m;
    const int8_t* ar = a + i * k;
    const int8_t* br = b + j * k;
    int32_t s = 0;
    for (int64_t t = 0; t < k; ++t) s += int32_t{ar[t]} * int32_t{br[t]};
    c[idx] = s;
  }
}

__global__ void qconv_direct(QElem xt, const void* __restrict__ x, int32_t zx,
                             const int8_t* __restrict__ w, int32_t* __restrict__ acc, int64_t total,
                             int64_t out, int64_t group, QConvGeom g) {
  const int64_t P = g.out_h * g.out_w, cg = g.channels / group, mg = out / group;
  PI_GRID_STRIDE(i, total) {
    const int64_t p = i % P, m = i / P % out, n = i / (P * out);
    const int64_t oh = p / g.out_w, ow = p % g.out_w, c0 = m / mg * cg;
    int32_t s = 0;
    for (int64_t c = 0; c < cg; ++c) {
      const int64_t plane = (n * g.channels + c0 + c) * g.in_h;
      const int8_t* wc = w + (m * cg + c) * g.k_h * g.k_w;
      for (int64_t kh = 0; kh < g.k_h; ++kh) {
        const int64_t ih = oh * g.s_h - g.p_t + kh * g.d_h;
        if (ih < 0 || ih >= g.in_h) continue;
        for (int64_t kw = 0; kw < g.k_w; ++kw) {
          const int64_t iw = ow * g.s_w - g.p_l + kw * g.d_w;
          if (iw < 0 || iw >= g.in_w) continue;
          s += (load_q(xt, x, (plane + ih) * g.in_w + iw) - zx) * int32_t{wc[kh * g.k_w + kw]};
        }
      }
    }
    acc[i] = s;
  }
}

__global__ void requantize(const int32_t* __restrict__ acc, int64_t acc_o, int64_t acc_c,
                           void* __restrict__ y, int64_t total, int64_t channels, int64_t inner,
                           Requant r) {
  PI_GRID_STRIDE(i, total) {
    const int64_t p = i % inner, c = i / inner % channels, o = i / (inner * channels);
    // The sum wraps as the CPU's int32 accumulator does (unsigned: defined).
    const auto a = static_cast<int32_t>(static_cast<uint32_t>(acc[o * acc_o + c * acc_c + p]) +
                                        static_cast<uint32_t>(r.offset[c]));
    const double v = __dmul_rn(static_cast<double>(a), r.mult[c]);
    if (r.out == QElem::F32) {
      static_cast<float*>(y)[i] = __double2float_rn(v);
      continue;
    }
    double t = v;
    if (r.z) {
      t = v < r.lo ? r.lo : (r.hi < v ? r.hi : v);
      t = __dadd_rn(t, __dmul_rn(static_cast<double>(load_q(r.zt, r.z, i) - r.zz), r.z_mult));
    }
    store_saturated(r.out, y, i, t, r.zy);
  }
}

}  // namespace

void launch_quantize(Elem e, const void* x, QElem yt, void* y, int64_t n, const float* scale,
                     const int32_t* zp, QAxis axis, int max_grid, cudaStream_t stream) {
  if (n <= 0) return;
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    quantize<T><<<grid_for(n, max_grid), kBlock, 0, stream>>>(static_cast<const T*>(x), yt, y, n,
                                                              scale, zp, axis);
  });
}

void launch_dequantize(QElem xt, const void* x, float* y, int64_t n, const float* scale,
                       const int32_t* zp, QAxis axis, int max_grid, cudaStream_t stream) {
  if (n <= 0) return;
  dequantize<<<grid_for(n, max_grid), kBlock, 0, stream>>>(xt, x, y, n, scale, zp, axis);
}

void launch_qlinear_add(QElem at, const void* a, QElem bt, const void* b, QElem ct, void* c,
                        int64_t n, const QAdd& p, int max_grid, cudaStream_t stream) {
  if (n <= 0) return;
  qlinear_add<<<grid_for(n, max_grid), kBlock, 0, stream>>>(at, a, bt, b, ct, c, n, p);
}

void launch_im2col_s8(QElem xt, const void* x, int8_t* cols, int64_t batch, const QConvGeom& g,
                      int64_t rows, int64_t kp, int8_t pad, int max_grid, cudaStream_t stream) {
  const int64_t total = rows * kp;
  if (total <= 0) return;
  im2col_s8<<<grid_for(total, max_grid), kBlock, 0, stream>>>(
      xt, x, cols, total, batch * g.out_h * g.out_w, g.channels * g.k_h * g.k_w, kp, g, pad);
}

void launch_rows_s8(QElem xt, const void* x, int8_t* y, int64_t rows, int64_t k, int64_t kp,
                    int max_grid, cudaStream_t stream) {
  const int64_t total = rows * kp;
  if (total <= 0) return;
  rows_s8<<<grid_for(total, max_grid), kBlock, 0, stream>>>(xt, x, y, total, k, kp);
}

void launch_int8_gemm(const int8_t* a, const int8_t* b, int32_t* c, int64_t m, int64_t n, int64_t k,
                      int max_grid, cudaStream_t stream) {
  if (m * n <= 0) return;
  int8_gemm<<<grid_for(m * n, max_grid), kBlock, 0, stream>>>(a, b, c, m, n, k);
}

void launch_qconv_direct(QElem xt, const void* x, int32_t zx, const int8_t* w, int32_t* acc,
                         int64_t batch, int64_t out, int64_t group, const QConvGeom& g,
                         int max_grid, cudaStream_t stream) {
  const int64_t total = batch * out * g.out_h * g.out_w;
  if (total <= 0) return;
  qconv_direct<<<grid_for(total, max_grid), kBlock, 0, stream>>>(xt, x, zx, w, acc, total, out,
                                                                 group, g);
}

void launch_requantize(const int32_t* acc, int64_t acc_o, int64_t acc_c, void* y, int64_t outer,
                       int64_t channels, int64_t inner, const Requant& r, int max_grid,
                       cudaStream_t stream) {
  const int64_t total = outer * channels * inner;
  if (total <= 0) return;
  requantize<<<grid_for(total, max_grid), kBlock, 0, stream>>>(acc, acc_o, acc_c, y, total,
                                                               channels, inner, r);
}

}  // namespace polyinfer::cuda
