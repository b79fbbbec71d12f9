// Float32 and float16 matrix products on OpenCL, one tiled kernel (kernels/gemm.cl, a port of
// the Vulkan gemm.comp) for all of them:
//   MatMul       numpy semantics: batch dimensions broadcast, 1-D operands promoted and the
//                added dimension dropped from the result
//   Gemm         2-D A and B with transA/transB (as strides), alpha, beta * C (C broadcast)
//   FusedGemm    ai.polyinfer: act(Gemm(A, B, C))
//   FusedMatMul  ai.polyinfer: act(MatMul(A, B) + bias), bias 1-D over the last dimension
// Refused at creation (so the node falls back with the reason): other dtypes, MatMul batches
// that do not merge into the 3 dimensions the kernel walks (known shapes; rank 6 with unknown
// dimensions is refused outright), Gemm operands of known rank other than 2 / C of rank above 2,
// and devices whose work-groups cannot hold the kernel's 8x8 work-items.
#include "core/shape_util.h"
#include "ops/activation.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

constexpr int64_t kTile = 64;     // output tile of one work-group (gemm.cl's GEMM_TILE)
constexpr int kMaxBatchDims = 3;  // gemm.cl's bdims
constexpr size_t kLocal = 8;      // work-items per dimension of a work-group (gemm.cl)

struct GemmParams {
  uint32_t M, N, K;
  uint32_t off_a, off_b, off_c, off_y;
  uint32_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
  uint32_t has_c;
  float alpha, beta;
  uint32_t act;
  float act_alpha, act_beta;
  uint32_t nbatch;
  uint32_t bdims[kMaxBatchDims], a_bs[kMaxBatchDims], b_bs[kMaxBatchDims];
};
static_assert(sizeof(GemmParams) == 116, "matches gemm.cl's GemmParams");

// gemm.cl's activation codes are ActKind's values (activation.cl).
static_assert(static_cast<int>(ActKind::Relu) == 1 && static_cast<int>(ActKind::Clip) == 3 &&
                  static_cast<int>(ActKind::GeluTanh) == 10,
              "activation.cl numbers the activations as ActKind does");

// The batch walk of a numpy matmul: the broadcast batch dimensions with A's and B's strides in
// elements (0 where an operand is broadcast), size-1 dimensions dropped and neighbours that are
// contiguous in both operands merged, so most rank-6 products still fit gemm.cl's 3.
struct BatchWalk {
  Shape batch;  // the broadcast batch dimensions, as in the output
  std::vector<int64_t> dims, a_stride, b_stride;
};

BatchWalk batch_walk(const Shape& as, const Shape& bs, const std::string& who) {
  Shape a2 = as, b2 = bs;
  if (a2.size() == 1) a2.insert(a2.begin(), 1);
  if (b2.size() == 1) b2.push_back(1);
  const int64_t M = a2[a2.size() - 2], K = a2.back(), N = b2.back();
  const Shape ab(a2.begin(), a2.end() - 2), bb(b2.begin(), b2.end() - 2);
  const std::string ctx = who + " (batch dimensions)";
  BatchWalk w;
  w.batch = broadcast_shapes(ab, bb, ctx.c_str());
  const std::vector<int64_t> sa = broadcast_strides(ab, w.batch),
                             sb = broadcast_strides(bb, w.batch);
  for (size_t d = 0; d < w.batch.size(); ++d) {
    const int64_t n = w.batch[d];
    if (n == 1) continue;
    const int64_t xa = sa[d] * M * K, xb = sb[d] * K * N;
    if (!w.dims.empty() && w.a_stride.back() == xa * n && w.b_stride.back() == xb * n) {
      w.dims.back() *= n;
      w.a_stride.back() = xa;
      w.b_stride.back() = xb;
    } else {
      w.dims.push_back(n);
      w.a_stride.push_back(xa);
      w.b_stride.push_back(xb);
    }
  }
  return w;
}

// What differs between the four operators; the rest is one kernel.
enum class Form { MatMul, Gemm };

