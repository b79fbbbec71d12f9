// What every CUDA kernel class checks: float32 inputs known at creation (a refusal at creation
// lets the node fall back to the next provider with the reason; one at run time could not), and
// errors from its launches.
#pragma once

#include <string>

#include "providers/cuda/plugin/context.h"
#include "runtime/kernel.h"

namespace polyinfer::cuda {

// Refuses (UnsupportedOp, so the partitioner tries the next provider) a node whose tensor inputs
// (the first `count`, all when -1) are not known to be float32, or whose rank is known and above
// `max_rank` (-1: any).
inline void require_float32(const KernelInfo& info, int count = -1, int max_rank = -1) {
  const size_t n = count < 0 ? info.num_inputs() : static_cast<size_t>(count);
  for (size_t i = 0; i < n && i < info.num_inputs(); ++i) {
    if (!info.has_input(i)) continue;
    DType dtype = DType::Undefined;
    int rank = -1;
    if (const Tensor* c = info.constant_input(i)) {
      dtype = c->dtype();
      rank = c->rank();
    } else if (const ir::TypeInfo* t = info.input_type(i);
               t && t->kind == ir::TypeInfo::Kind::Tensor) {
      dtype = t->elem;
      if (t->has_shape) rank = static_cast<int>(t->dims.size());
    }
    if (dtype == DType::Undefined)
      info.unsupported("input " + std::to_string(i) +
                       " of unknown dtype (the CUDA kernels are float32 only)");
    if (dtype != DType::Float32)
      info.unsupported(std::string("dtype ") + dtype_name(dtype) +
                       " (the CUDA kernels are float32 only)");
    if (max_rank >= 0 && rank > max_rank)
      info.unsupported("rank " + std::to_string(rank) + " (this CUDA kernel takes rank <= " +
                       std::to_string(max_rank) + ")");
  }
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
