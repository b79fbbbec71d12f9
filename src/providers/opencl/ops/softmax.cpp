// Float32 Softmax and LogSoftmax on OpenCL (kernels/softmax.cl), every opset: from 13 along the
// single axis `axis` (default -1), before 13 over the input flattened to 2-D at `axis` (default
// 1), as the CPU kernels do. Hardmax is not here (it falls back).
#include "core/shape_util.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct SoftmaxParams {
  uint32_t n, inner, rows, off_x, off_y, log_softmax;
};

// softmax.cl's work-group: one row's 256 work-items reduce in local memory.
constexpr size_t kGroup = 256;

template <bool Log> class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const KernelInfo& info)
      : flatten_(info.opset() < 13), axis_(info.attr_int("axis", info.opset() < 13 ? 1 : -1)) {
    require_float32(info);
    ctx_ = Context::get();
    if (ctx_->max_work_group() < kGroup)
      info.unsupported("a device whose work-groups hold " + std::to_string(ctx_->max_work_group()) +
                       " work-items (256 needed)");
    kernel_ = ctx_->kernel("softmax", "softmax");
  }
  std::string impl() const override { return "opencl:softmax"; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_input(kc, x);
    const Shape& s = x.shape();
    const int64_t axis = normalize_axis(axis_, x.rank(), kc.node().label().c_str());
    const SoftmaxLayout l = softmax_layout(s, axis, flatten_);
    Tensor& y = kc.output(0, DType::Float32, s);
    if (y.numel() == 0) return;
    const BufferRef rx = ctx_->find(x.raw_data()), ry = ctx_->find(y.raw_data());
    const int64_t rows = l.outer * l.inner;
    const SoftmaxParams p{u32(l.n),           u32(l.inner),       u32(rows),
                          element_offset(rx), element_offset(ry), Log ? 1u : 0u};
    ctx_->dispatch(kernel_, {rx.buffer, ry.buffer}, &p, sizeof p,
                   static_cast<size_t>(std::min<int64_t>(rows, ctx_->max_groups())), kGroup);
  }

 private:
  bool flatten_;
  int64_t axis_;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", Softmax, 1, 28, SoftmaxKernel<false>);
PI_REGISTER_KERNEL("opencl", "", LogSoftmax, 1, 28, SoftmaxKernel<true>);

}  // namespace
}  // namespace polyinfer::opencl
