// Pad on CUDA (layout.cu), float32, float16 and bfloat16, rank <= 8: constant, reflect, edge and
// wrap (19+), negative pads cropping; pads from the attribute (before 11) or inputs with the
// optional axes (18+), the constant value from the attribute or input 2. The pads, output shape,
// modes and their errors are the CPU's (ops/pad.h: plan_pad, pad_mode; the kernel
// mirrors pad_source). Constant inputs stay on the host; computed ones are read back, which
// waits for the queued work. Refused at creation: other data types, ranks above 8, modes the
// CPU refuses.
#include "ops/pad.h"
#include "core/shape_util.h"
#include "providers/cuda/ops/layout_kernels.h"
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const KernelInfo& info) : ctx_(Context::get()), attrs_(info) {
    dtype_ = require_float(info, 1, kLayoutMaxRank);
    mode_ = pad_mode(info, attrs_.mode);
    constants_.keep(info, 1);
  }
  std::string impl() const override { return "cuda:pad"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    PI_CHECK(x.rank() <= kLayoutMaxRank, UnsupportedOp, who, ": rank ", x.rank(),
             " (the CUDA layout kernels take up to ", kLayoutMaxRank, ")");
    HostConstantsContext hc(kc, constants_);
    const PadPlan plan = plan_pad(attrs_, hc);
    const float value = pad_float_value(attrs_, hc, dtype_);
    Tensor& y = kc.output(0, dtype_, plan.out);
    if (y.numel() == 0) return;
    PadView v;
    v.rank = x.rank();
    v.mode = static_cast<int>(mode_);
    int64_t stride = 1;
    for (int d = x.rank() - 1; d >= 0; --d) {
      v.odims[d] = plan.out[d];
      v.before[d] = plan.before[d];
      v.idims[d] = x.shape()[d];
      v.xstride[d] = stride;
      stride *= x.shape()[d];
    }
    launch_pad(elem_of(dtype_), x.raw_data(), y.raw_data(), y.numel(), v, value, ctx_.max_grid_x(),
               ctx_.stream());
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_ = DType::Float32;
  PadAttrs attrs_;
  PadMode mode_ = PadMode::Constant;
  HostConstants constants_;
};

PI_CUDA_KERNEL(Pad, 1, 28, PadKernel);

}  // namespace
}  // namespace polyinfer::cuda
