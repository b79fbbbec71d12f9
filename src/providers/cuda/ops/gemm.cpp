// Matrix products on CUDA through cuBLAS: MatMul (numpy batching), Gemm, and the optimizer's
// FusedGemm / FusedMatMul (ai.polyinfer) whose bias and activation run in cuBLASLt's epilogue (one
// kernel: no separate bias or activation pass over the output).
//
// Types: float32, float16 and bfloat16 operands, all with CUBLAS_COMPUTE_32F: float32
// accumulation, Tensor Cores for the 16-bit operands (the output rounded once), and no TF32 for
// float32 ones (TF32 differs from the CPU oracle by ~1e-3) unless the session allows it
// (SessionOptions::allow_tf32, a GPU of compute capability 8.0 on): then float32 products take
// CUBLAS_COMPUTE_32F_FAST_TF32 and the impl says "+tf32".
//
// Row-major to cuBLAS's column-major: a row-major [R, C] matrix is the column-major [C, R] one at
// the same address, so Y = op(A)·op(B) (row-major [M, N]) is computed as Y^T = op(B)^T·op(A)^T,
// i.e. cuBLAS with the operands swapped and m = N, n = M.
#include <algorithm>

#include "core/shape_util.h"
#include "ops/activation.h"
#include "providers/cuda/ops/elementwise_kernels.h"
#include "providers/cuda/ops/lt_matmul.h"
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

// One row-major product Y[M, N] = alpha * opA(A)·opB(B), A stored [M, K] (or [K, M] when
// trans_a), B stored [K, N] (or [N, K]).
struct GemmShape {
  int64_t M = 0, N = 0, K = 0;
  bool trans_a = false, trans_b = false;
  int lda() const { return static_cast<int>(trans_a ? M : K); }
  int ldb() const { return static_cast<int>(trans_b ? K : N); }
};

void check_int_dims(const KernelContext& kc, const GemmShape& g) {
  constexpr int64_t kMax = 0x7fffffff;
  PI_CHECK(g.M <= kMax && g.N <= kMax && g.K <= kMax, UnsupportedOp, kc.node().label(),
           ": dimensions beyond 2^31 (cuBLAS takes int)");
}

// The cuBLAS storage type of a tensor dtype.
cudaDataType_t blas_type(DType d) {
  return d == DType::Float16 ? CUDA_R_16F : d == DType::BFloat16 ? CUDA_R_16BF : CUDA_R_32F;
}

