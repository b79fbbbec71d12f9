// Shared plumbing of the CPU provider's oneDNN kernels (Conv, MatMul/Gemm, pooling).
//
// oneDNN (Debian's libdnnl, v2.6, GNU OpenMP threading) picks the best implementation for this
// CPU at primitive creation (brgconv / brgemm on AVX-512, with blocked weight layouts). Kernels
// create primitives once per input shape — at session creation when the shape is static — and
// reorder constant weights into the primitive's preferred layout then, never per run.
//
// oneDNN threads with the same OpenMP pool as the rest of the CPU provider: a primitive uses
// omp_get_max_threads() at creation and execution, which Session sets from its `threads`.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <string>
#include <utility>

#include "polyinfer/tensor.h"
#include "providers/cpu/ops/fused_activation.h"

namespace polyinfer::cpu::onednn {

// The process-wide CPU engine.
dnnl::engine& engine();

inline dnnl::memory::dims dims_of(const Shape& s) { return dnnl::memory::dims(s.begin(), s.end()); }

// A oneDNN memory object over a tensor's buffer (no copy). oneDNN never writes a source
// argument, so wrapping a read-only input is safe.
inline dnnl::memory wrap(const dnnl::memory::desc& md, const Tensor& t) {
  return dnnl::memory(md, engine(), const_cast<void*>(t.raw_data()));
}

// Appends `act` as eltwise post-ops; returns false when oneDNN has no matching algorithm.
bool append_activation(dnnl::post_ops& ops, const FusedActivation& act);

// "onednn:<implementation>" for Kernel::impl(), e.g. "onednn:brgconv:avx512_core".
std::string impl_name(const dnnl::primitive_desc_base& pd);

// "oneDNN 2.6.2, avx512_core_amx": the library's version and the instruction set its JIT kernels
// use on this CPU (for the provider's description in `providers` and `doctor`).
std::string describe();

// Runs `f`, turning a dnnl::error into polyinfer's Internal error naming `who`.
template <class F>
auto guarded(const std::string& who, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const dnnl::error& e) {
    fail(ErrorCode::Internal, who, ": oneDNN failed (", e.what(), ", status ",
         static_cast<int>(e.status), ")");
  }
}

}  // namespace polyinfer::cpu::onednn
