// Slice on OpenCL, any dtype of 1, 2, 4 or 8 bytes: one strided copy (kernels/copy.cl) from the
// first selected element with each dimension's step times its stride (negative steps walk
// backwards). Every version: starts/ends/axes as attributes before opset 10, as inputs (with
// steps) from 10. The clamping and the errors are the CPU kernels' (plan_slice in ops/slice.h).
// Constant inputs stay on the host; ones computed at run time are read back, which waits for the
// enqueued work. Refused at creation: other dtypes (strings, packed types), rank > 6.
#include "ops/slice.h"
#include "providers/opencl/ops/copy.h"

namespace polyinfer::opencl {
namespace {

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const KernelInfo& info) : attrs_(info) {
    dtype_ = require_movable(info, kMaxRank, 1);
    constants_.keep(info, 1);
    ctx_ = Context::get();
    kernel_ = copy_kernel(*ctx_, dtype_);
  }
  std::string impl() const override { return "opencl:copy"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_input(kc, x, kMaxRank, dtype_);
    HostConstantsContext hc(kc, constants_);
    const SlicePlan plan = plan_slice(attrs_, hc);
    Tensor& y = kc.output(0, dtype_, plan.out);
    if (y.numel() == 0) return;
    const std::vector<int64_t> xs = contiguous_strides(x.shape());
    std::vector<int64_t> sx(xs.size());
    int64_t first = 0;
    for (size_t d = 0; d < xs.size(); ++d) {
      first += plan.first[d] * xs[d];
      sx[d] = plan.step[d] * xs[d];
    }
    enqueue_copy(*ctx_, kernel_, x, y, plan.out, sx, contiguous_strides(plan.out), 0, first);
  }

 private:
  SliceAttrs attrs_;
  HostConstants constants_;
  std::shared_ptr<Context> ctx_;
  DType dtype_ = DType::Float32;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", Slice, 1, 28, SliceKernel);

}  // namespace
}  // namespace polyinfer::opencl
