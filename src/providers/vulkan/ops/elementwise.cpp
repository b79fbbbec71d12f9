// Float32 and float16 element-wise operators on Vulkan: Add, Sub, Mul, Div, Pow with numpy
// broadcasting up to rank 6 (shaders/binary.comp), and Relu, Sigmoid, Tanh, Exp, Neg, Abs,
// LeakyRelu, HardSigmoid, HardSwish, Gelu (ONNX 20 and ai.polyinfer; erf or tanh), Erf, Sqrt,
// Clip with constant bounds, Floor, Ceil, Round, Reciprocal, Log, Sin, Cos, Tan, the inverse
// trigonometric and the hyperbolic functions, Sign, Softplus, Softsign, Elu, Selu, Celu,
// ThresholdedRelu and Mish (shaders/unary.comp). Each kernel takes its cached pipeline at creation
// and records one dispatch per run. Anything else (another dtype, rank > 6) is refused at creation,
// so the partitioner places the node on the next provider and reports why.
#include <limits>

#include "core/shape_util.h"
#include "providers/vulkan/ops/common.h"

namespace polyinfer::vulkan {
namespace {

struct BinaryParams {
  uint32_t op, rank, n, off_a, off_b, off_c;
  uint32_t dims[kMaxRank], sa[kMaxRank], sb[kMaxRank];
};
static_assert(sizeof(BinaryParams) == 96, "matches the push-constant block of binary.comp");

struct UnaryParams {
  uint32_t op, n, off_x, off_y;
  float alpha, beta;
};

template <uint32_t Op> class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(const KernelInfo& info) {
    dtype_ = require_float(info);
    ctx_ = Context::get();
    pipeline_ = &ctx_->pipeline(shader_for("binary", dtype_), 3, sizeof(BinaryParams));
  }
  std::string impl() const override { return "vulkan:binary"; }

  void run(KernelContext& kc) override {
    const Tensor& a = kc.input(0);
    const Tensor& b = kc.input(1);
    check_input(kc, a, kMaxRank, dtype_);
    check_input(kc, b, kMaxRank, dtype_);
    const Shape out_shape = broadcast_shapes(a.shape(), b.shape(), kc.node().op_type.c_str());
    PI_CHECK(out_shape.size() <= kMaxRank, UnsupportedOp, kc.node().label(), ": rank ",
             out_shape.size(), " (the Vulkan kernels take rank <= 6)");
    Tensor& c = kc.output(0, dtype_, out_shape);
    check_input(kc, c, kMaxRank, dtype_);
    if (c.numel() == 0) return;
    BinaryParams p{};
    p.op = Op;
    p.n = static_cast<uint32_t>(c.numel());
    if (a.shape() == b.shape()) {
      // Same shape: one flat dimension.
      p.rank = 1;
      p.dims[0] = p.n;
      p.sa[0] = p.sb[0] = 1;
    } else {
      const std::vector<int64_t> sa = broadcast_strides(a.shape(), out_shape);
      const std::vector<int64_t> sb = broadcast_strides(b.shape(), out_shape);
      p.rank = static_cast<uint32_t>(out_shape.size());
      for (size_t k = 0; k < out_shape.size(); ++k) {
        p.dims[k] = static_cast<uint32_t>(out_shape[k]);
        p.sa[k] = static_cast<uint32_t>(sa[k]);
        p.sb[k] = static_cast<uint32_t>(sb[k]);
      }
    }
    const BufferRef ra = ctx_->find(a.raw_data()), rb = ctx_->find(b.raw_data()),
                    rc = ctx_->find(c.raw_data());
    p.off_a = element_offset(ra, dtype_);
    p.off_b = element_offset(rb, dtype_);
    p.off_c = element_offset(rc, dtype_);
    ctx_->dispatch(*pipeline_, {ra.buffer, rb.buffer, rc.buffer}, &p, groups_for(p.n, *ctx_));
  }

 private:
  DType dtype_ = DType::Float32;
  std::shared_ptr<Context> ctx_;
  const Pipeline* pipeline_ = nullptr;
};

// unary.comp's operator codes.
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

// A Clip bound from input i (opset 11+): a constant scalar, since it is needed when the kernel is
// recorded and a value computed at run time would have to be read back from the device.
float clip_bound(const KernelInfo& info, size_t i, float absent) {
  if (!info.has_input(i)) return absent;
  const Tensor* c = info.constant_input(i);
  if (!c) info.unsupported("a Clip bound computed at run time (the Vulkan kernel takes constants)");
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
    pipeline_ = &ctx_->pipeline(shader_for("unary", dtype_), 2, sizeof(UnaryParams));
  }
  std::string impl() const override { return "vulkan:unary"; }
  // Clip's bounds were read at creation; the kernel never looks at those inputs again.
  bool prepacked(size_t i) const override { return Op == kClip && i > 0; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_input(kc, x, kMaxRank, dtype_);
    Tensor& y = kc.output(0, dtype_, x.shape());
    if (y.numel() == 0) return;
    const BufferRef rx = ctx_->find(x.raw_data()), ry = ctx_->find(y.raw_data());
    UnaryParams p{op_,
                  static_cast<uint32_t>(y.numel()),
                  element_offset(rx, dtype_),
                  element_offset(ry, dtype_),
                  alpha_,
                  beta_};
    ctx_->dispatch(*pipeline_, {rx.buffer, ry.buffer}, &p, groups_for(p.n, *ctx_));
  }

