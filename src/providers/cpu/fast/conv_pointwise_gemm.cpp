// ai.polyinfer NhwcFusedConv 1x1 (unit strides, unpadded, group 1) as packed_gemm.h's GEMM:
// channels-last, the convolution is Y [N·H·W, M] = act(X [N·H·W, C] x Wᵀ + B + Z), X and Y
// read and written in place, the weights [M, C] transposed into the GEMM's panels once.
//
// Why: oneDNN JIT-compiles a brgconv_1x1 primitive for every 1x1 shape at session creation,
// ~0.3 ms each, half of the mobile models' creation (MobileNetV2 10 of 20 ms, RegNet-Y 22 of
// 33, DenseNet-121 26 of 58 for its 61 layers). The packed GEMM has nothing to compile and runs
// such layers as fast where the depth C is large: standalone on a Zen 4 core (1 thread, ms,
// brgconv_1x1 -> packed): MobileNetV2's 14x14 384->64 0.087 -> 0.085, 576->96 0.195 -> 0.192,
// 28x28 192->32 0.092 -> 0.088, 7x7 960->160 0.137 -> 0.132, 320->1280 0.380 -> 0.379. Where C
// is small the GEMM's epilogue weighs more, and while that epilogue kept the tile's sums on the
// stack (avx512_gemm.h's store_tile) shallow layers lost (56x56 24->144 0.225 -> 0.266, 112x112
// 16->96 0.434 -> 0.460): C >= 128 was the rule until the eighteenth session. With the sums in
// registers, shallow layers win where their last 32-column panel is nearly full, and lose
// where a quarter or more of its lanes idle (MNASNet's 24->72, 72->24 and 120->40: 0.14 ->
// 0.15 and 0.09 -> 0.11 ms; RegNet-Y's 48- and 104-wide outputs: its 9 layers 2.32 -> 2.54).
// So the rule was C >= 128, or C >= kMinDepth (16; below, K is too short for the tile's fixed
// cost) with the last panel at least 7/8 full: per-node sums of the shallow layers that rule
// added, 3-5 alternated runs, ms, 1 / 2 threads: MNASNet 1.32 -> 1.18 / 0.73 -> 0.68,
// EfficientNet-B0 2.58 -> 2.41 / 1.41 -> 1.27, MobileNetV3 1.44 -> 1.32 / equal, MobileNetV2
// 1.40 -> 1.36 / 0.85 -> 0.78; creation 1-6 ms less. Since the nineteenth session a part-full
// last panel runs only its live vectors (avx512_gemm.h's gemm_rows_narrow), so its fill no
// longer counts: C >= kMinDepth at any output count. The layers that added (brgconv_1x1 ->
// packed, per-node sums, 5 alternated runs, 1 / 2 threads, ms): MobileNetV2 0.202 -> 0.149 /
// 0.145 -> 0.112, EfficientNet-B0 0.220 -> 0.165 / 0.115 -> 0.085, MobileNetV3 0.871 -> 0.659
// / 0.446 -> 0.367, MNASNet 1.056 -> 0.907 / 0.772 -> 0.593, RegNet-Y 2.010 -> 1.867 / 1.108
// -> 0.967. It runs only where the GEMM
// runs its AVX-512 tile and oneDNN its AVX-512 kernels (the pair measured), more than 16
// outputs (the im2col kernel's narrow form takes those); on a 1x1 map (squeeze-and-excitation
// blocks, rows = images) at any depth: there oneDNN's brgconv_1x1 took ~0.25 ms of JIT each
// and ran slower (per-node sums, 5 alternated runs, 1 / 2 threads: RegNet-Y's 16 such layers
// 0.162 -> 0.111 / 0.144 -> 0.089 ms, EfficientNet-B0's 0.198 -> 0.119 / 0.187 -> 0.115,
// MobileNetV3's 0.284 -> 0.175 at 2 threads; output counts that are not multiples of 8 too,
// under masks: RegNet-Y's 14 others 0.217 -> 0.136 ms, their creation 2.3 -> 1.2, 5 alternated
// runs at 1 thread). In the models (deep layers), 1 thread, 4 alternated runs, the layers it
// takes (per-node sums, ms, brgconv_1x1 -> packed): MobileNetV2 3.08 -> 2.95, MobileNetV3
// 2.07 -> 1.91, RegNet-Y 4.62 -> 4.47, DenseNet-121 25.95 -> 25.63, ResNet-50 29.63 -> 29.48,
// EfficientNet-B0 4.35 -> 4.30, MNASNet 3.12 -> 3.07,
// ShuffleNetV2 equal; session creation, fastest of 4: MobileNetV2 21.3 -> 16.6 ms,
// DenseNet-121 66.8 -> 43.2, RegNet-Y 30.8 -> 27.2, ResNet-50 115 -> 98, ShuffleNetV2 27.7 ->
// 21.9. At 2 threads, where each thread takes a contiguous share of the row blocks (the rows
// the previous layer wrote from that core: packed_gemm.h), per-node sums of the layers that
// moved, 4 alternated runs, ms, brgconv_1x1 -> packed: ResNet-50 16.09 -> 15.81, MobileNetV2
// 2.05 -> 1.79, Inception-v3 6.23 -> 6.13, ResNeXt-50 33.8 -> 32.9, RegNet-Y 2.74 -> 2.70,
// EfficientNet-B0 2.43 -> 2.47, MNASNet, MobileNetV3 and ShuffleNetV2 equal, DenseNet-121 15.0
// -> 14.6; creation ResNet-50 119 -> 97 ms, DenseNet-121 72 -> 55, RegNet-Y 40 -> 27,
// MobileNetV3 37 -> 28, ResNeXt-50 87 -> 72. Weights past kRowSplitBytes (more than a core's
// L2) go by panels instead (Split::Panels: each thread reads its part of them): split by rows,
// every thread streamed all of them from memory for a few rows of input (ResNet-50's layer4:
// 2-4 MB of weights, 49 rows). An Intel Xeon core (2 MB L2), 2 threads, 4 alternated runs:
// ResNet-50's layer4 1x1 layers 3.51 -> 2.96 ms, all its 1x1 layers 15.97 -> 15.31, the model
// 27.5 -> 26.7; Inception-v3 21.7 -> 21.0, ResNeXt-50 31.7 -> 30.6.
#include <algorithm>
#include <string>

