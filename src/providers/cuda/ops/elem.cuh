// Device side of elem.h: loads widen to float32, stores round to nearest even (CUDA's _rn
// conversions, the rounding of the CPU's Float16/BFloat16), and the host-side dispatch from an
// Elem to the C++ storage type a kernel template is instantiated for.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "providers/cuda/ops/elem.h"

namespace polyinfer::cuda {

__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T> __device__ __forceinline__ T narrow(float v);
template <> __device__ __forceinline__ float narrow<float>(float v) { return v; }
template <> __device__ __forceinline__ __half narrow<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 narrow<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// 8-bit integers, for the kernels that only compare and move them (MaxPool): exact in float32;
// a store saturates (a window with no tap inside the input has the maximum -inf).
__device__ __forceinline__ float widen(uint8_t v) { return v; }
__device__ __forceinline__ float widen(int8_t v) { return v; }
template <> __device__ __forceinline__ uint8_t narrow<uint8_t>(float v) {
  return static_cast<uint8_t>(v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v));
}
template <> __device__ __forceinline__ int8_t narrow<int8_t>(float v) {
  return static_cast<int8_t>(v < -128.0f ? -128.0f : (v > 127.0f ? 127.0f : v));
}

template <class T> struct As { using type = T; };

// f(As<T>{}) with T the storage type of `e`.
template <class F> void with_elem(Elem e, F&& f) {
  switch (e) {
    case Elem::F32: f(As<float>{}); return;
    case Elem::F16: f(As<__half>{}); return;
    case Elem::BF16: f(As<__nv_bfloat16>{}); return;
  }
}

}  // namespace polyinfer::cuda
