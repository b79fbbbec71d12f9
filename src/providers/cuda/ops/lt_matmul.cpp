// lt_matmul.h: cuBLASLt descriptors and the heuristic's algorithm, once per shape.
#include "providers/cuda/ops/lt_matmul.h"

namespace polyinfer::cuda {

std::string LtSpec::key() const {
  std::string k;
  auto add = [&k](auto v) { k += std::to_string(static_cast<long long>(v)) + ","; };
  add(compute), add(scale), add(trans_a), add(trans_b), add(a_type), add(b_type), add(c_type);
  add(a_rows), add(a_cols), add(b_rows), add(b_cols), add(c_rows), add(c_cols);
  add(lda), add(ldb), add(ldc), add(epilogue), add(reduction_mask);
  for (uint32_t a : align) add(a);
  return k;
}

LtPlan::~LtPlan() {
  if (lc_) cublasLtMatrixLayoutDestroy(lc_);
  if (lb_) cublasLtMatrixLayoutDestroy(lb_);
  if (la_) cublasLtMatrixLayoutDestroy(la_);
  if (op_) cublasLtMatmulDescDestroy(op_);
}

std::unique_ptr<LtPlan> LtPlan::make(Context& ctx, const LtSpec& s) {
  // The plan owns its descriptors from the start, so whatever fails destroys them.
  std::unique_ptr<LtPlan> p(new LtPlan());
  PI_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->op_, s.compute, s.scale));
  PI_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->op_, CUBLASLT_MATMUL_DESC_TRANSA, &s.trans_a,
                                                 sizeof s.trans_a));
  PI_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->op_, CUBLASLT_MATMUL_DESC_TRANSB, &s.trans_b,
                                                 sizeof s.trans_b));
  PI_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &s.epilogue,
                                                 sizeof s.epilogue));
  p->bias_ = s.epilogue == CUBLASLT_EPILOGUE_BIAS || s.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
             s.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
  PI_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->la_, s.a_type, s.a_rows, s.a_cols, s.lda));
  PI_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->lb_, s.b_type, s.b_rows, s.b_cols, s.ldb));
  PI_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->lc_, s.c_type, s.c_rows, s.c_cols, s.ldc));

  struct Pref {
    cublasLtMatmulPreference_t p = nullptr;
    ~Pref() {
      if (p) cublasLtMatmulPreferenceDestroy(p);
    }
  } pref;
  PI_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref.p));
  const size_t ws = Context::kLtWorkspace;
  PI_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4; ++i)
    PI_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, align_attr[i], &s.align[i],
                                                         sizeof s.align[i]));
  if (s.reduction_mask != 0)
    PI_CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                             &s.reduction_mask, sizeof s.reduction_mask));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  // CUBLAS_STATUS_NOT_SUPPORTED: no kernel for this form on this GPU, like found == 0.
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
      ctx.cublaslt(), p->op_, p->la_, p->lb_, p->lc_, p->lc_, pref.p, 1, &result, &found);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && found == 0))
    return nullptr;
  PI_CUBLAS_CHECK(st);
  p->algo_ = result.algo;
  return p;
}

void LtPlan::run(Context& ctx, const void* alpha, const void* a, const void* b, const void* beta,
                 void* c, const void* bias) const {
  // The bias may be another tensor each run (Gemm's C can be computed): set on the host
  // descriptor each time, which cuBLASLt reads when the call is queued.
  if (bias_)
    PI_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  PI_CUBLAS_CHECK(cublasLtMatmul(ctx.cublaslt(), op_, alpha, a, la_, b, lb_, beta, c, lc_, c, lc_,
                                 &algo_, ctx.lt_workspace(), Context::kLtWorkspace, ctx.stream()));
}

const LtPlan* LtPlans::get(Context& ctx, const LtSpec& spec) {
  const std::string k = spec.key();
  auto it = plans_.find(k);
  if (it == plans_.end()) it = plans_.emplace(k, LtPlan::make(ctx, spec)).first;
  return it->second.get();
}

}  // namespace polyinfer::cuda
