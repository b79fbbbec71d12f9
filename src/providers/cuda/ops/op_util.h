// What every CUDA kernel class checks: the dtypes of its inputs known at creation (a refusal at
// creation lets the node fall back to the next provider with the reason; one at run time could
// not), and errors from its launches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ops/activation.h"
#include "providers/cuda/ops/elem.h"
#include "providers/cuda/ops/elementwise_kernels.h"
#include "providers/cuda/plugin/context.h"
#include "runtime/host_constants.h"
#include "runtime/kernel.h"
#include "runtime/kernel_checks.h"

namespace polyinfer::cuda {

// Refuses (UnsupportedOp, so the partitioner tries the next provider) a node whose tensor inputs
// (the first `count`, all when -1) are not known to be float32, or whose rank is known and above
// `max_rank` (-1: any). For the kernels that stay float32 (the reductions and normalizations a
// reduced-precision session keeps in float32).
inline void require_float32(const KernelInfo& info, int count = -1, int max_rank = -1) {
  require_input_dtype(info, DType::Float32, "CUDA " + info.node().op_type, max_rank,
                      count < 0 ? static_cast<size_t>(-1) : static_cast<size_t>(count));
}

inline bool cuda_float(DType d) {
  return d == DType::Float32 || d == DType::Float16 || d == DType::BFloat16;
}

inline Elem elem_of(DType d) {
  return d == DType::Float16 ? Elem::F16 : d == DType::BFloat16 ? Elem::BF16 : Elem::F32;
}

// require_float32 for the kernels with float16 and bfloat16 variants (elem.h): the checked
// inputs are all float32, all float16 or all bfloat16. Returns that dtype; the kernel runs for it
// and checks it again at run time (check_dtype). `library` marks kernels that hand bfloat16 to
// cuBLAS or cuDNN, which take it from compute capability 8.0 (Ampere) on.
inline DType require_float(const KernelInfo& info, int count = -1, int max_rank = -1,
                           bool library = false) {
  const DType dtype = require_one_input_dtype(
      info, {DType::Float32, DType::Float16, DType::BFloat16}, "CUDA " + info.node().op_type,
      max_rank, count < 0 ? static_cast<size_t>(-1) : static_cast<size_t>(count));
  const int cc = Context::get().compute_capability();
  if (library && dtype == DType::BFloat16 && cc < 80)
    info.unsupported("bfloat16 on a GPU of compute capability " + std::to_string(cc / 10) + "." +
                     std::to_string(cc % 10) + " (cuBLAS and cuDNN take bfloat16 from 8.0 on)");
  return dtype;
}

// require_float for the kernels that only move or compare elements (data movement, views,
// MaxPool): also uint8 and int8, the quantized values an int8 model carries between its
// quantized products (qlinear.cpp). Other integer tensors are shape arithmetic: they stay on the
// CPU.
inline DType require_float_or_q8(const KernelInfo& info, int count = -1, int max_rank = -1) {
  return require_one_input_dtype(
      info, {DType::Float32, DType::Float16, DType::BFloat16, DType::UInt8, DType::Int8},
      "CUDA " + info.node().op_type, max_rank,
      count < 0 ? static_cast<size_t>(-1) : static_cast<size_t>(count));
}

// Whether this node's float32 products may use TF32 Tensor Core math: the session allows it
// (SessionOptions::allow_tf32) and the GPU has it (compute capability 8.0 on). Never for the
// 16-bit types, which take Tensor Cores anyway.
inline bool tf32_for(const KernelInfo& info, DType dtype) {
  return info.allow_tf32() && dtype == DType::Float32 && Context::get().compute_capability() >= 80;
}

// The run-time check of a tensor against the dtype the kernel was created for (declared types
// can be wrong).
inline void check_dtype(const KernelContext& ctx, const Tensor& t, DType expected) {
  PI_CHECK(t.dtype() == expected, UnsupportedOp, ctx.node().label(), ": dtype ",
           dtype_name(t.dtype()), " where the CUDA kernel was created for ", dtype_name(expected));
}
inline void check_float32(const KernelContext& ctx, const Tensor& t) {
  check_dtype(ctx, t, DType::Float32);
}

// After a launch: a bad configuration shows here, a fault in the kernel at the next sync.
inline void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  PI_CHECK(e == cudaSuccess, Internal, cuda_error_text(what, e));
}

// A fused operator's activation as the element-wise kernel that applies it in place; false for
// none.
inline bool unary_of(const FusedActivation& a, UnaryOp* op) {
  using K = ActKind;
  switch (a.kind) {
    case K::None: return false;
    case K::Relu: *op = UnaryOp::Relu; return true;
    case K::LeakyRelu: *op = UnaryOp::LeakyRelu; return true;
    case K::Clip: *op = UnaryOp::Clip; return true;
    case K::Sigmoid: *op = UnaryOp::Sigmoid; return true;
    case K::HardSigmoid: *op = UnaryOp::HardSigmoid; return true;
    case K::HardSwish: *op = UnaryOp::HardSwish; return true;
    case K::Tanh: *op = UnaryOp::Tanh; return true;
    case K::Silu: *op = UnaryOp::Silu; return true;
    case K::Gelu: *op = UnaryOp::Gelu; return true;
    case K::GeluTanh: *op = UnaryOp::GeluTanh; return true;
  }
  return false;
}

// The largest power of two, at most 256, that divides the address. cuBLASLt's heuristic assumes
// 256-byte aligned matrices unless told otherwise, and the session's arena and tensor views
// hand out pointers aligned less than that.
inline uint32_t alignment_of(const void* p, size_t element) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > element && a % al != 0) al /= 2;
  return al;
}

// Device scratch memory from the caching allocator for the length of one kernel's run: handed
// back when the kernel returns, which is safe on the one stream (whatever reuses it is queued
// after the work that reads it; context.h).
class Scratch {
 public:
  Scratch(Context& ctx, size_t bytes) : alloc_(ctx.allocator()), bytes_(bytes) {
    if (bytes_) ptr_ = alloc_->allocate(bytes_);
  }
  ~Scratch() {
    if (ptr_) alloc_->deallocate(ptr_, bytes_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  std::shared_ptr<CachingAllocator> alloc_;
  size_t bytes_;
  void* ptr_ = nullptr;
};

}  // namespace polyinfer::cuda

// Registers a CUDA kernel for the default ONNX domain.
#define PI_CUDA_KERNEL(OP, SINCE, UNTIL, K) PI_REGISTER_KERNEL("cuda", "", OP, SINCE, UNTIL, K)
