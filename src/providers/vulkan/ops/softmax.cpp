// Float32 Softmax and LogSoftmax on Vulkan (shaders/softmax.comp), every opset: from 13 along
// the single axis `axis` (default -1), before 13 over the input flattened to 2-D at `axis`
// (default 1), as the CPU kernels do. Hardmax is not here (it falls back).
#include "core/shape_util.h"
#include "providers/vulkan/ops/common.h"

namespace polyinfer::vulkan {
namespace {

struct SoftmaxParams {
  uint32_t n, inner, rows, off_x, off_y, log_softmax;
};

template <bool Log> class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const KernelInfo& info)
      : flatten_(info.opset() < 13), axis_(info.attr_int("axis", info.opset() < 13 ? 1 : -1)) {
    require_float32(info);
    ctx_ = Context::get();
    pipeline_ = &ctx_->pipeline("softmax", 2, sizeof(SoftmaxParams));
  }
  std::string impl() const override { return "vulkan:softmax"; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_input(kc, x);
    const Shape& s = x.shape();
    const int rank = x.rank();
    const int64_t axis = normalize_axis(axis_, rank, kc.node().label().c_str());
    const SoftmaxLayout l = softmax_layout(s, axis, flatten_);
    const int64_t outer = l.outer, n = l.n, inner = l.inner;
    Tensor& y = kc.output(0, DType::Float32, s);
    if (y.numel() == 0) return;
    const BufferRef rx = ctx_->find(x.raw_data()), ry = ctx_->find(y.raw_data());
    const SoftmaxParams p{
        u32(n),       u32(inner), u32(outer * inner), element_offset(rx), element_offset(ry),
        Log ? 1u : 0u};
    ctx_->dispatch(*pipeline_, {rx.buffer, ry.buffer}, &p,
                   u32(std::min<int64_t>(outer * inner, ctx_->max_groups())));
  }

 private:
  bool flatten_;
  int64_t axis_;
  std::shared_ptr<Context> ctx_;
  const Pipeline* pipeline_ = nullptr;
};

PI_REGISTER_KERNEL("vulkan", "", Softmax, 1, 28, SoftmaxKernel<false>);
PI_REGISTER_KERNEL("vulkan", "", LogSoftmax, 1, 28, SoftmaxKernel<true>);

}  // namespace
}  // namespace polyinfer::vulkan
