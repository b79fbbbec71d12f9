// Launchers of the neural-network kernels in nn.cu (explicit padding for Conv, pooling, row
// reductions, LayerNormalization, BatchNormalization). Plain types only, so the .cu file needs
// none of the runtime's headers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "providers/cuda/ops/elem.h"

namespace polyinfer::cuda {

// Tensors of type `e` (elem.h) where a launcher takes an Elem, float32 otherwise.

// y [planes, oh, ow] = x [planes, h, w] placed at (pt, pl), zeros around it.
void launch_pad_planes(Elem e, const void* x, void* y, int64_t planes, int64_t h, int64_t w,
                       int64_t pt, int64_t pl, int64_t oh, int64_t ow, int max_grid,
                       cudaStream_t stream);

enum class PoolMode : int { Max, AvgExcludePad, AvgIncludePad };

// A 2-D pooling window (1-D is one row: in_h = out_h = k_h = 1). The CPU's rules: taps outside
// the input are skipped; AvgExcludePad divides by the taps inside the input, AvgIncludePad by
// those inside [-pad_begin, in + pad_end) (not the ones past the end padding ceil_mode adds).
struct PoolWindow {
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1, k_h = 1, k_w = 1;
  int64_t s_h = 1, s_w = 1, d_h = 1, d_w = 1, p_t = 0, p_l = 0, p_b = 0, p_r = 0;
};
void launch_pool(Elem e, const void* x, void* y, int64_t planes, const PoolWindow& w, PoolMode mode,
                 int max_grid, cudaStream_t stream);

// MaxPool of uint8 (is_signed false) or int8 values: the largest byte is the quantized maximum
// (a QDQ model's MaxPool between quantized products, fused by the optimizer), exact.
void launch_max_pool_q8(bool is_signed, const void* x, void* y, int64_t planes, const PoolWindow& w,
                        int max_grid, cudaStream_t stream);

enum class RowOp : int { Sum, Mean, Max, Min };
// y[r] = op(x[r * n .. r * n + n)), one block per row, accumulated in float32.
void launch_row_reduce(Elem e, const void* x, void* y, int64_t rows, int64_t n, RowOp op,
                       int max_grid, cudaStream_t stream);

// y = (x - mean) / sqrt(var + eps) * scale + bias over rows of n, statistics in float32, one
// block per row. scale[i * s_stride] and bias[i * b_stride] (stride 0: one value; bias may be
// null).
void launch_layer_norm(const float* x, const float* scale, const float* bias, float* y,
                       int64_t rows, int64_t n, int64_t s_stride, int64_t b_stride, float eps,
                       int max_grid, cudaStream_t stream);

// Inference BatchNormalization over [batch, channels, spatial], every tensor of type `e`:
// y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c].
void launch_batch_norm(Elem e, const void* x, const void* scale, const void* bias, const void* mean,
                       const void* var, void* y, int64_t batch, int64_t channels, int64_t spatial,
                       float eps, int max_grid, cudaStream_t stream);

}  // namespace polyinfer::cuda
