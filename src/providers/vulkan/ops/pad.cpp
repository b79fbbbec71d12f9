// Float32 Pad on Vulkan (shaders/pad.comp), rank <= 6: constant, reflect, edge and wrap (19+),
// negative pads cropping; pads from the attribute (before 11) or inputs with the optional axes
// (18+), the constant value from the attribute or input 2. The pads, output shape, modes and
// their errors are the CPU's (ops/pad.h: plan_pad, pad_mode, and pad_source, which
// the shader mirrors). Constant inputs stay on the host; ones computed at run time are read
// back, which waits for the recorded work. Refused at creation: data other than float32, rank
// > 6, modes the CPU refuses.
#include "ops/pad.h"
#include "providers/vulkan/ops/copy.h"

namespace polyinfer::vulkan {
namespace {

struct PadParams {
  uint32_t rank, n, off_x, off_y, mode;
  float value;
  uint32_t odims[kMaxRank];
  int32_t before[kMaxRank];
  uint32_t idims[kMaxRank], xs[kMaxRank];
};
static_assert(sizeof(PadParams) == 120, "matches the push-constant block of pad.comp");

class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const KernelInfo& info) : attrs_(info) {
    dtype_ = require_float(info, kMaxRank, 1);
    mode_ = pad_mode(info, attrs_.mode);
    constants_.keep(info, 1);
    ctx_ = Context::get();
    pipeline_ = &ctx_->pipeline(shader_for("pad", dtype_), 2, sizeof(PadParams));
  }
  std::string impl() const override { return "vulkan:pad"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x, kMaxRank, dtype_);
    HostConstantsContext hc(kc, constants_);
    const PadPlan plan = plan_pad(attrs_, hc);
    const float value = pad_float_value(attrs_, hc, dtype_);
    Tensor& y = kc.output(0, dtype_, plan.out);
    check_input(kc, y, kMaxRank, dtype_);
    if (y.numel() == 0) return;
    PadParams p{};
    p.rank = u32(x.rank());
    p.n = u32(y.numel());
    p.mode = static_cast<uint32_t>(mode_);
    p.value = value;
    const std::vector<int64_t> xs = contiguous_strides(x.shape());
    for (int d = 0; d < x.rank(); ++d) {
      // Pads beyond what 32 bits index would make an output past the element limit anyway,
      // except crops: a crop larger than the dimension leaves an empty output (returned above).
      PI_CHECK(plan.before[d] >= std::numeric_limits<int32_t>::min() &&
                   plan.before[d] <= std::numeric_limits<int32_t>::max(),
               UnsupportedOp, who, ": pad ", plan.before[d], " (the Vulkan kernel takes 32 bits)");
      p.odims[d] = u32(plan.out[d]);
      p.before[d] = static_cast<int32_t>(plan.before[d]);
      p.idims[d] = u32(x.shape()[d]);
      p.xs[d] = u32(xs[d]);
    }
    const BufferRef ry = ctx_->find(y.raw_data());
    // An empty input (constant mode) has no device memory; the shader reads none of it.
    const BufferRef rx = x.numel() ? ctx_->find(x.raw_data()) : ry;
    p.off_x = element_offset(rx, dtype_);
    p.off_y = element_offset(ry, dtype_);
    ctx_->dispatch(*pipeline_, {rx.buffer, ry.buffer}, &p, groups_for(p.n, *ctx_));
  }

 private:
  PadAttrs attrs_;
  PadMode mode_ = PadMode::Constant;
  HostConstants constants_;
  std::shared_ptr<Context> ctx_;
  DType dtype_ = DType::Float32;
  const Pipeline* pipeline_ = nullptr;
};

PI_REGISTER_KERNEL("vulkan", "", Pad, 1, 28, PadKernel);

}  // namespace
}  // namespace polyinfer::vulkan
