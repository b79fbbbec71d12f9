// MatMul and ai.polyinfer FusedMatMul with constant 2-D weights on AVX2+FMA: Y [..., N] =
// act(A [..., K] x B [K, N] + bias), every leading dimension of A flattened into rows (a 1-D A
// is one row, and Y is then [N]), float32; any N on the AVX-512 tiles, N a multiple of 8 on the
// AVX2 one. Gemm and FusedGemm too when they are such a product: transA 0, a constant B
// ([K, N], or [N, K] under transB: transposed while packing, alpha folded in) and a C that is a
// per-column bias (beta folded in).
//
// Why: these are a transformer's projection and feed-forward layers, most of its run; oneDNN 2.6's
// gemm:jit ran them well below this tile's speed on AVX2, and a classifier's last layer (one
// row) runs at parity or faster (docs/kernels.md).
//
// The computation is packed_gemm.h's.
#include <string>

#include "ops/activation.h"
#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"
#include "providers/cpu/fast/packed_gemm.h"

namespace polyinfer::fast {
namespace {

class PackedMatMul final : public Kernel {
 public:
  explicit PackedMatMul(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "packed MatMul");
    require_float_input(info);
    const Tensor* b = info.constant_input(1);
    if (!b || b->dtype() != DType::Float32 || b->rank() != 2)
      info.unsupported("packed MatMul: constant float32 2-D weights only");
    const std::string& op = info.node().op_type;
    bool trans_b = false;
    float alpha = 1.f, beta = 1.f;
    is_gemm_ = op == "Gemm" || op == "FusedGemm";
    if (is_gemm_) {
      if (info.attr_int("transA", 0) != 0) info.unsupported("packed MatMul: Gemm with transA");
      trans_b = info.attr_int("transB", 0) != 0;
      alpha = info.attr_float("alpha", 1.f);
      beta = info.attr_float("beta", 1.f);
    }
    const int64_t K = b->shape()[trans_b ? 1 : 0], N = b->shape()[trans_b ? 0 : 1];
    // The zmm tiles store their last panel under a mask; the AVX2 tile stores whole vectors.
    if (K == 0 || (N % 8 != 0 && !PackedGemm::wide(info.options().cpu)))
      info.unsupported("packed MatMul: N a multiple of 8 only on the AVX2 tile");
    if (info.node().domain == "ai.polyinfer") act_ = FusedActivation::from(info);
    if (!avx2::covers(act_.kind)) info.unsupported("packed MatMul: this activation");
    const Tensor* bias = nullptr;
    if (info.has_input(2)) {
      bias = info.constant_input(2);
      // Gemm's C broadcasts: [N] and [1, N] are a bias, [N, 1] (also N values) is not.
      if (!bias || bias->dtype() != DType::Float32 || bias->numel() != N || bias->rank() > 2 ||
          (bias->rank() == 2 && bias->shape()[0] != 1))
        info.unsupported("packed MatMul: a bias that is not a constant vector of N values");
    }
    // Read in place: a weight still in the model file is never copied whole first. Nodes that
    // read one weight (an unrolled recurrence's steps) share its panels.
    packed_ = PackedGemm(info, 1, b->peek_bytes(), K, N, trans_b, alpha,
                         bias ? bias->data<float>() : nullptr, beta);
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  std::string impl() const override {
    return std::string("fast:") + packed_.isa() + "-packed" + (packed_.shared() ? "+shared" : "");
  }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    PI_CHECK(a.dtype() == DType::Float32, InvalidArgument, label_, ": A must be float32, got ",
             dtype_name(a.dtype()));
    PI_CHECK(!is_gemm_ || a.rank() == 2, ShapeMismatch, label_, ": Gemm's A must be 2-D, got ",
             shape_str(a.shape()));
    const int64_t K = packed_.K();
    PI_CHECK(a.rank() >= 1 && a.shape().back() == K, ShapeMismatch, label_, ": A has shape ",
             shape_str(a.shape()), " but B's depth is ", K, " (A's last dimension must match)");
    Shape ys = a.shape();  // a 1-D A is one row whose dimension the product drops
    ys.back() = packed_.N();
    Tensor& y = ctx.output(0, DType::Float32, ys);
    if (y.numel() == 0) return;
    packed_.run(a.data<float>(), nullptr, y.data<float>(), a.numel() / K, act_, ctx.threads());
  }

 private:
  std::string label_;
  bool is_gemm_ = false;  // Gemm / FusedGemm (A must be 2-D)
  FusedActivation act_;
  PackedGemm packed_;  // B, bias and the tiles
};

PI_CPU_CANDIDATE("", MatMul, 1, 28, "packed_matmul", PackedMatMul);
PI_CPU_CANDIDATE("ai.polyinfer", FusedMatMul, 1, 1, "packed_matmul", PackedMatMul);
PI_CPU_CANDIDATE("", Gemm, 1, 28, "packed_matmul", PackedMatMul);
PI_CPU_CANDIDATE("ai.polyinfer", FusedGemm, 1, 1, "packed_matmul", PackedMatMul);

}  // namespace
}  // namespace polyinfer::fast