 private:
  uint32_t op_ = Op;
  float alpha_ = 0, beta_ = 0;
  DType dtype_ = DType::Float32;
  std::shared_ptr<Context> ctx_;
  const Pipeline* pipeline_ = nullptr;
};

#define PI_VULKAN_KERNEL(OP, SINCE, UNTIL, K) PI_REGISTER_KERNEL("vulkan", "", OP, SINCE, UNTIL, K)
// Opsets before 7 (binary) and 6 (unary) had the legacy broadcast / consumed_inputs attributes.
PI_VULKAN_KERNEL(Add, 7, 28, BinaryKernel<0>);
PI_VULKAN_KERNEL(Sub, 7, 28, BinaryKernel<1>);
PI_VULKAN_KERNEL(Mul, 7, 28, BinaryKernel<2>);
PI_VULKAN_KERNEL(Div, 7, 28, BinaryKernel<3>);
// Pow 1 had the legacy broadcast attributes; an exponent of another dtype (12+) is refused.
PI_VULKAN_KERNEL(Pow, 7, 28, BinaryKernel<4>);
PI_VULKAN_KERNEL(Relu, 6, 28, UnaryKernel<kRelu>);
PI_VULKAN_KERNEL(Sigmoid, 6, 28, UnaryKernel<kSigmoid>);
PI_VULKAN_KERNEL(Tanh, 6, 28, UnaryKernel<kTanh>);
PI_VULKAN_KERNEL(Exp, 6, 28, UnaryKernel<kExp>);
PI_VULKAN_KERNEL(Neg, 6, 28, UnaryKernel<kNeg>);
PI_VULKAN_KERNEL(Abs, 6, 28, UnaryKernel<kAbs>);
PI_VULKAN_KERNEL(LeakyRelu, 6, 28, UnaryKernel<kLeakyRelu>);
PI_VULKAN_KERNEL(HardSigmoid, 6, 28, UnaryKernel<kHardSigmoid>);
PI_VULKAN_KERNEL(HardSwish, 14, 28, UnaryKernel<kHardSwish>);
PI_VULKAN_KERNEL(Gelu, 20, 28, UnaryKernel<kGelu>);
PI_REGISTER_KERNEL("vulkan", "ai.polyinfer", Gelu, 1, 1, UnaryKernel<kGelu>);
PI_VULKAN_KERNEL(Erf, 9, 28, UnaryKernel<kErf>);
PI_VULKAN_KERNEL(Sqrt, 6, 28, UnaryKernel<kSqrt>);
PI_VULKAN_KERNEL(Clip, 6, 28, UnaryKernel<kClip>);
PI_VULKAN_KERNEL(Floor, 6, 28, UnaryKernel<kFloor>);
PI_VULKAN_KERNEL(Ceil, 6, 28, UnaryKernel<kCeil>);
PI_VULKAN_KERNEL(Round, 11, 28, UnaryKernel<kRound>);
PI_VULKAN_KERNEL(Reciprocal, 6, 28, UnaryKernel<kReciprocal>);
PI_VULKAN_KERNEL(Log, 6, 28, UnaryKernel<kLog>);
PI_VULKAN_KERNEL(Sin, 7, 28, UnaryKernel<kSin>);
PI_VULKAN_KERNEL(Cos, 7, 28, UnaryKernel<kCos>);
PI_VULKAN_KERNEL(Tan, 7, 28, UnaryKernel<kTan>);
PI_VULKAN_KERNEL(Sign, 9, 28, UnaryKernel<kSign>);
PI_VULKAN_KERNEL(Softplus, 1, 28, UnaryKernel<kSoftplus>);
PI_VULKAN_KERNEL(Softsign, 1, 28, UnaryKernel<kSoftsign>);
PI_VULKAN_KERNEL(Elu, 6, 28, UnaryKernel<kElu>);
PI_VULKAN_KERNEL(Selu, 6, 28, UnaryKernel<kSelu>);
PI_VULKAN_KERNEL(Celu, 12, 28, UnaryKernel<kCelu>);
PI_VULKAN_KERNEL(ThresholdedRelu, 10, 28, UnaryKernel<kThresholdedRelu>);
PI_VULKAN_KERNEL(Mish, 18, 28, UnaryKernel<kMish>);
PI_VULKAN_KERNEL(Asin, 7, 28, UnaryKernel<kAsin>);
PI_VULKAN_KERNEL(Acos, 7, 28, UnaryKernel<kAcos>);
PI_VULKAN_KERNEL(Atan, 7, 28, UnaryKernel<kAtan>);
PI_VULKAN_KERNEL(Sinh, 9, 28, UnaryKernel<kSinh>);
PI_VULKAN_KERNEL(Cosh, 9, 28, UnaryKernel<kCosh>);
PI_VULKAN_KERNEL(Asinh, 9, 28, UnaryKernel<kAsinh>);
PI_VULKAN_KERNEL(Acosh, 9, 28, UnaryKernel<kAcosh>);
PI_VULKAN_KERNEL(Atanh, 9, 28, UnaryKernel<kAtanh>);

}  // namespace
}  // namespace polyinfer::vulkan
