// Element-wise kernels: one thread per element over a grid-stride loop (any n fits the grid
// limit), the operator and the storage type (elem.cuh) template parameters so each
// instantiation is a straight loop. Math is CUDA's IEEE-accurate single-precision library (no
// --use_fast_math) on widened values, one rounding per stored result: the CPU reference kernels,
// which compute float16 and bfloat16 the same way, are the oracle.
#include "providers/cuda/ops/elem.cuh"
#include "providers/cuda/ops/elementwise_kernels.h"
#include "providers/cuda/ops/grid.cuh"

namespace polyinfer::cuda {
namespace {

template <BinaryOp Op> __device__ __forceinline__ float apply(float a, float b) {
  if constexpr (Op == BinaryOp::Add) return a + b;
  else if constexpr (Op == BinaryOp::Sub)
    return a - b;
  else if constexpr (Op == BinaryOp::Mul)
    return a * b;
  else if constexpr (Op == BinaryOp::Div)
    return a / b;
  else if constexpr (Op == BinaryOp::Pow)
    return powf(a, b);
  // ONNX Max/Min propagate NaN (fmaxf would drop it).
  else if constexpr (Op == BinaryOp::Max)
    return (a != a || b != b) ? a + b : (a > b ? a : b);
  else
    return (a != a || b != b) ? a + b : (a < b ? a : b);
}

__device__ __forceinline__ float clamp01(float v) {
  return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}

// The formulas of the CPU reference kernels (activation.cpp, gelu.cpp, ops/activation.h).
template <UnaryOp Op> __device__ __forceinline__ float apply(float x, float alpha, float beta) {
  if constexpr (Op == UnaryOp::Relu) return x < 0.0f ? 0.0f : x;  // NaN stays NaN
  else if constexpr (Op == UnaryOp::LeakyRelu)
    return x < 0.0f ? alpha * x : x;
  else if constexpr (Op == UnaryOp::Sigmoid)
    return 1.0f / (1.0f + expf(-x));
  else if constexpr (Op == UnaryOp::Tanh)
    return tanhf(x);
  else if constexpr (Op == UnaryOp::Exp)
    return expf(x);
  else if constexpr (Op == UnaryOp::Log)
    return logf(x);
  else if constexpr (Op == UnaryOp::Neg)
    return -x;
  else if constexpr (Op == UnaryOp::Abs)
    return fabsf(x);
  else if constexpr (Op == UnaryOp::Sqrt)
    return sqrtf(x);
  else if constexpr (Op == UnaryOp::Reciprocal)
    return 1.0f / x;
  else if constexpr (Op == UnaryOp::Erf)
    return erff(x);
  else if constexpr (Op == UnaryOp::Gelu)
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  else if constexpr (Op == UnaryOp::GeluTanh)
    return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  else if constexpr (Op == UnaryOp::Silu)
    return x / (1.0f + expf(-x));
  else if constexpr (Op == UnaryOp::HardSigmoid)
    return clamp01(alpha * x + beta);
  else if constexpr (Op == UnaryOp::HardSwish)
    return x * clamp01(x / 6.0f + 0.5f);
  else
    return x < alpha ? alpha : (x > beta ? beta : x);  // Clip
}

template <BinaryOp Op, class T>
__global__ void binary_same(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                            int64_t n) {
  PI_GRID_STRIDE(i, n)
  c[i] = narrow<T>(apply<Op>(widen(a[i]), widen(b[i])));
}

template <BinaryOp Op, class T>
__global__ void binary_broadcast(const T* __restrict__ a, const T* __restrict__ b,
                                 T* __restrict__ c, int64_t n, Broadcast bc) {
  PI_GRID_STRIDE(i, n) {
    // Unravel i over the output dims, innermost last, summing each input's strides.
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      const int64_t k = rest % bc.dims[d];
      rest /= bc.dims[d];
      ia += k * bc.stride_a[d];
      ib += k * bc.stride_b[d];
    }
    c[i] = narrow<T>(apply<Op>(widen(a[ia]), widen(b[ib])));
  }
}

template <class T>
__global__ void broadcast_copy(const T* __restrict__ src, T* __restrict__ dst, int64_t n,
                               Broadcast bc) {
  PI_GRID_STRIDE(i, n) {
    int64_t rest = i, is = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      is += rest % bc.dims[d] * bc.stride_a[d];
      rest /= bc.dims[d];
    }
    dst[i] = src[is];
  }
}

