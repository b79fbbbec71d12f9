// What every CUDA kernel class checks: float32 inputs known at creation (a refusal at creation
// lets the node fall back to the next provider with the reason; one at run time could not), and
// errors from its launches.
#pragma once

#include <string>

#include "providers/cuda/plugin/context.h"
#include "runtime/kernel.h"
#include "runtime/kernel_checks.h"

namespace polyinfer::cuda {

// Refuses (UnsupportedOp, so the partitioner tries the next provider) a node whose tensor inputs
// (the first `count`, all when -1) are not known to be float32, or whose rank is known and above
// `max_rank` (-1: any).
inline void require_float32(const KernelInfo& info, int count = -1, int max_rank = -1) {
  require_input_dtype(info, DType::Float32, "CUDA", max_rank,
                      count < 0 ? static_cast<size_t>(-1) : static_cast<size_t>(count));
}

// The same dtype check at run time (declared types can be wrong).
inline void check_float32(const KernelContext& ctx, const Tensor& t) {
  PI_CHECK(t.dtype() == DType::Float32, UnsupportedOp, ctx.node().label(), ": dtype ",
           dtype_name(t.dtype()), " (the CUDA kernels are float32 only)");
}

// After a launch: a bad configuration shows here, a fault in the kernel at the next sync.
inline void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  PI_CHECK(e == cudaSuccess, Internal, cuda_error_text(what, e));
}

}  // namespace polyinfer::cuda

// Registers a CUDA kernel for the default ONNX domain.
#define PI_CUDA_KERNEL(OP, SINCE, UNTIL, K) PI_REGISTER_KERNEL("cuda", "", OP, SINCE, UNTIL, K)
