// cuBLASLt products planned once per shape and kept by the kernel (gemm.cpp, qlinear.cpp):
// creating the descriptors and asking the heuristic for an algorithm costs tens of
// microseconds of host time per call, more than a small product takes on the GPU, and the
// answer never changes for a shape. One session runs one run at a time, so a kernel's plans need
// no lock.
//
// Everything is in cuBLAS's column-major terms: D = alpha·op(A)·op(B) + beta·C with C = D.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "providers/cuda/plugin/context.h"

namespace polyinfer::cuda {

// What a plan is for; equal specs share a plan.
struct LtSpec {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;  // of alpha and beta
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  cudaDataType_t a_type = CUDA_R_32F, b_type = CUDA_R_32F, c_type = CUDA_R_32F;
  // Stored (untransposed) shapes and leading dimensions.
  uint64_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0, c_rows = 0, c_cols = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;  // a *_BIAS one takes run()'s bias
  uint32_t align[4] = {256, 256, 256, 256};  // least alignment of A, B, C, D in bytes
  // The reduction schemes split-K may use (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK); 0
  // leaves cuBLASLt's default.
  uint32_t reduction_mask = 0;

  std::string key() const;
};

class LtPlan {
 public:
  // The plan, or nullptr when cuBLASLt has no algorithm for the spec (none found, or
  // CUBLAS_STATUS_NOT_SUPPORTED); other failures throw.
  static std::unique_ptr<LtPlan> make(Context& ctx, const LtSpec& spec);
  ~LtPlan();
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;

  // Queues the product on the context's stream; `bias` for a *_BIAS epilogue (else ignored).
  void run(Context& ctx, const void* alpha, const void* a, const void* b, const void* beta, void* c,
           const void* bias = nullptr) const;

 private:
  LtPlan() = default;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool bias_ = false;
};

// A kernel's plans by spec, "no algorithm" remembered too.
class LtPlans {
 public:
  // nullptr when cuBLASLt has no algorithm for the spec.
  const LtPlan* get(Context& ctx, const LtSpec& spec);

 private:
  std::map<std::string, std::unique_ptr<LtPlan>> plans_;
};

}  // namespace polyinfer::cuda
