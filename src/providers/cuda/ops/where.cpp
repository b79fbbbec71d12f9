// Where on CUDA (elementwise.cu): out = condition ? X : Y with numpy broadcasting of all three up
// to rank 6, X and Y float32, float16 or bfloat16 (the chosen element's bits, exact). Refused at
// creation: a condition not known to be bool, X and Y not known to be one of those types (alike),
// ranks above 6.
#include "core/shape_util.h"
#include "providers/cuda/ops/elementwise_kernels.h"
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(const KernelInfo& info) : ctx_(Context::get()) {
    const DType dc = known_dtype(info, 0);
    if (dc != DType::Bool)
      info.unsupported(std::string("condition of dtype ") + dtype_name(dc) +
                       " (the CUDA Where takes a bool condition known at load time)");
    dtype_ = known_dtype(info, 1);
    if (!cuda_float(dtype_) || known_dtype(info, 2) != dtype_)
      info.unsupported(std::string("X of dtype ") + dtype_name(dtype_) + " and Y of dtype " +
                       dtype_name(known_dtype(info, 2)) +
                       " (the CUDA Where takes X and Y of one dtype: float32, float16 or "
                       "bfloat16)");
    for (size_t i = 0; i < 3; ++i)
      if (known_rank(info, i) > kMaxRank)
        info.unsupported("rank " + std::to_string(known_rank(info, i)) +
                         " (the CUDA Where takes rank <= 6)");
  }
  std::string impl() const override { return "cuda:where"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& c = kc.input(0);
    const Tensor& x = kc.input(1);
    const Tensor& y = kc.input(2);
    check_dtype(kc, c, DType::Bool);
    check_dtype(kc, x, dtype_);
    check_dtype(kc, y, dtype_);
    const Shape out = broadcast_shapes({c.shape(), x.shape(), y.shape()}, who.c_str());
    PI_CHECK(out.size() <= size_t{kMaxRank}, UnsupportedOp, who, ": rank ", out.size(),
             " (the CUDA Where takes rank <= 6)");
    Tensor& o = kc.output(0, dtype_, out);
    if (o.numel() == 0) return;
    Broadcast3 bc;
    bc.rank = static_cast<int>(out.size());
    const Tensor* in[3] = {&c, &x, &y};
    for (int k = 0; k < 3; ++k) {
      const std::vector<int64_t> st = broadcast_strides(in[k]->shape(), out);
      for (size_t d = 0; d < out.size(); ++d) bc.stride[k][d] = st[d];
    }
    for (size_t d = 0; d < out.size(); ++d) bc.dims[d] = out[d];
    launch_where(elem_of(dtype_), static_cast<const bool*>(c.raw_data()), x.raw_data(),
                 y.raw_data(), o.raw_data(), o.numel(), bc, ctx_.max_grid_x(), ctx_.stream());
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_ = DType::Float32;
};

PI_CUDA_KERNEL(Where, 9, 28, WhereKernel);

}  // namespace
}  // namespace polyinfer::cuda
