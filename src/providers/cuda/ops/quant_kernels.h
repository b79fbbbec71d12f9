// Launchers of the quantized kernels in quant.cu: QuantizeLinear, DequantizeLinear, QLinearAdd,
// the signed 8-bit operands of the int8 products (im2col for a convolution, rows for a matrix
// product), a plain int8 GEMM and direct convolution where cuBLASLt has no kernel or the
// convolution is grouped, and the requantization of the int32 accumulators. Plain types only,
// so the .cu file needs none of the runtime's headers.
//
// Every rounding is the CPU reference kernels' (providers/cpu/reference/quantize.cpp) done the same
// way: the float32 divisions and products with the _rn intrinsics and the double ones with
// __dmul_rn/__dadd_rn, which nvcc never contracts into FMAs, so the results are the reference's
// bit for bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "providers/cuda/ops/elem.h"

namespace polyinfer::cuda {

// Storage types of quantized values.
enum class QElem : int { U8, S8, I32, F32 };

// A per-element parameter: one value (count 1), or one per index of an axis: element i takes
// parameter (i / inner) % count (the CPU's ParamLayout).
struct QAxis {
  int64_t count = 1, inner = 1;
};

// y = saturate(rint(float(x) / scale[p]) + zp[p]): x of float type `e`, y U8 or S8.
void launch_quantize(Elem e, const void* x, QElem yt, void* y, int64_t n, const float* scale,
                     const int32_t* zp, QAxis axis, int max_grid, cudaStream_t stream);

// y = float(x - zp[p]) · scale[p]: x U8, S8 or I32, y float32.
void launch_dequantize(QElem xt, const void* x, float* y, int64_t n, const float* scale,
                       const int32_t* zp, QAxis axis, int max_grid, cudaStream_t stream);

// ai.polyinfer QLinearAdd: c = saturate(rint((float(a - za)·sa + float(b - zb)·sb) / sc) + zc).
struct QAdd {
  float sa = 1, sb = 1, sc = 1;
  int32_t za = 0, zb = 0, zc = 0;
};
void launch_qlinear_add(QElem at, const void* a, QElem bt, const void* b, QElem ct, void* c,
                        int64_t n, const QAdd& p, int max_grid, cudaStream_t stream);

// A 1-D or 2-D convolution window (1-D: in_h = out_h = k_h = 1, s_h = d_h = 1, p_t = 0).
struct QConvGeom {
  int64_t channels = 0;  // input channels
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1, k_h = 1, k_w = 1;
  int64_t s_h = 1, s_w = 1, d_h = 1, d_w = 1, p_t = 0, p_l = 0;
};

// The convolution's input as an int8 matrix cols[rows][kp]: row r = n·P + p (image n < batch,
// output pixel p < P = out_h·out_w), column k = (c·k_h + i)·k_w + j, the tap's value shifted to
// int8 (x - 128 for U8 input, x for S8); a tap in the padding holds `pad` (the shifted zero
// point: it then cancels like the zero point elsewhere). Rows past batch·P and columns past
// channels·k_h·k_w are 0.
void launch_im2col_s8(QElem xt, const void* x, int8_t* cols, int64_t batch, const QConvGeom& g,
                      int64_t rows, int64_t kp, int8_t pad, int max_grid, cudaStream_t stream);

// y[r][kp] = x[r][k] shifted to int8 as above, columns past k zero.
void launch_rows_s8(QElem xt, const void* x, int8_t* y, int64_t rows, int64_t k, int64_t kp,
                    int max_grid, cudaStream_t stream);

// C[j][i] (row-major, rows of m) = Σ_k A[i][k]·B[j][k] for i < m, j < n; A and B int8 with rows
// of k. cuBLASLt's int8 product in the same layout, where it has no kernel for the shape.
void launch_int8_gemm(const int8_t* a, const int8_t* b, int32_t* c, int64_t m, int64_t n, int64_t k,
                      int max_grid, cudaStream_t stream);

// acc[n][m][p] = Σ (x - zx)·w[m][c][tap] over the group's channels and the taps inside the
// input (a padded tap is the zero point: it adds nothing). w int8 [out][channels/group][k_h·k_w].
void launch_qconv_direct(QElem xt, const void* x, int32_t zx, const int8_t* w, int32_t* acc,
                         int64_t batch, int64_t out, int64_t group, const QConvGeom& g,
                         int max_grid, cudaStream_t stream);

// How the int32 accumulators become Y, per output channel c:
//   v = double(acc + offset[c]) · mult[c]
//   Y = float(v) (F32), or saturate(rint(v) + zy) (U8, S8); with a residual z (QLinearConvAdd):
//   saturate(rint(clamp(v, lo, hi) + double(z - zz)·z_mult) + zy).
struct Requant {
  const double* mult = nullptr;
  const int32_t* offset = nullptr;
  QElem out = QElem::U8;
  int32_t zy = 0;
  const void* z = nullptr;  // of Y's shape, type zt
  QElem zt = QElem::U8;
  int32_t zz = 0;
  double z_mult = 0, lo = 0, hi = 0;
};
// Y[(o·channels + c)·inner + p] from acc[o·acc_o + c·acc_c + p].
void launch_requantize(const int32_t* acc, int64_t acc_o, int64_t acc_c, void* y, int64_t outer,
                       int64_t channels, int64_t inner, const Requant& r, int max_grid,
                       cudaStream_t stream);

}  // namespace polyinfer::cuda
