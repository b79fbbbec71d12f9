// Float32 element-wise kernels: one thread per element over a grid-stride loop (any n fits the
// grid limit), the operator a template parameter so each instantiation is a straight loop.
// Math is CUDA's IEEE-accurate single-precision library (no --use_fast_math): the CPU reference
// kernels are the oracle.
#include "providers/cuda/ops/elementwise_kernels.h"

namespace polyinfer::cuda {
namespace {

constexpr int kBlock = 256;

template <BinaryOp Op>
__device__ __forceinline__ float apply(float a, float b) {
  if constexpr (Op == BinaryOp::Add) return a + b;
  else if constexpr (Op == BinaryOp::Sub) return a - b;
  else if constexpr (Op == BinaryOp::Mul) return a * b;
  else if constexpr (Op == BinaryOp::Div) return a / b;
  else if constexpr (Op == BinaryOp::Pow) return powf(a, b);
  // ONNX Max/Min propagate NaN (fmaxf would drop it).
  else if constexpr (Op == BinaryOp::Max) return (a != a || b != b) ? a + b : (a > b ? a : b);
  else return (a != a || b != b) ? a + b : (a < b ? a : b);
}

__device__ __forceinline__ float clamp01(float v) {
  return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}

// The formulas of the CPU reference kernels (activation.cpp, gelu.cpp, fused_activation.h).
template <UnaryOp Op>
__device__ __forceinline__ float apply(float x, float alpha, float beta) {
  if constexpr (Op == UnaryOp::Relu) return x < 0.0f ? 0.0f : x;  // NaN stays NaN
  else if constexpr (Op == UnaryOp::LeakyRelu) return x < 0.0f ? alpha * x : x;
  else if constexpr (Op == UnaryOp::Sigmoid) return 1.0f / (1.0f + expf(-x));
  else if constexpr (Op == UnaryOp::Tanh) return tanhf(x);
  else if constexpr (Op == UnaryOp::Exp) return expf(x);
  else if constexpr (Op == UnaryOp::Log) return logf(x);
  else if constexpr (Op == UnaryOp::Neg) return -x;
  else if constexpr (Op == UnaryOp::Abs) return fabsf(x);
  else if constexpr (Op == UnaryOp::Sqrt) return sqrtf(x);
  else if constexpr (Op == UnaryOp::Reciprocal) return 1.0f / x;
  else if constexpr (Op == UnaryOp::Erf) return erff(x);
  else if constexpr (Op == UnaryOp::Gelu) return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  else if constexpr (Op == UnaryOp::GeluTanh)
    return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  else if constexpr (Op == UnaryOp::Silu) return x / (1.0f + expf(-x));
  else if constexpr (Op == UnaryOp::HardSigmoid) return clamp01(alpha * x + beta);
  else if constexpr (Op == UnaryOp::HardSwish) return x * clamp01(x / 6.0f + 0.5f);
  else return x < alpha ? alpha : (x > beta ? beta : x);  // Clip
}

template <BinaryOp Op>
__global__ void binary_same(const float* __restrict__ a, const float* __restrict__ b,
                            float* __restrict__ c, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x)
    c[i] = apply<Op>(a[i], b[i]);
}

template <BinaryOp Op>
__global__ void binary_broadcast(const float* __restrict__ a, const float* __restrict__ b,
                                 float* __restrict__ c, int64_t n, Broadcast bc) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    // Unravel i over the output dims, innermost last, summing each input's strides.
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      const int64_t k = rest % bc.dims[d];
      rest /= bc.dims[d];
      ia += k * bc.stride_a[d];
      ib += k * bc.stride_b[d];
    }
    c[i] = apply<Op>(a[ia], b[ib]);
  }
}

__global__ void broadcast_copy(const float* __restrict__ src, float* __restrict__ dst, int64_t n,
                               Broadcast bc) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rest = i, is = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      is += rest % bc.dims[d] * bc.stride_a[d];
      rest /= bc.dims[d];
    }
    dst[i] = src[is];
  }
}