#include "providers/cpu/fast/avx512_math.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"
#include "providers/cpu/fast/packed_gemm.h"
#include "providers/cpu/onednn/onednn.h"

namespace polyinfer::fast {
namespace {

constexpr int64_t kMinDepth = 16;  // input channels from which the GEMM is as fast (above)
// Weight bytes past which the threads share the panels rather than the rows (above): more than
// the L2 of a core on the machines measured (2 MB on the Xeon, 1 MB on the Zen 4).
constexpr int64_t kRowSplitBytes = int64_t{2} << 20;

// Whether the GEMM takes a 1x1 layer of c input channels on a map larger than 1x1 (above).
bool deep_enough(int64_t c) { return c >= kMinDepth; }

// Whether X is known to be [N, 1, 1, C]: a squeeze-and-excitation block's 1x1 convolutions on
// the pooled map, GEMMs of N rows, which the GEMM takes at any depth and thread count.
bool one_pixel(const KernelInfo& info) {
  const ir::TypeInfo* t = info.input_type(0);
  return t && t->has_shape && t->dims.size() == 4 && t->dims[1] == 1 && t->dims[2] == 1;
}

class NhwcPointwiseGemmConv final : public Kernel {
  static constexpr const char* kEnv = "POLYINFER_POINTWISE_GEMM";

 public:
  static bool may_take(const KernelInfo& info) {
    const auto o = conv_outline(info);
    if (!o) return true;
    const bool deep = deep_enough(o->c);
    const bool pooled = one_pixel(info);
    return o->group == 1 && o->kh == 1 && o->kw == 1 && o->unit_strides && o->m > 16 &&
           (o->m % 8 == 0 || pooled) && (deep || pooled);
  }

  explicit NhwcPointwiseGemmConv(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "pointwise GEMM convolution", kEnv);
#ifdef PI_X86_AVX512
    if (!avx512::supported() || !cpu::onednn::avx512_kernels())
#endif
      info.unsupported("pointwise GEMM convolution: measured only against oneDNN's AVX-512 "
                       "kernels, with the AVX-512 tile");
    const bool pooled = one_pixel(info);
    a_ = NhwcConvArgs::read(info, "pointwise GEMM convolution");
    if (a_.attrs.group != 1) info.unsupported("pointwise GEMM convolution: grouped");
    if (a_.KH != 1 || a_.KW != 1) info.unsupported("pointwise GEMM convolution: not 1x1");
    const auto& at = a_.attrs;
    if (std::any_of(at.strides.begin(), at.strides.end(), [](int64_t s) { return s != 1; }) ||
        std::any_of(at.pads.begin(), at.pads.end(), [](int64_t p) { return p != 0; }))
      info.unsupported("pointwise GEMM convolution: strided or padded");
    if (a_.M <= 16) info.unsupported("pointwise GEMM convolution: 16 or fewer outputs (im2col's)");
    // The AVX-512 tile and the one-row path mask their stores; on a larger map, N a multiple
    // of 8 keeps every store whole (the rule measured).
    if (a_.M % 8 != 0 && !(pooled && PackedGemm::wide()))
      info.unsupported("pointwise GEMM convolution: outputs not a multiple of 8");
    if (!pooled && !deep_enough(a_.C))
      info.unsupported("pointwise GEMM convolution: fewer than " + std::to_string(kMinDepth) +
                       " input channels on a map larger than 1x1");
    // W [M, C, 1, 1] is B transposed ([N, K]); read in place from the model file.
    gemm_ = PackedGemm(a_.weights.at(0), a_.C, a_.M, /*trans_b=*/true, 1.f, a_.bias, 1.f);
    split_ = a_.C * a_.M * 4 > kRowSplitBytes ? PackedGemm::Split::Panels
                                              : PackedGemm::Split::Rows;
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  // Each output reads its own element of Z just before it is written.
  int inplace_input() const override { return a_.has_z ? 3 : -1; }
  std::string impl() const override {
    return std::string("fast:") + gemm_.isa() + "-pointwise-gemm";
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

PI_REGISTER_KERNEL_TIER("cpu", "ai.polyinfer", NhwcFusedConv, 1, 1, NhwcPointwiseGemmConv,
                        Specialized);

}  // namespace polyinfer::fast
