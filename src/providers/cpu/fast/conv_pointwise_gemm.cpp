// ai.polyinfer NhwcFusedConv 1x1 (unit strides, unpadded, group 1) as packed_gemm.h's GEMM:
// channels-last, the convolution is Y [N·H·W, M] = act(X [N·H·W, C] x Wᵀ + B + Z), X and Y
// read and written in place, the weights [M, C] transposed into the GEMM's panels once.
//
// Why: oneDNN JIT-compiles a brgconv_1x1 primitive for every 1x1 shape at session creation
// (~0.3 ms each, half of the mobile models' creation); the packed GEMM has nothing to compile
// and runs such layers as fast where the choice table gives them to it (docs/kernels.md has
// the figures). Threads share few row blocks by rows, one contiguous share each, as the layers
// around split the pixels, unless the weights pass a core's L2 (kRowSplitBytes): then by
// panels, so that each thread streams only its part of them from memory.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"
#include "providers/cpu/fast/packed_gemm.h"

namespace polyinfer::fast {
namespace {

// Weight bytes past which the threads share the panels rather than the rows: more than the L2
// of a core on the machines measured (2 MB on an Intel Xeon, 1 MB on a Zen 4).
constexpr int64_t kRowSplitBytes = int64_t{2} << 20;

class NhwcPointwiseGemmConv final : public Kernel {
 public:
  explicit NhwcPointwiseGemmConv(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "pointwise GEMM convolution");
    a_ = NhwcConvArgs::read(info, "pointwise GEMM convolution");
    const auto& at = a_.attrs;
    const auto ones = [](const std::vector<int64_t>& v, int64_t x) {
      return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
    };
    PI_CHECK(at.group == 1 && a_.KH == 1 && a_.KW == 1 && ones(at.strides, 1) && ones(at.pads, 0),
             Internal, label_,
             ": the pointwise GEMM takes unpadded 1x1 convolutions of group 1 at stride 1");
    const bool wide = PackedGemm::wide(info.options().cpu);
    if (a_.M % 8 != 0 && !wide)
      info.unsupported("pointwise GEMM convolution: outputs not a multiple of 8 on the ymm tile");
    // W [M, C, 1, 1] is B transposed ([N, K]); read in place from the model file.
    gemm_ = PackedGemm(info, 1, a_.weights.at(0), a_.C, a_.M, /*trans_b=*/true, 1.f, a_.bias, 1.f);
    split_ = a_.C * a_.M * 4 > kRowSplitBytes ? PackedGemm::Split::Panels : PackedGemm::Split::Rows;
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  // Each output reads its own element of Z just before it is written.
  int inplace_input() const override { return a_.has_z ? 3 : -1; }
  std::string impl() const override {
    return std::string("fast:") + gemm_.isa() + "-pointwise-gemm" +
           (gemm_.shared() ? "+shared" : "");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    a_.check_x(x, label_);
    Tensor& y = ctx.output(0, DType::Float32, {x.dim(0), x.dim(1), x.dim(2), a_.M});
    const float* z = a_.residual(ctx, y, label_);
    if (y.numel() == 0) return;
    gemm_.run(x.data<float>(), z, y.data<float>(), x.dim(0) * x.dim(1) * x.dim(2), a_.act,
              ctx.threads(), split_);
  }

 private:
  std::string label_;
  NhwcConvArgs a_;
  PackedGemm gemm_;
  PackedGemm::Split split_ = PackedGemm::Split::Rows;  // how few row blocks are shared
};

}  // namespace

PI_CPU_CANDIDATE("ai.polyinfer", NhwcFusedConv, 1, 1, "pointwise_gemm", NhwcPointwiseGemmConv);

}  // namespace polyinfer::fast