// The compute type: float32 accumulation, TF32 inputs only where allowed (float32 operands).
cublasComputeType_t compute_type(bool tf32) {
  return tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

// Y = alpha·op(A)·op(B) + beta·Y, every operand of dtype `t`; alpha and beta in float32 (the
// compute type's scale type).
void gemm(Context& ctx, DType t, bool tf32, const GemmShape& g, float alpha, const void* a,
          const void* b, float beta, void* y) {
  PI_CUBLAS_CHECK(cublasGemmEx(
      ctx.cublas(), g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      static_cast<int>(g.N), static_cast<int>(g.M), static_cast<int>(g.K), &alpha, b, blas_type(t),
      g.ldb(), a, blas_type(t), g.lda(), &beta, y, blas_type(t), static_cast<int>(g.N),
      compute_type(tf32), CUBLAS_GEMM_DEFAULT));
}

// cuBLASLt epilogues this file uses beyond the bias.
enum class Epi { None, Relu, GeluTanh };

// A fused op's activation: the cuBLASLt epilogue that applies it, when there is one (cuBLASLt's
// GELU is the tanh form, so it serves GeluTanh and not erf Gelu), and the element-wise kernel that
// applies it otherwise (in place on Y, after the product).
struct Activation {
  bool any = false;
  Epi epi = Epi::None;
  UnaryOp op = UnaryOp::Relu;
  float alpha = 0.0f, beta = 0.0f;
};

Activation activation_of(const FusedActivation& a) {
  using K = ActKind;
  auto kernel = [&](UnaryOp op) { return Activation{true, Epi::None, op, a.alpha, a.beta}; };
  switch (a.kind) {
    case K::None: return {};
    case K::Relu: return {true, Epi::Relu, UnaryOp::Relu, 0.0f, 0.0f};
    case K::GeluTanh: return {true, Epi::GeluTanh, UnaryOp::GeluTanh, 0.0f, 0.0f};
    case K::LeakyRelu: return kernel(UnaryOp::LeakyRelu);
    case K::Clip: return kernel(UnaryOp::Clip);
    case K::Sigmoid: return kernel(UnaryOp::Sigmoid);
    case K::HardSigmoid: return kernel(UnaryOp::HardSigmoid);
    case K::HardSwish: return kernel(UnaryOp::HardSwish);
    case K::Tanh: return kernel(UnaryOp::Tanh);
    case K::Silu: return kernel(UnaryOp::Silu);
    case K::Gelu: return kernel(UnaryOp::Gelu);
  }
  return {};
}

// Y = epilogue(alpha·op(A)·op(B) + bias) in one cuBLASLt call, planned once per shape in the
// kernel's `plans` (lt_matmul.h); bias (length N, may be null) is added per output column of the
// row-major Y (per row of cuBLAS's column-major Y^T). False when cuBLASLt has no algorithm for
// it (the caller then takes a plain GEMM and separate kernels).
bool lt_gemm(Context& ctx, LtPlans& plans, DType t, bool tf32, const GemmShape& g, float alpha,
             const void* a, const void* b, const void* bias, Epi epi, void* y) {
  LtSpec s;
  // The scale type (alpha, beta) is float32 for every operand type; the bias has Y's type.
  s.compute = compute_type(tf32);
  s.scale = CUDA_R_32F;
  // cuBLAS's first operand is our B, its second our A (see the top of the file).
  s.trans_a = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  s.trans_b = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (bias) {
    s.epilogue = epi == Epi::Relu       ? CUBLASLT_EPILOGUE_RELU_BIAS
                 : epi == Epi::GeluTanh ? CUBLASLT_EPILOGUE_GELU_BIAS
                                        : CUBLASLT_EPILOGUE_BIAS;
  } else if (epi == Epi::Relu) {
    s.epilogue = CUBLASLT_EPILOGUE_RELU;
  } else if (epi == Epi::GeluTanh) {
    s.epilogue = CUBLASLT_EPILOGUE_GELU;
  }
  // Stored (untransposed) column-major shapes: B is [N, K] (or [K, N] when trans_b), A is [K, M]
  // (or [M, K]), Y^T is [N, M].
  const uint64_t M = static_cast<uint64_t>(g.M), N = static_cast<uint64_t>(g.N),
                 K = static_cast<uint64_t>(g.K);
  s.a_type = s.b_type = s.c_type = blas_type(t);
  s.a_rows = g.trans_b ? K : N;
  s.a_cols = g.trans_b ? N : K;
  s.lda = g.ldb();
  s.b_rows = g.trans_a ? M : K;
  s.b_cols = g.trans_a ? K : M;
  s.ldb = g.lda();
  s.c_rows = N;
  s.c_cols = M;
  s.ldc = static_cast<int64_t>(N);
  // cuBLAS's A is our b, its B our a; C and D are y.
  const size_t es = dtype_size(t);
  s.align[0] = alignment_of(b, es);
  s.align[1] = alignment_of(a, es);
  s.align[2] = s.align[3] = alignment_of(y, es);
  // Split-K partial sums reduced in float32, never in the 16-bit output type: one rounding.
  s.reduction_mask = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  const LtPlan* plan = plans.get(ctx, s);
  if (!plan) return false;
  const float beta = 0.0f;
  plan->run(ctx, &alpha, b, a, &beta, y, bias);
  return true;
}

// Y (M x N, row-major) = the row vector `bias` (N) in every row.
void broadcast_rows(Context& ctx, DType t, const void* bias, int64_t M, int64_t N, void* y) {
  Broadcast bc;
  bc.rank = 2;
  bc.dims[0] = M;
  bc.dims[1] = N;
  bc.stride_a[0] = 0;
  bc.stride_a[1] = 1;
  launch_broadcast_copy(elem_of(t), bias, y, M * N, &bc, ctx.max_grid_x(), ctx.stream());
  check_launch("bias broadcast");
}

// What ran, for the placement report and profiles: "cuda:cublaslt" (the epilogue did bias and
// activation), "cuda:cublaslt+act", "cuda:gemm", "cuda:gemm+act".
std::string path_name(bool lt, bool act_kernel, bool tf32) {
  const char* p = lt ? (act_kernel ? "cuda:cublaslt+act" : "cuda:cublaslt")
                     : (act_kernel ? "cuda:gemm+act" : "cuda:gemm");
  return tf32 ? std::string(p) + "+tf32" : std::string(p);
}

void apply_activation(Context& ctx, DType t, const Activation& act, void* y, int64_t n) {
  if (!act.any) return;
  launch_unary(act.op, elem_of(t), y, y, n, act.alpha, act.beta, ctx.max_grid_x(), ctx.stream());
  check_launch("fused activation");
}

// ---- MatMul ----

class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(const KernelInfo& info)
      : ctx_(Context::get()),
        dtype_(require_float(info, 2, -1, /*library=*/true)),
        tf32_(tf32_for(info, dtype_)) {}
  std::string impl() const override { return tf32_ ? "cuda:cublas+tf32" : "cuda:cublas"; }

  void run(KernelContext& kc) override {
    const Tensor& a = kc.input(0);
    const Tensor& b = kc.input(1);
    check_dtype(kc, a, dtype_);
    check_dtype(kc, b, dtype_);
    const std::string who = kc.node().label();
    PI_CHECK(a.rank() >= 1 && b.rank() >= 1, ShapeMismatch, who,
             ": operands must not be scalars, got ", shape_str(a.shape()), " and ",
             shape_str(b.shape()));
    // Rank-1 operands are promoted as numpy does: [K] is [1, K] on the left, [K, 1] on the right.
    Shape a2 = a.shape(), b2 = b.shape();
    if (a2.size() == 1) a2.insert(a2.begin(), 1);
    if (b2.size() == 1) b2.push_back(1);
    GemmShape g;
    g.M = a2[a2.size() - 2];
    g.K = a2.back();
    g.N = b2.back();
    PI_CHECK(b2[b2.size() - 2] == g.K, ShapeMismatch, who, ": inner dimensions of ",
             shape_str(a.shape()), " and ", shape_str(b.shape()), " differ");
    const Shape ab(a2.begin(), a2.end() - 2), bb(b2.begin(), b2.end() - 2);
    const Shape batch = broadcast_shapes(ab, bb, who.c_str());
    Shape out = batch;
    if (a.rank() > 1) out.push_back(g.M);
    if (b.rank() > 1) out.push_back(g.N);
    Tensor& y = kc.output(0, dtype_, out);
    if (y.numel() == 0) return;
    auto* py = static_cast<char*>(y.raw_data());
    if (g.K == 0) {  // an empty sum (all-zero bits are 0 in every float type)
      PI_CUDA_CHECK(cudaMemsetAsync(py, 0, y.nbytes(), ctx_.stream()));
      return;
    }
    const auto* pa = static_cast<const char*>(a.raw_data());
    const auto* pb = static_cast<const char*>(b.raw_data());
    const int64_t es = static_cast<int64_t>(dtype_size(dtype_));
    const int64_t nb = shape_numel(batch), nbb = shape_numel(bb);
    if (nbb == 1) {
      // B is one matrix: A's batch folds into its rows (A is contiguous), one GEMM.
      GemmShape f = g;
      f.M = g.M * nb;
      check_int_dims(kc, f);
      gemm(ctx_, dtype_, tf32_, f, 1.0f, pa, pb, 0.0f, py);
      return;
    }
    check_int_dims(kc, g);
    const std::vector<int64_t> sa = broadcast_strides(ab, batch), sb = broadcast_strides(bb, batch);
    // Each side either walks the whole batch in order (its strides are the batch's own) or is one
    // matrix for all (strides 0): then one strided-batched call, stride 0 for a shared side.
    std::vector<int64_t> dense(batch.size(), 1);
    for (size_t d = batch.size(); d-- > 1;) dense[d - 1] = dense[d] * batch[d];
    const std::vector<int64_t> zeros(batch.size(), 0);
    auto uniform = [&](const std::vector<int64_t>& st) { return st == dense || st == zeros; };
    if (uniform(sa) && uniform(sb) && nb <= 0x7fffffff) {
      const float one = 1.0f, zero = 0.0f;
      const cudaDataType_t dt = blas_type(dtype_);
      PI_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
          ctx_.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(g.N), static_cast<int>(g.M),
          static_cast<int>(g.K), &one, pb, dt, static_cast<int>(g.N), sb == zeros ? 0 : g.K * g.N,
          pa, dt, static_cast<int>(g.K), sa == zeros ? 0 : g.M * g.K, &zero, py, dt,
          static_cast<int>(g.N), g.M * g.N, static_cast<int>(nb), compute_type(tf32_),
          CUBLAS_GEMM_DEFAULT));
      return;
    }
    // General broadcasting ([2, 1] x [1, 3] batches): one GEMM per output matrix, at the
    // offsets numpy's rules give.
    std::vector<int64_t> idx(batch.size(), 0);
    for (int64_t i = 0; i < nb; ++i) {
      int64_t oa = 0, ob = 0;
      for (size_t d = 0; d < batch.size(); ++d) {
        oa += idx[d] * sa[d];
        ob += idx[d] * sb[d];
      }
      gemm(ctx_, dtype_, tf32_, g, 1.0f, pa + oa * g.M * g.K * es, pb + ob * g.K * g.N * es, 0.0f,
           py + i * g.M * g.N * es);
      for (size_t d = batch.size(); d-- > 0;) {
        if (++idx[d] < batch[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  Context& ctx_;
  DType dtype_;
  bool tf32_;
};

// ---- Gemm and FusedGemm ----

// A bias of exactly N elements laid out along the output's columns: [N] or [1, N].
bool is_row_bias(const Shape& c, int64_t N) {
  return (c.size() == 1 && c[0] == N) || (c.size() == 2 && c[0] == 1 && c[1] == N);
}

class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(const KernelInfo& info, bool fused = false)
      : ctx_(Context::get()),
        alpha_(info.attr_float("alpha", 1.0f)),
        beta_(info.attr_float("beta", 1.0f)),
        trans_a_(info.attr_int("transA", 0) != 0),
        trans_b_(info.attr_int("transB", 0) != 0) {
    dtype_ = require_float(info, 3, 2, /*library=*/true);
    tf32_ = tf32_for(info, dtype_);
    if (fused) act_ = activation_of(FusedActivation::from(info));
  }
  // The path the last run took (path_name); "cuda:cublas" before the first.
  std::string impl() const override { return path_; }

  void run(KernelContext& kc) override {
    const Tensor& a = kc.input(0);
    const Tensor& b = kc.input(1);
    check_dtype(kc, a, dtype_);
    check_dtype(kc, b, dtype_);
    const std::string who = kc.node().label();
    PI_CHECK(a.rank() == 2 && b.rank() == 2, ShapeMismatch, who, ": A and B must be 2-D, got ",
             shape_str(a.shape()), " and ", shape_str(b.shape()));
    GemmShape g;
    g.trans_a = trans_a_;
    g.trans_b = trans_b_;
    g.M = trans_a_ ? a.shape()[1] : a.shape()[0];
    g.K = trans_a_ ? a.shape()[0] : a.shape()[1];
    g.N = trans_b_ ? b.shape()[0] : b.shape()[1];
    const int64_t kb = trans_b_ ? b.shape()[1] : b.shape()[0];
    PI_CHECK(kb == g.K, ShapeMismatch, who, ": inner dimensions differ (", shape_str(a.shape()),
             trans_a_ ? "^T" : "", " by ", shape_str(b.shape()), trans_b_ ? "^T" : "", ")");
    check_int_dims(kc, g);
    Tensor& y = kc.output(0, dtype_, {g.M, g.N});
    if (y.numel() == 0) return;
    void* py = y.raw_data();
    const void* pa = a.raw_data();
    const void* pb = b.raw_data();
    const Tensor* c = kc.has_input(2) && beta_ != 0.0f ? &kc.input(2) : nullptr;
    if (c) check_dtype(kc, *c, dtype_);
    // A row bias with beta = 1 can go in cuBLASLt's epilogue, and the activation with it.
    const void* bias = c && beta_ == 1.0f && is_row_bias(c->shape(), g.N) ? c->raw_data() : nullptr;
    bool product_done = false, act_done = false;
    if (g.K > 0 && (c == nullptr || bias != nullptr)) {
      if (act_.epi != Epi::None &&
          lt_gemm(ctx_, lt_, dtype_, tf32_, g, alpha_, pa, pb, bias, act_.epi, py))
        product_done = act_done = true;
      else if (bias && lt_gemm(ctx_, lt_, dtype_, tf32_, g, alpha_, pa, pb, bias, Epi::None, py))
        product_done = true;
    }
    if (!product_done) {
      // Y = beta·C broadcast (or 0), then the GEMM accumulates alpha·A·B onto it.
      if (c) broadcast_c_into(kc, *c, g, py);
      if (g.K > 0) {
        gemm(ctx_, dtype_, tf32_, g, alpha_, pa, pb, c ? beta_ : 0.0f, py);
      } else if (!c) {
        PI_CUDA_CHECK(cudaMemsetAsync(py, 0, y.nbytes(), ctx_.stream()));  // an empty sum
      } else if (beta_ != 1.0f) {
        PI_CUBLAS_CHECK(cublasScalEx(ctx_.cublas(), static_cast<int>(g.M * g.N), &beta_, CUDA_R_32F,
                                     py, blas_type(dtype_), 1, CUDA_R_32F));
      }
    }
    if (!act_done) apply_activation(ctx_, dtype_, act_, py, y.numel());
    check_launch(who.c_str());
    path_ = path_name(product_done, act_.any && !act_done, tf32_);
  }

 private:
  // Y (M x N) = C broadcast (unidirectionally, as Gemm allows).
  void broadcast_c_into(const KernelContext& kc, const Tensor& c, const GemmShape& g, void* y) {
    const Shape out{g.M, g.N};
    const Shape bs = broadcast_shapes(c.shape(), out, kc.node().label().c_str());
    PI_CHECK(bs == out, ShapeMismatch, kc.node().label(), ": C ", shape_str(c.shape()),
             " does not broadcast to ", shape_str(out));
    const void* pc = c.raw_data();
    if (c.shape() == out) {
      PI_CUDA_CHECK(cudaMemcpyAsync(y, pc, c.nbytes(), cudaMemcpyDeviceToDevice, ctx_.stream()));
      return;
    }
    Broadcast bc;
    bc.rank = 2;
    const std::vector<int64_t> sc = broadcast_strides(c.shape(), out);
    bc.dims[0] = g.M;
    bc.dims[1] = g.N;
    bc.stride_a[0] = sc[0];
    bc.stride_a[1] = sc[1];
    launch_broadcast_copy(elem_of(dtype_), pc, y, g.M * g.N, &bc, ctx_.max_grid_x(), ctx_.stream());
    check_launch("Gemm C broadcast");
  }

  Context& ctx_;
  DType dtype_ = DType::Float32;
  bool tf32_ = false;
  LtPlans lt_;
  float alpha_, beta_;
  bool trans_a_, trans_b_;
  Activation act_;
  std::string path_ = "cuda:cublas";
};

class FusedGemmKernel final : public Kernel {
 public:
  explicit FusedGemmKernel(const KernelInfo& info) : gemm_(info, /*fused=*/true) {}
  std::string impl() const override { return gemm_.impl(); }
  void run(KernelContext& kc) override { gemm_.run(kc); }

 private:
  GemmKernel gemm_;
};

// ---- FusedMatMul: act(MatMul(A, B) + bias), B one matrix, bias [N] ----

class FusedMatMulKernel final : public Kernel {
 public:
  explicit FusedMatMulKernel(const KernelInfo& info) : ctx_(Context::get()) {
    dtype_ = require_float(info, 3, -1, /*library=*/true);
    tf32_ = tf32_for(info, dtype_);
    act_ = activation_of(FusedActivation::from(info));
    // A's batch folds into its rows (one product): B must be a single matrix, known at creation.
    const Tensor* b = info.constant_input(1);
    const ir::TypeInfo* bt = info.input_type(1);
    const int b_rank =
        b ? b->rank() : (bt && bt->has_shape ? static_cast<int>(bt->dims.size()) : -1);
    if (b_rank != 2) info.unsupported("B of rank other than 2 (or unknown at load)");
  }
  std::string impl() const override { return path_; }

  void run(KernelContext& kc) override {
    const Tensor& a = kc.input(0);
    const Tensor& b = kc.input(1);
    check_dtype(kc, a, dtype_);
    check_dtype(kc, b, dtype_);
    const std::string who = kc.node().label();
    PI_CHECK(a.rank() >= 2 && b.rank() == 2, UnsupportedOp, who, ": A of rank ", a.rank(),
             " and B of rank ", b.rank(), " (the CUDA kernel takes A rank >= 2, B rank 2)");
    GemmShape g;
    g.K = a.shape().back();
    g.N = b.shape()[1];
    g.M = shape_numel(Shape(a.shape().begin(), a.shape().end() - 1));
    PI_CHECK(b.shape()[0] == g.K, ShapeMismatch, who, ": inner dimensions of ",
             shape_str(a.shape()), " and ", shape_str(b.shape()), " differ");
    check_int_dims(kc, g);
    Shape out = a.shape();
    out.back() = g.N;
    Tensor& y = kc.output(0, dtype_, out);
    if (y.numel() == 0) return;
    void* py = y.raw_data();
    const void* bias = nullptr;
    if (kc.has_input(2)) {
      const Tensor& e = kc.input(2);
      check_dtype(kc, e, dtype_);
      PI_CHECK(e.rank() == 1 && e.numel() == g.N, ShapeMismatch, who, ": bias ", e.describe(),
               " is not [", g.N, "]");
      bias = e.raw_data();
    }
    const void* pa = a.raw_data();
    const void* pb = b.raw_data();
    bool product_done = false, act_done = false;
    if (g.K > 0) {
      if (act_.epi != Epi::None &&
          lt_gemm(ctx_, lt_, dtype_, tf32_, g, 1.0f, pa, pb, bias, act_.epi, py))
        product_done = act_done = true;
      else if (bias && lt_gemm(ctx_, lt_, dtype_, tf32_, g, 1.0f, pa, pb, bias, Epi::None, py))
        product_done = true;
    }
    if (!product_done) {
      // Y = bias in every row (or 0), then the GEMM accumulates A·B onto it.
      if (bias) broadcast_rows(ctx_, dtype_, bias, g.M, g.N, py);
      else if (g.K == 0)
        PI_CUDA_CHECK(cudaMemsetAsync(py, 0, y.nbytes(), ctx_.stream()));
      if (g.K > 0) gemm(ctx_, dtype_, tf32_, g, 1.0f, pa, pb, bias ? 1.0f : 0.0f, py);
    }
    if (!act_done) apply_activation(ctx_, dtype_, act_, py, y.numel());
    check_launch(who.c_str());
    path_ = path_name(product_done, act_.any && !act_done, tf32_);
  }

 private:
  Context& ctx_;
  DType dtype_;
  bool tf32_ = false;
  LtPlans lt_;
  Activation act_;
  std::string path_ = "cuda:cublas";
};

// MatMul since 1 (numpy semantics throughout); Gemm from 7 (no legacy `broadcast` attribute).
PI_CUDA_KERNEL(MatMul, 1, 28, MatMulKernel);
PI_CUDA_KERNEL(Gemm, 7, 28, GemmKernel);
PI_REGISTER_KERNEL("cuda", "ai.polyinfer", FusedGemm, 1, 1, FusedGemmKernel);
PI_REGISTER_KERNEL("cuda", "ai.polyinfer", FusedMatMul, 1, 1, FusedMatMulKernel);

}  // namespace
}  // namespace polyinfer::cuda
