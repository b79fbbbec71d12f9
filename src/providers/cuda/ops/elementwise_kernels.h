// The element-wise CUDA kernels' launchers (elementwise.cu), called by the kernel classes in
// elementwise.cpp. Plain types only, so the .cu file needs none of the runtime's headers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "providers/cuda/ops/elem.h"

namespace polyinfer::cuda {

enum class BinaryOp : int { Add, Sub, Mul, Div, Pow, Max, Min };
// Parameters: LeakyRelu alpha = slope; HardSigmoid y = clamp(alpha x + beta, 0, 1); Clip
// alpha = min, beta = max. The activations are also what FusedGemm / FusedMatMul apply.
enum class UnaryOp : int {
  Relu,
  LeakyRelu,
  Sigmoid,
  Tanh,
  Exp,
  Log,
  Neg,
  Abs,
  Sqrt,
  Reciprocal,
  Erf,
  Gelu,
  GeluTanh,
  Silu,
  HardSigmoid,
  HardSwish,
  Clip
};

constexpr int kMaxRank = 6;

// Output dims and each input's element strides over them (0 where it broadcasts).
struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t stride_a[kMaxRank] = {};
  int64_t stride_b[kMaxRank] = {};
};

// Three inputs' element strides over the output dims (0 where one broadcasts): Where.
struct Broadcast3 {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t stride[3][kMaxRank] = {};
};

// c[i] = a[i] op b[i] over n elements of type `e` (elem.h); `bc` null when a, b and c have one
// shape.
void launch_binary(BinaryOp op, Elem e, const void* a, const void* b, void* c, int64_t n,
                   const Broadcast* bc, int max_grid, cudaStream_t stream);
// dst (n elements, bc's dims) = src read through bc.stride_a (numpy broadcasting; Gemm's C).
void launch_broadcast_copy(Elem e, const void* src, void* dst, int64_t n, const Broadcast* bc,
                           int max_grid, cudaStream_t stream);
// out[i] = cond[i] ? x[i] : y[i] (cond bool, one byte each; x, y and out of type `e`), each
// input read through bc.stride[0..2].
void launch_where(Elem e, const bool* cond, const void* x, const void* y, void* out, int64_t n,
                  const Broadcast3& bc, int max_grid, cudaStream_t stream);
// y[i] = op(x[i]); y may be x (in place).
void launch_unary(UnaryOp op, Elem e, const void* x, void* y, int64_t n, float alpha, float beta,
                  int max_grid, cudaStream_t stream);

}  // namespace polyinfer::cuda
