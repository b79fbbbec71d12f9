// Pooling on CUDA (nn.cu), float32, float16 and bfloat16 (float32 sums and divisions, one
// rounding), MaxPool also of uint8 and int8 (an int8 model's): MaxPool without the Indices
// output, AveragePool (with and without count_include_pad), over 1-D and 2-D windows with
// strides, dilations, asymmetric pads, auto_pad and ceil_mode; GlobalAveragePool and
// GlobalMaxPool over any spatial rank (one block per (n, c) plane). The window arithmetic is the
// CPU kernels' (window_geometry).
//
// Not cuDNN: its pooling takes one pad per axis, no dilations and no ceil_mode, and these
// kernels read each input element a few times at most, so they are bound by memory like cuDNN's.
// Refused at creation: the Indices output, 3-D windows, other dtypes.
#include "core/shape_util.h"
#include "ops/window.h"
#include "providers/cuda/ops/nn_kernels.h"
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

class PoolKernel final : public Kernel {
 public:
  PoolKernel(const KernelInfo& info, bool max)
      : ctx_(Context::get()), attrs_(WindowAttrs::parse(info)), max_(max) {
    dtype_ = max ? require_float_or_q8(info, 1) : require_float(info, 1);
    if (max && info.has_output(1)) info.unsupported("MaxPool's Indices output");
    const int r = known_rank(info, 0);
    if (r >= 0 && r != 3 && r != 4)
      info.unsupported("pooling input of rank " + std::to_string(r) +
                       " (the CUDA kernel does 1-D and 2-D windows)");
    include_pad_ = !max && info.attr_int("count_include_pad", 0) != 0;
  }
  std::string impl() const override { return max_ ? "cuda:maxpool" : "cuda:avgpool"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    PI_CHECK(x.rank() == 3 || x.rank() == 4, UnsupportedOp, who, ": input ", x.describe(),
             " (the CUDA kernel does 1-D and 2-D windows)");
    PI_CHECK(attrs_.kernel_shape.size() == x.shape().size() - 2, InvalidModel, who,
             ": kernel_shape must have ", x.shape().size() - 2, " values");
    const WindowGeometry g = window_geometry(attrs_, Shape(x.shape().begin() + 2, x.shape().end()),
                                             attrs_.kernel_shape, who, true);
    Shape ys{x.dim(0), x.dim(1)};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    Tensor& y = kc.output(0, dtype_, ys);
    if (y.numel() == 0) return;
    PoolWindow w;
    const int h = g.rank == 2 ? 0 : -1, c = g.rank - 1;  // -1: the 1-D form's missing row axis
    if (h == 0) {
      w.in_h = g.in[0], w.out_h = g.out[0], w.k_h = g.kernel[0], w.s_h = g.strides[0];
      w.d_h = g.dilations[0], w.p_t = g.pad_begin[0], w.p_b = g.pad_end[0];
    }
    w.in_w = g.in[c], w.out_w = g.out[c], w.k_w = g.kernel[c], w.s_w = g.strides[c];
    w.d_w = g.dilations[c], w.p_l = g.pad_begin[c], w.p_r = g.pad_end[c];
    const PoolMode mode = max_           ? PoolMode::Max
                          : include_pad_ ? PoolMode::AvgIncludePad
                                         : PoolMode::AvgExcludePad;
    if (dtype_ == DType::UInt8 || dtype_ == DType::Int8)
      launch_max_pool_q8(dtype_ == DType::Int8, x.raw_data(), y.raw_data(), x.dim(0) * x.dim(1), w,
                         ctx_.max_grid_x(), ctx_.stream());
    else
      launch_pool(elem_of(dtype_), x.raw_data(), y.raw_data(), x.dim(0) * x.dim(1), w, mode,
                  ctx_.max_grid_x(), ctx_.stream());
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_;
  WindowAttrs attrs_;
  bool max_;
  bool include_pad_ = false;
};

struct MaxPoolKernel final : Kernel {
  explicit MaxPoolKernel(const KernelInfo& info) : k(info, true) {}
  std::string impl() const override { return k.impl(); }
  void run(KernelContext& kc) override { k.run(kc); }
  PoolKernel k;
};
struct AveragePoolKernel final : Kernel {
  explicit AveragePoolKernel(const KernelInfo& info) : k(info, false) {}
  std::string impl() const override { return k.impl(); }
  void run(KernelContext& kc) override { k.run(kc); }
  PoolKernel k;
};

template <bool Max> class GlobalPoolKernel final : public Kernel {
 public:
  explicit GlobalPoolKernel(const KernelInfo& info)
      : ctx_(Context::get()), dtype_(require_float(info, 1)) {}
  std::string impl() const override { return Max ? "cuda:globalmaxpool" : "cuda:globalavgpool"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    PI_CHECK(x.rank() >= 3, ShapeMismatch, who, ": input must be [N, C, D...], got ", x.describe());
    Shape ys(x.shape().size(), 1);
    ys[0] = x.dim(0);
    ys[1] = x.dim(1);
    Tensor& y = kc.output(0, dtype_, ys);
    if (y.numel() == 0) return;
    const int64_t n = x.numel() / y.numel();
    PI_CHECK(n > 0, UnsupportedOp, who, ": an empty spatial extent ", x.describe());
    launch_row_reduce(elem_of(dtype_), x.raw_data(), y.raw_data(), y.numel(), n,
                      Max ? RowOp::Max : RowOp::Mean, ctx_.max_grid_x(), ctx_.stream());
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_;
};

PI_CUDA_KERNEL(MaxPool, 1, 28, MaxPoolKernel);
PI_CUDA_KERNEL(AveragePool, 1, 28, AveragePoolKernel);
PI_CUDA_KERNEL(GlobalAveragePool, 1, 28, GlobalPoolKernel<false>);
PI_CUDA_KERNEL(GlobalMaxPool, 1, 28, GlobalPoolKernel<true>);

}  // namespace
}  // namespace polyinfer::cuda