class GemmKernel : public Kernel {
 public:
  GemmKernel(const KernelInfo& info, Form form, bool fused) : form_(form) {
    dtype_ = require_float(info);
    if (form == Form::MatMul) {
      // Past rank 5 whether the batch fits 3 dimensions depends on the shapes: refused unless
      // they are known here and merge (a refusal at run time could not fall back).
      Shape as, bs;
      const int rank = std::max(known_rank(info, 0), known_rank(info, 1));
      if (known_shape(info, 0, &as) && known_shape(info, 1, &bs) && !as.empty() && !bs.empty()) {
        BatchWalk w;
        try {
          w = batch_walk(as, bs, info.node().label());
        } catch (const Error&) {
          // Shapes that do not broadcast: the run reports it, as the CPU kernel would.
        }
        if (w.dims.size() > kMaxBatchDims)
          info.unsupported("MatMul batch " + shape_str(w.batch) +
                           " (the OpenCL kernel walks at most 3 batch dimensions)");
      } else if (rank > 2 + kMaxBatchDims) {
        info.unsupported("MatMul operand of rank " + std::to_string(rank) +
                         " with unknown dimensions (the OpenCL kernel walks at most 3 batch "
                         "dimensions)");
      }
    } else {
      alpha_ = info.attr_float("alpha", 1.0f);
      beta_ = info.attr_float("beta", 1.0f);
      trans_a_ = info.attr_int("transA", 0) != 0;
      trans_b_ = info.attr_int("transB", 0) != 0;
      for (size_t i = 0; i < 2; ++i) {
        const int r = known_rank(info, i);
        if (r >= 0 && r != 2)
          info.unsupported("Gemm operand of rank " + std::to_string(r) + " (A and B are matrices)");
      }
      if (known_rank(info, 2) > 2)
        info.unsupported("Gemm C of rank " + std::to_string(known_rank(info, 2)));
    }
    if (fused) act_ = FusedActivation::from(info);
    ctx_ = Context::get();
    if (ctx_->max_work_group() < kLocal * kLocal)
      info.unsupported("a device whose work-groups hold " + std::to_string(ctx_->max_work_group()) +
                       " work-items (the OpenCL gemm kernel needs 64)");
    kernel_ = ctx_->kernel("gemm", "gemm", float_options(dtype_));
  }
  std::string impl() const override { return "opencl:gemm"; }

  void run(KernelContext& kc) override {
    const Tensor& a = kc.input(0);
    const Tensor& b = kc.input(1);
    check_input(kc, a, kMaxRank, dtype_);
    check_input(kc, b, kMaxRank, dtype_);
    const Tensor* c = kc.has_input(2) ? &kc.input(2) : nullptr;
    if (c) check_input(kc, *c, kMaxRank, dtype_);
    GemmParams p{};
    p.alpha = 1.0f;
    p.beta = 1.0f;
    p.act = static_cast<uint32_t>(act_.kind);
    p.act_alpha = act_.alpha;
    p.act_beta = act_.beta;
    Shape out;
    if (form_ == Form::MatMul) out = plan_matmul(kc, a.shape(), b.shape(), c, p);
    else
      out = plan_gemm(kc, a, b, c, p);
    Tensor& y = kc.output(0, dtype_, out);
    check_input(kc, y, kMaxRank, dtype_);
    if (y.numel() == 0) return;
    const int64_t tiles_m = (p.M + kTile - 1) / kTile, tiles_n = (p.N + kTile - 1) / kTile;
    const auto max_groups = static_cast<int64_t>(ctx_->max_groups());
    PI_CHECK(tiles_m <= max_groups && tiles_n <= max_groups, UnsupportedOp, kc.node().label(),
             ": a ", p.M, "x", p.N, " product needs more than ", ctx_->max_groups(),
             " tiles of 64 in one dimension");
    const BufferRef ry = ctx_->find(y.raw_data());
    // With K = 0 the operands are empty and have no device memory; the kernel reads none of them.
    const BufferRef ra = a.numel() ? ctx_->find(a.raw_data()) : ry;
    const BufferRef rb = b.numel() ? ctx_->find(b.raw_data()) : ry;
    // Without C the kernel never reads its third buffer; any valid buffer will do.
    const BufferRef rc = c ? ctx_->find(c->raw_data()) : ra;
    p.off_a = element_offset(ra, dtype_);
    p.off_b = element_offset(rb, dtype_);
    p.off_c = element_offset(rc, dtype_);
    p.off_y = element_offset(ry, dtype_);
    const size_t groups[3] = {static_cast<size_t>(tiles_n), static_cast<size_t>(tiles_m), p.nbatch};
    const size_t local[3] = {kLocal, kLocal, 1};
    ctx_->dispatch(kernel_, {ra.buffer, rb.buffer, rc.buffer, ry.buffer}, &p, sizeof p, groups,
                   local);
  }

