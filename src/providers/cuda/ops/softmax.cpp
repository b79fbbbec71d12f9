// Softmax and LogSoftmax (float32) on CUDA; kernels in softmax.cu. Up to opset 11 the input is
// flattened to 2-D at `axis` (default 1); from 13 the op normalizes along `axis` (default -1).
// Both are the [outer, n, inner] view the launcher takes (the old form has inner = 1).
#include "core/shape_util.h"
#include "providers/cuda/ops/op_util.h"
#include "providers/cuda/ops/softmax_kernels.h"

namespace polyinfer::cuda {
namespace {

template <bool Log> class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const KernelInfo& info)
      : ctx_(Context::get()),
        flatten_(info.opset() < 13),
        axis_(info.attr_int("axis", info.opset() < 13 ? 1 : -1)) {
    require_float32(info, 1);
  }
  std::string impl() const override { return "cuda:softmax"; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_float32(kc, x);
    const Shape& s = x.shape();
    const int rank = x.rank();
    const int64_t axis = normalize_axis(axis_, rank, kc.node().label().c_str());
    const SoftmaxLayout l = softmax_layout(s, axis, flatten_);
    const int64_t outer = l.outer, n = l.n, inner = l.inner;
    Tensor& y = kc.output(0, DType::Float32, s);
    if (y.numel() == 0) return;
    launch_softmax(static_cast<const float*>(x.raw_data()), static_cast<float*>(y.raw_data()),
                   outer, n, inner, Log, ctx_.max_grid_x(), ctx_.stream());
    check_launch(kc.node().op_type.c_str());
  }

 private:
  Context& ctx_;
  bool flatten_;
  int64_t axis_;
};

PI_CUDA_KERNEL(Softmax, 1, 28, SoftmaxKernel<false>);
PI_CUDA_KERNEL(LogSoftmax, 1, 28, SoftmaxKernel<true>);

}  // namespace
}  // namespace polyinfer::cuda
