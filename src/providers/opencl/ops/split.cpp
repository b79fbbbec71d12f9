// Split on OpenCL, any dtype of 1, 2, 4 or 8 bytes: one strided copy (kernels/copy.cl) per
// output, of the output's shape with the input's strides from the part's start along the axis.
// Every version: sizes from the 'split' attribute (before 13) or input (1, 13+), equal parts,
// num_outputs (18+) with a smaller last part; the rules and errors are the CPU kernel's
// (plan_split in ops/split.h). Constant sizes stay on the host; sizes computed at run time are
// read back, which waits for the enqueued work. Refused at creation: other dtypes (strings, packed
// types), rank > 6.
#include "ops/split.h"
#include "providers/opencl/ops/copy.h"

namespace polyinfer::opencl {
namespace {

class SplitKernel final : public Kernel {
 public:
  explicit SplitKernel(const KernelInfo& info) : attrs_(info) {
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
    const SplitPlan plan = plan_split(attrs_, hc);
    const std::vector<int64_t> xs = contiguous_strides(x.shape());
    int64_t start = 0;  // along the axis
    for (size_t k = 0; k < plan.sizes.size(); ++k) {
      if (kc.wants_output(k)) {
        Shape s = x.shape();
        s[plan.axis] = plan.sizes[k];
        Tensor& y = kc.output(k, dtype_, s);
        enqueue_copy(*ctx_, kernel_, x, y, s, xs, contiguous_strides(s), 0, start * xs[plan.axis]);
      }
      start += plan.sizes[k];
    }
  }

 private:
  SplitAttrs attrs_;
  HostConstants constants_;
  std::shared_ptr<Context> ctx_;
  DType dtype_ = DType::Float32;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", Split, 1, 28, SplitKernel);

}  // namespace
}  // namespace polyinfer::opencl
