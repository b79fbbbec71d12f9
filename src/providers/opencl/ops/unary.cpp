// Float32 and float16 unary operators on OpenCL (kernels/unary.cl): Relu, Sigmoid, Tanh, Exp,
// Neg, Abs, LeakyRelu, HardSigmoid, HardSwish, Gelu (ONNX 20 and ai.polyinfer; erf or tanh), Erf,
// Sqrt, Clip with constant bounds, Floor, Ceil, Round, Reciprocal, Log, Sin, Cos, Tan, the
// inverse trigonometric and the hyperbolic functions, Sign, Softplus, Softsign, Elu, Selu, Celu,
// ThresholdedRelu and Mish: the operators the Vulkan provider runs (vulkan/ops/elementwise.cpp).
// Another dtype or rank is refused at creation, so the partitioner places the node on the next
// provider and reports why.
#include <limits>

#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct UnaryParams {
  uint32_t op, n, off_x, off_y;
  float alpha, beta;
};

// unary.cl's operator codes (Vulkan's, so the two kernels read alike).
enum UnaryOp : uint32_t {
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kNeg,
  kAbs,
  kLeakyRelu,
  kHardSigmoid,
  kHardSwish,
  kGelu,
  kGeluTanh,
  kErf,
  kSqrt,
  kClip,
  kFloor,
  kCeil,
  kRound,
  kReciprocal,
  kLog,
  kSin,
  kCos,
  kTan,
  kSign,
  kSoftplus,
  kSoftsign,
  kElu,
  kSelu,
  kCelu,
  kThresholdedRelu,
  kMish,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh
};

// A Clip bound from input i (opset 11+): a constant scalar, since the kernel takes it as a
// parameter and a value computed at run time would have to be read back from the device.
float clip_bound(const KernelInfo& info, size_t i, float absent) {
  if (!info.has_input(i)) return absent;
  const Tensor* c = info.constant_input(i);
  if (!c) info.unsupported("a Clip bound computed at run time (the OpenCL kernel takes constants)");
  if ((c->dtype() != DType::Float32 && c->dtype() != DType::Float16) || c->numel() != 1)
    info.unsupported("Clip bound " + c->describe());
  const Tensor h = c->to(Device::cpu());
  return h.dtype() == DType::Float16 ? float(h.data<Float16>()[0]) : h.data<float>()[0];
}

