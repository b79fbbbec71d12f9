// Element-wise operators on CUDA (kernels in elementwise.cu), float32, float16 and bfloat16: Add,
// Sub, Mul, Div, Pow and two-input Max, Min with numpy broadcasting up to rank 6; Relu,
// LeakyRelu, Sigmoid, Tanh, Exp, Log, Neg, Abs, Sqrt, Reciprocal, Erf, HardSigmoid, HardSwish,
// Gelu (ONNX and ai.polyinfer). Other dtypes, higher ranks and Max/Min of other input counts are
// refused at creation, so the node falls back with the reason.
#include "core/shape_util.h"
#include "providers/cuda/ops/elementwise_kernels.h"
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

template <BinaryOp Op> class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(const KernelInfo& info) : ctx_(Context::get()) {
    if (info.num_inputs() != 2)
      info.unsupported(std::to_string(info.num_inputs()) +
                       " inputs (the CUDA kernel takes exactly 2)");
    dtype_ = require_float(info, 2, kMaxRank);
  }
  std::string impl() const override { return "cuda:binary"; }

  void run(KernelContext& kc) override {
    const Tensor& a = kc.input(0);
    const Tensor& b = kc.input(1);
    check_dtype(kc, a, dtype_);
    check_dtype(kc, b, dtype_);
    const Shape out = broadcast_shapes(a.shape(), b.shape(), kc.node().op_type.c_str());
    PI_CHECK(out.size() <= size_t{kMaxRank}, UnsupportedOp, kc.node().label(), ": rank ",
             out.size(), " (the CUDA kernel takes rank <= 6)");
    Tensor& c = kc.output(0, dtype_, out);
    if (c.numel() == 0) return;
    const Elem e = elem_of(dtype_);
    const void* pa = a.raw_data();
    const void* pb = b.raw_data();
    void* pc = c.raw_data();
    if (a.shape() == b.shape()) {
      launch_binary(Op, e, pa, pb, pc, c.numel(), nullptr, ctx_.max_grid_x(), ctx_.stream());
    } else {
      Broadcast bc;
      bc.rank = static_cast<int>(out.size());
      const std::vector<int64_t> sa = broadcast_strides(a.shape(), out);
      const std::vector<int64_t> sb = broadcast_strides(b.shape(), out);
      for (size_t k = 0; k < out.size(); ++k) {
        bc.dims[k] = out[k];
        bc.stride_a[k] = sa[k];
        bc.stride_b[k] = sb[k];
      }
      launch_binary(Op, e, pa, pb, pc, c.numel(), &bc, ctx_.max_grid_x(), ctx_.stream());
    }
    check_launch(kc.node().op_type.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_;
};

class UnaryKernel : public Kernel {
 public:
  UnaryKernel(const KernelInfo& info, UnaryOp op, float alpha = 0.0f, float beta = 0.0f)
      : ctx_(Context::get()), op_(op), alpha_(alpha), beta_(beta) {
    dtype_ = require_float(info, 1);
  }
  std::string impl() const override { return "cuda:unary"; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    Tensor& y = kc.output(0, dtype_, x.shape());
    launch_unary(op_, elem_of(dtype_), x.raw_data(), y.raw_data(), y.numel(), alpha_, beta_,
                 ctx_.max_grid_x(), ctx_.stream());
    check_launch(kc.node().op_type.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_;
  UnaryOp op_;
  float alpha_, beta_;
};

// An operator without attributes.
template <UnaryOp Op> class Unary final : public UnaryKernel {
 public:
  explicit Unary(const KernelInfo& info) : UnaryKernel(info, Op) {}
};

class LeakyReluKernel final : public UnaryKernel {
 public:
  explicit LeakyReluKernel(const KernelInfo& info)
      : UnaryKernel(info, UnaryOp::LeakyRelu, info.attr_float("alpha", 0.01f)) {}
};

class HardSigmoidKernel final : public UnaryKernel {
 public:
  explicit HardSigmoidKernel(const KernelInfo& info)
      : UnaryKernel(info, UnaryOp::HardSigmoid, info.attr_float("alpha", 0.2f),
                    info.attr_float("beta", 0.5f)) {}
};

// Gelu: exact (erf) or, with approximate="tanh", the tanh form.
UnaryOp gelu_mode(const KernelInfo& info) {
  const std::string mode = info.attr_string("approximate", "none");
  if (mode == "tanh") return UnaryOp::GeluTanh;
  if (mode != "none") info.unsupported("approximate=" + mode);
  return UnaryOp::Gelu;
}

class GeluKernel final : public UnaryKernel {
 public:
  explicit GeluKernel(const KernelInfo& info) : UnaryKernel(info, gelu_mode(info)) {}
};

// Opsets before 7 (binary; 8 for Max/Min) and 6 (unary) had legacy broadcast and
// consumed_inputs attributes: those nodes stay on cpu.
PI_CUDA_KERNEL(Add, 7, 28, BinaryKernel<BinaryOp::Add>);
PI_CUDA_KERNEL(Sub, 7, 28, BinaryKernel<BinaryOp::Sub>);
PI_CUDA_KERNEL(Mul, 7, 28, BinaryKernel<BinaryOp::Mul>);
PI_CUDA_KERNEL(Div, 7, 28, BinaryKernel<BinaryOp::Div>);
PI_CUDA_KERNEL(Pow, 7, 28, BinaryKernel<BinaryOp::Pow>);
PI_CUDA_KERNEL(Max, 8, 28, BinaryKernel<BinaryOp::Max>);
PI_CUDA_KERNEL(Min, 8, 28, BinaryKernel<BinaryOp::Min>);
PI_CUDA_KERNEL(Relu, 6, 28, Unary<UnaryOp::Relu>);
PI_CUDA_KERNEL(LeakyRelu, 6, 28, LeakyReluKernel);
PI_CUDA_KERNEL(Sigmoid, 6, 28, Unary<UnaryOp::Sigmoid>);
PI_CUDA_KERNEL(Tanh, 6, 28, Unary<UnaryOp::Tanh>);
PI_CUDA_KERNEL(Exp, 6, 28, Unary<UnaryOp::Exp>);
PI_CUDA_KERNEL(Log, 6, 28, Unary<UnaryOp::Log>);
PI_CUDA_KERNEL(Neg, 6, 28, Unary<UnaryOp::Neg>);
PI_CUDA_KERNEL(Abs, 6, 28, Unary<UnaryOp::Abs>);
PI_CUDA_KERNEL(Sqrt, 6, 28, Unary<UnaryOp::Sqrt>);
PI_CUDA_KERNEL(Reciprocal, 6, 28, Unary<UnaryOp::Reciprocal>);
PI_CUDA_KERNEL(Erf, 9, 28, Unary<UnaryOp::Erf>);
PI_CUDA_KERNEL(HardSigmoid, 6, 28, HardSigmoidKernel);
PI_CUDA_KERNEL(HardSwish, 14, 28, Unary<UnaryOp::HardSwish>);
PI_CUDA_KERNEL(Gelu, 20, 28, GeluKernel);
// The optimizer's Gelu for models older than opset 20 (docs/optimizer.md).
PI_REGISTER_KERNEL("cuda", "ai.polyinfer", Gelu, 1, 1, GeluKernel);

}  // namespace
}  // namespace polyinfer::cuda
