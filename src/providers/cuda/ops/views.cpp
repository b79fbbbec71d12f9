// Reshape, Flatten, Squeeze, Unsqueeze and Identity of float32, float16, bfloat16 and 8-bit
// tensors on CUDA: no kernel, the output is a view of the input's device memory with another
// shape. The shape arithmetic is the CPU reference kernel's, created and run here (its only
// effect is set_output(x.reshaped(...)), which works on any device), so both agree on every rule
// (0 and -1 in Reshape, allowzero, negative axes). Constant shape/axes inputs are kept on the
// host (reported prepacked); computed ones are read back from the device, which waits for the
// queued work.
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

class ViewKernel final : public Kernel {
 public:
  explicit ViewKernel(const KernelInfo& info) {
    dtype_ = require_float_or_q8(info, 1);  // the data input only: shapes and axes are int64
    const ir::Node& n = info.node();
    for (const KernelDef* d : find_kernels("cpu", n.domain, n.op_type, n.opset))
      if (d->tier == KernelTier::Reference) {
        inner_ = d->make(info);
        break;
      }
    if (!inner_) info.unsupported("opset " + std::to_string(n.opset));
    constants_.keep(info, 1);
  }
  std::string impl() const override { return "cuda:view"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    check_dtype(kc, kc.input(0), dtype_);
    HostConstantsContext ctx(kc, constants_);
    inner_->run(ctx);
  }

 private:
  std::unique_ptr<Kernel> inner_;
  HostConstants constants_;
  DType dtype_;
};

PI_CUDA_KERNEL(Reshape, 1, 28, ViewKernel);
PI_CUDA_KERNEL(Flatten, 1, 28, ViewKernel);
PI_CUDA_KERNEL(Squeeze, 1, 28, ViewKernel);
PI_CUDA_KERNEL(Unsqueeze, 1, 28, ViewKernel);
PI_CUDA_KERNEL(Identity, 1, 28, ViewKernel);

}  // namespace
}  // namespace polyinfer::cuda