template <uint32_t Op> class UnaryKernel final : public Kernel {
 public:
  explicit UnaryKernel(const KernelInfo& info) {
    dtype_ = require_float(info);
    if constexpr (Op == kLeakyRelu) {
      alpha_ = info.attr_float("alpha", 0.01f);
    } else if constexpr (Op == kHardSigmoid) {
      alpha_ = info.attr_float("alpha", 0.2f);
      beta_ = info.attr_float("beta", 0.5f);
    } else if constexpr (Op == kGelu) {
      const std::string mode = info.attr_string("approximate", "none");
      if (mode == "tanh") op_ = kGeluTanh;
      else if (mode != "none")
        info.unsupported("approximate=" + mode);
    } else if constexpr (Op == kElu) {
      alpha_ = info.attr_float("alpha", 1.0f);
    } else if constexpr (Op == kSelu) {
      alpha_ = info.attr_float("alpha", 1.67326319217681884765625f);
      beta_ = info.attr_float("gamma", 1.05070102214813232421875f);
    } else if constexpr (Op == kCelu) {
      alpha_ = info.attr_float("alpha", 1.0f);
      PI_CHECK(alpha_ != 0.0f, InvalidModel, info.node().label(), ": alpha must not be 0");
    } else if constexpr (Op == kThresholdedRelu) {
      alpha_ = info.attr_float("alpha", 1.0f);
    } else if constexpr (Op == kClip) {
      // Absent bounds as on the CPU: float's lowest/largest finite values for the attributes
      // (opset < 11), the dtype's for the inputs (so an infinite float16 input becomes +-65504,
      // not an infinity again after rounding).
      if (info.opset() < 11) {
        alpha_ = info.attr_float("min", std::numeric_limits<float>::lowest());
        beta_ = info.attr_float("max", std::numeric_limits<float>::max());
      } else {
        const float hi = dtype_ == DType::Float16 ? 65504.0f : std::numeric_limits<float>::max();
        alpha_ = clip_bound(info, 1, -hi);
        beta_ = clip_bound(info, 2, hi);
      }
    }
    ctx_ = Context::get();
    kernel_ = ctx_->kernel("unary", "unary", float_options(dtype_));
  }
  std::string impl() const override { return "opencl:unary"; }
  // Clip's bounds were read at creation; the kernel never looks at those inputs again.
  bool prepacked(size_t i) const override { return Op == kClip && i > 0; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_input(kc, x, kMaxRank, dtype_);
    Tensor& y = kc.output(0, dtype_, x.shape());
    if (y.numel() == 0) return;
    const BufferRef rx = ctx_->find(x.raw_data()), ry = ctx_->find(y.raw_data());
    const UnaryParams p{
        op_, u32(y.numel()), element_offset(rx, dtype_), element_offset(ry, dtype_), alpha_, beta_};
    ctx_->dispatch(kernel_, {rx.buffer, ry.buffer}, &p, sizeof p, groups_for(p.n, *ctx_));
  }

 private:
  uint32_t op_ = Op;
  float alpha_ = 0, beta_ = 0;
  DType dtype_ = DType::Float32;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

#define PI_OPENCL_KERNEL(OP, SINCE, UNTIL, K) PI_REGISTER_KERNEL("opencl", "", OP, SINCE, UNTIL, K)
// Opsets before 6 had the legacy consumed_inputs attribute.
PI_OPENCL_KERNEL(Relu, 6, 28, UnaryKernel<kRelu>);
PI_OPENCL_KERNEL(Sigmoid, 6, 28, UnaryKernel<kSigmoid>);
PI_OPENCL_KERNEL(Tanh, 6, 28, UnaryKernel<kTanh>);
PI_OPENCL_KERNEL(Exp, 6, 28, UnaryKernel<kExp>);
PI_OPENCL_KERNEL(Neg, 6, 28, UnaryKernel<kNeg>);
PI_OPENCL_KERNEL(Abs, 6, 28, UnaryKernel<kAbs>);
PI_OPENCL_KERNEL(LeakyRelu, 6, 28, UnaryKernel<kLeakyRelu>);
PI_OPENCL_KERNEL(HardSigmoid, 6, 28, UnaryKernel<kHardSigmoid>);
PI_OPENCL_KERNEL(HardSwish, 14, 28, UnaryKernel<kHardSwish>);
PI_OPENCL_KERNEL(Gelu, 20, 28, UnaryKernel<kGelu>);
PI_REGISTER_KERNEL("opencl", "ai.polyinfer", Gelu, 1, 1, UnaryKernel<kGelu>);
PI_OPENCL_KERNEL(Erf, 9, 28, UnaryKernel<kErf>);
PI_OPENCL_KERNEL(Sqrt, 6, 28, UnaryKernel<kSqrt>);
PI_OPENCL_KERNEL(Clip, 6, 28, UnaryKernel<kClip>);
PI_OPENCL_KERNEL(Floor, 6, 28, UnaryKernel<kFloor>);
PI_OPENCL_KERNEL(Ceil, 6, 28, UnaryKernel<kCeil>);
PI_OPENCL_KERNEL(Round, 11, 28, UnaryKernel<kRound>);
PI_OPENCL_KERNEL(Reciprocal, 6, 28, UnaryKernel<kReciprocal>);
PI_OPENCL_KERNEL(Log, 6, 28, UnaryKernel<kLog>);
PI_OPENCL_KERNEL(Sin, 7, 28, UnaryKernel<kSin>);
PI_OPENCL_KERNEL(Cos, 7, 28, UnaryKernel<kCos>);
PI_OPENCL_KERNEL(Tan, 7, 28, UnaryKernel<kTan>);
PI_OPENCL_KERNEL(Sign, 9, 28, UnaryKernel<kSign>);
PI_OPENCL_KERNEL(Softplus, 1, 28, UnaryKernel<kSoftplus>);
PI_OPENCL_KERNEL(Softsign, 1, 28, UnaryKernel<kSoftsign>);
PI_OPENCL_KERNEL(Elu, 6, 28, UnaryKernel<kElu>);
PI_OPENCL_KERNEL(Selu, 6, 28, UnaryKernel<kSelu>);
PI_OPENCL_KERNEL(Celu, 12, 28, UnaryKernel<kCelu>);
PI_OPENCL_KERNEL(ThresholdedRelu, 10, 28, UnaryKernel<kThresholdedRelu>);
PI_OPENCL_KERNEL(Mish, 18, 28, UnaryKernel<kMish>);
PI_OPENCL_KERNEL(Asin, 7, 28, UnaryKernel<kAsin>);
PI_OPENCL_KERNEL(Acos, 7, 28, UnaryKernel<kAcos>);
PI_OPENCL_KERNEL(Atan, 7, 28, UnaryKernel<kAtan>);
PI_OPENCL_KERNEL(Sinh, 9, 28, UnaryKernel<kSinh>);
PI_OPENCL_KERNEL(Cosh, 9, 28, UnaryKernel<kCosh>);
PI_OPENCL_KERNEL(Asinh, 9, 28, UnaryKernel<kAsinh>);
PI_OPENCL_KERNEL(Acosh, 9, 28, UnaryKernel<kAcosh>);
PI_OPENCL_KERNEL(Atanh, 9, 28, UnaryKernel<kAtanh>);

}  // namespace
}  // namespace polyinfer::opencl