// A selection: the chosen element's bits, no conversion.
template <class T>
__global__ void where(const bool* __restrict__ cond, const T* __restrict__ x,
                      const T* __restrict__ y, T* __restrict__ out, int64_t n, Broadcast3 bc) {
  PI_GRID_STRIDE(i, n) {
    int64_t rest = i, ic = 0, ix = 0, iy = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      const int64_t k = rest % bc.dims[d];
      rest /= bc.dims[d];
      ic += k * bc.stride[0][d];
      ix += k * bc.stride[1][d];
      iy += k * bc.stride[2][d];
    }
    out[i] = cond[ic] ? x[ix] : y[iy];
  }
}

// Not __restrict__: y may be x (activations applied in place after a GEMM).
template <UnaryOp Op, class T>
__global__ void unary(const T* x, T* y, int64_t n, float alpha, float beta) {
  PI_GRID_STRIDE(i, n)
  y[i] = narrow<T>(apply<Op>(widen(x[i]), alpha, beta));
}

template <BinaryOp Op>
void binary_as(Elem e, const void* a, const void* b, void* c, int64_t n, const Broadcast* bc,
               unsigned grid, cudaStream_t s) {
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    const auto* ta = static_cast<const T*>(a);
    const auto* tb = static_cast<const T*>(b);
    auto* tc = static_cast<T*>(c);
    if (bc) binary_broadcast<Op, T><<<grid, kBlock, 0, s>>>(ta, tb, tc, n, *bc);
    else
      binary_same<Op, T><<<grid, kBlock, 0, s>>>(ta, tb, tc, n);
  });
}

template <UnaryOp Op>
void unary_as(Elem e, const void* x, void* y, int64_t n, float alpha, float beta, unsigned grid,
              cudaStream_t s) {
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    unary<Op, T>
        <<<grid, kBlock, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n, alpha, beta);
  });
}

}  // namespace

void launch_binary(BinaryOp op, Elem e, const void* a, const void* b, void* c, int64_t n,
                   const Broadcast* bc, int max_grid, cudaStream_t s) {
  if (n <= 0) return;
  const unsigned g = grid_for(n, max_grid);
  switch (op) {
    case BinaryOp::Add: return binary_as<BinaryOp::Add>(e, a, b, c, n, bc, g, s);
    case BinaryOp::Sub: return binary_as<BinaryOp::Sub>(e, a, b, c, n, bc, g, s);
    case BinaryOp::Mul: return binary_as<BinaryOp::Mul>(e, a, b, c, n, bc, g, s);
    case BinaryOp::Div: return binary_as<BinaryOp::Div>(e, a, b, c, n, bc, g, s);
    case BinaryOp::Pow: return binary_as<BinaryOp::Pow>(e, a, b, c, n, bc, g, s);
    case BinaryOp::Max: return binary_as<BinaryOp::Max>(e, a, b, c, n, bc, g, s);
    case BinaryOp::Min: return binary_as<BinaryOp::Min>(e, a, b, c, n, bc, g, s);
  }
}

void launch_broadcast_copy(Elem e, const void* src, void* dst, int64_t n, const Broadcast* bc,
                           int max_grid, cudaStream_t s) {
  if (n <= 0) return;
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    broadcast_copy<T><<<grid_for(n, max_grid), kBlock, 0, s>>>(static_cast<const T*>(src),
                                                               static_cast<T*>(dst), n, *bc);
  });
}

void launch_where(Elem e, const bool* cond, const void* x, const void* y, void* out, int64_t n,
                  const Broadcast3& bc, int max_grid, cudaStream_t s) {
  if (n <= 0) return;
  with_elem(e, [&](auto as) {
    using T = typename decltype(as)::type;
    where<T><<<grid_for(n, max_grid), kBlock, 0, s>>>(
        cond, static_cast<const T*>(x), static_cast<const T*>(y), static_cast<T*>(out), n, bc);
  });
}

void launch_unary(UnaryOp op, Elem e, const void* x, void* y, int64_t n, float alpha, float beta,
                  int max_grid, cudaStream_t s) {
  if (n <= 0) return;
  const unsigned g = grid_for(n, max_grid);
  switch (op) {
#define PI_CUDA_UNARY_CASE(OP) \
  case UnaryOp::OP: return unary_as<UnaryOp::OP>(e, x, y, n, alpha, beta, g, s);
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