// Not __restrict__: y may be x (activations applied in place after a GEMM).
template <UnaryOp Op>
__global__ void unary(const float* x, float* y, int64_t n, float alpha, float beta) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x)
    y[i] = apply<Op>(x[i], alpha, beta);
}

unsigned grid_for(int64_t n, int max_grid) {
  const int64_t g = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(g < max_grid ? g : max_grid);
}

template <BinaryOp Op>
void binary_as(const float* a, const float* b, float* c, int64_t n, const Broadcast* bc,
               unsigned grid, cudaStream_t s) {
  if (bc) binary_broadcast<Op><<<grid, kBlock, 0, s>>>(a, b, c, n, *bc);
  else binary_same<Op><<<grid, kBlock, 0, s>>>(a, b, c, n);
}

}  // namespace

void launch_binary(BinaryOp op, const float* a, const float* b, float* c, int64_t n,
                   const Broadcast* bc, int max_grid, cudaStream_t s) {
  if (n <= 0) return;
  const unsigned g = grid_for(n, max_grid);
  switch (op) {
    case BinaryOp::Add: return binary_as<BinaryOp::Add>(a, b, c, n, bc, g, s);
    case BinaryOp::Sub: return binary_as<BinaryOp::Sub>(a, b, c, n, bc, g, s);
    case BinaryOp::Mul: return binary_as<BinaryOp::Mul>(a, b, c, n, bc, g, s);
    case BinaryOp::Div: return binary_as<BinaryOp::Div>(a, b, c, n, bc, g, s);
    case BinaryOp::Pow: return binary_as<BinaryOp::Pow>(a, b, c, n, bc, g, s);
    case BinaryOp::Max: return binary_as<BinaryOp::Max>(a, b, c, n, bc, g, s);
    case BinaryOp::Min: return binary_as<BinaryOp::Min>(a, b, c, n, bc, g, s);
  }
}

void launch_broadcast_copy(const float* src, float* dst, int64_t n, const Broadcast* bc,
                           int max_grid, cudaStream_t s) {
  if (n <= 0) return;
  broadcast_copy<<<grid_for(n, max_grid), kBlock, 0, s>>>(src, dst, n, *bc);
}

void launch_unary(UnaryOp op, const float* x, float* y, int64_t n, float alpha, float beta,
                  int max_grid, cudaStream_t s) {
  if (n <= 0) return;
  const unsigned g = grid_for(n, max_grid);
  switch (op) {
#define PI_CUDA_UNARY_CASE(OP)                                    \
  case UnaryOp::OP:                                               \
    unary<UnaryOp::OP><<<g, kBlock, 0, s>>>(x, y, n, alpha, beta); \
    return;
    PI_CUDA_UNARY_CASE(Relu)
    PI_CUDA_UNARY_CASE(LeakyRelu)
    PI_CUDA_UNARY_CASE(Sigmoid)
    PI_CUDA_UNARY_CASE(Tanh)
    PI_CUDA_UNARY_CASE(Exp)
    PI_CUDA_UNARY_CASE(Log)
    PI_CUDA_UNARY_CASE(Neg)
    PI_CUDA_UNARY_CASE(Abs)
    PI_CUDA_UNARY_CASE(Sqrt)
    PI_CUDA_UNARY_CASE(Reciprocal)
    PI_CUDA_UNARY_CASE(Erf)
    PI_CUDA_UNARY_CASE(Gelu)
    PI_CUDA_UNARY_CASE(GeluTanh)
    PI_CUDA_UNARY_CASE(Silu)
    PI_CUDA_UNARY_CASE(HardSigmoid)
    PI_CUDA_UNARY_CASE(HardSwish)
    PI_CUDA_UNARY_CASE(Clip)
#undef PI_CUDA_UNARY_CASE
  }
}

}  // namespace polyinfer::cuda