 private:
  // MatMul's (and FusedMatMul's) shapes, strides and batch walk; returns the output shape.
  Shape plan_matmul(const KernelContext& kc, const Shape& as, const Shape& bs, const Tensor* bias,
                    GemmParams& p) const {
    const std::string who = kc.node().label();
    PI_CHECK(!as.empty() && !bs.empty(), ShapeMismatch, who, ": operands must not be scalars, got ",
             shape_str(as), " and ", shape_str(bs));
    Shape a2 = as, b2 = bs;
    if (a2.size() == 1) a2.insert(a2.begin(), 1);
    if (b2.size() == 1) b2.push_back(1);
    const int64_t M = a2[a2.size() - 2], K = a2.back(), N = b2.back();
    PI_CHECK(b2[b2.size() - 2] == K, ShapeMismatch, who, ": inner dimensions of ", shape_str(as),
             " and ", shape_str(bs), " differ");
    const BatchWalk w = batch_walk(as, bs, who);
    const Shape& batch = w.batch;
    Shape out = batch;
    if (as.size() > 1) out.push_back(M);
    if (bs.size() > 1) out.push_back(N);
    PI_CHECK(w.dims.size() <= kMaxBatchDims, UnsupportedOp, who, ": batch ", shape_str(batch),
             " of ", shape_str(as), " x ", shape_str(bs),
             " needs more than 3 batch dimensions on OpenCL");
    std::vector<int64_t> dims = w.dims, ga = w.a_stride, gb = w.b_stride;
    while (dims.size() < kMaxBatchDims) {
      dims.insert(dims.begin(), 1);
      ga.insert(ga.begin(), 0);
      gb.insert(gb.begin(), 0);
    }
    for (int d = 0; d < kMaxBatchDims; ++d) {
      p.bdims[d] = u32(dims[d]);
      p.a_bs[d] = u32(ga[d]);
      p.b_bs[d] = u32(gb[d]);
    }
    p.nbatch = u32(shape_numel(batch));
    p.M = u32(M);
    p.N = u32(N);
    p.K = u32(K);
    p.a_rs = u32(K);
    p.a_cs = 1;
    p.b_rs = u32(N);
    p.b_cs = 1;
    if (bias) {
      const int64_t last = out.empty() ? 1 : out.back();
      PI_CHECK(bias->rank() == 1 && bias->numel() == last, ShapeMismatch, who, ": bias ",
               bias->describe(), " must be 1-D of the output's last dimension ", last);
      // The output's last dimension is N, or M when B is 1-D (then N is 1).
      p.has_c = 1;
      p.c_rs = bs.size() == 1 ? 1 : 0;
      p.c_cs = bs.size() == 1 ? 0 : 1;
    }
    return out;
  }

  Shape plan_gemm(const KernelContext& kc, const Tensor& a, const Tensor& b, const Tensor* c,
                  GemmParams& p) const {
    const std::string who = kc.node().label();
    PI_CHECK(a.rank() == 2 && b.rank() == 2, ShapeMismatch, who, ": A and B must be matrices, got ",
             a.describe(), " and ", b.describe());
    const int64_t M = trans_a_ ? a.dim(1) : a.dim(0), K = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t N = trans_b_ ? b.dim(0) : b.dim(1);
    PI_CHECK((trans_b_ ? b.dim(1) : b.dim(0)) == K, ShapeMismatch, who, ": inner dimensions of ",
             a.describe(), " and ", b.describe(), " differ");
    const Shape ys{M, N};
    p.M = u32(M);
    p.N = u32(N);
    p.K = u32(K);
    // A is [M, K] or, transposed, [K, M]; B is [K, N] or [N, K].
    p.a_rs = u32(trans_a_ ? 1 : K);
    p.a_cs = u32(trans_a_ ? M : 1);
    p.b_rs = u32(trans_b_ ? 1 : N);
    p.b_cs = u32(trans_b_ ? K : 1);
    p.alpha = alpha_;
    p.beta = beta_;
    p.nbatch = 1;
    p.bdims[0] = p.bdims[1] = p.bdims[2] = 1;
    if (c) {
      PI_CHECK(c->rank() <= 2 && broadcast_shapes(c->shape(), ys, who.c_str()) == ys, ShapeMismatch,
               who, ": C ", c->describe(), " does not broadcast to ", shape_str(ys));
      const std::vector<int64_t> cs = broadcast_strides(c->shape(), ys);
      p.has_c = 1;
      p.c_rs = u32(cs[0]);
      p.c_cs = u32(cs[1]);
    }
    return ys;
  }

  Form form_;
  float alpha_ = 1.0f, beta_ = 1.0f;
  bool trans_a_ = false, trans_b_ = false;
  FusedActivation act_;
  DType dtype_ = DType::Float32;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

struct MatMulKernel final : GemmKernel {
  explicit MatMulKernel(const KernelInfo& info) : GemmKernel(info, Form::MatMul, false) {}
};
struct PlainGemmKernel final : GemmKernel {
  explicit PlainGemmKernel(const KernelInfo& info) : GemmKernel(info, Form::Gemm, false) {}
};
struct FusedGemmKernel final : GemmKernel {
  explicit FusedGemmKernel(const KernelInfo& info) : GemmKernel(info, Form::Gemm, true) {}
};
struct FusedMatMulKernel final : GemmKernel {
  explicit FusedMatMulKernel(const KernelInfo& info) : GemmKernel(info, Form::MatMul, true) {}
};

PI_REGISTER_KERNEL("opencl", "", MatMul, 1, 28, MatMulKernel);
PI_REGISTER_KERNEL("opencl", "", Gemm, 1, 28, PlainGemmKernel);
PI_REGISTER_KERNEL("opencl", "ai.polyinfer", FusedGemm, 1, 1, FusedGemmKernel);
PI_REGISTER_KERNEL("opencl", "ai.polyinfer", FusedMatMul, 1, 1, FusedMatMulKernel);

}  // namespace
}  // namespace polyinfer::opencl
