// Reference kernels of polyinfer's own operators (domain ai.polyinfer, docs/optimizer.md), which
// the optimizer emits at level >= 2:
//   FusedConv(X, W, [B], [Z])  = act(Conv(X, W, B) + Z)
//   FusedGemm(A, B, [C])       = act(Gemm(A, B, C))
//   FusedMatMul(A, B, [bias])  = act(MatMul(A, B) + bias)
//   LayerNormalization, Gelu   = the ONNX operators (opsets 17 and 20) for older models
//
// Each one is the unfused sequence: it creates the plain operator's reference kernel for a copy
// of the node that looks like the ONNX op (default domain, the fused inputs and attributes
// dropped), runs it, then adds Z / bias and applies the activation in float32. That way the
// oracle for the fast fused kernels is exactly what the unoptimized graph computes on cpu-ref.
// Fused ops are float32, or float16 / bfloat16 after a session's precision fp16 / bf16
// conversion.
#include <cstring>
#include <memory>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "ops/activation.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

// KernelInfo of the plain node, forwarding everything else to the fused node's info. Input i of
// the plain node is input i of the fused one (the fused inputs come after the plain ones).
class PlainInfo final : public KernelInfo {
 public:
  PlainInfo(const KernelInfo& outer, const ir::Node& plain) : outer_(outer), plain_(plain) {}
  const ir::Node& node() const override { return plain_; }
  const Tensor* constant_input(size_t i) const override {
    return i < plain_.inputs.size() ? outer_.constant_input(i) : nullptr;
  }
  const ir::TypeInfo* input_type(size_t i) const override {
    return i < plain_.inputs.size() ? outer_.input_type(i) : nullptr;
  }
  const ir::TypeInfo* output_type(size_t i) const override { return outer_.output_type(i); }
  std::unique_ptr<SubgraphRunner> subgraph(const std::string& attr) const override {
    return outer_.subgraph(attr);
  }
  int threads() const override { return outer_.threads(); }
  const ProviderOptions& options() const override { return outer_.options(); }

 private:
  const KernelInfo& outer_;
  const ir::Node& plain_;
};

// KernelContext of the plain node: its inputs are the fused node's first ones; output 0 is
// remembered so the fused kernel can finish it in place.
class PlainContext final : public KernelContext {
 public:
  PlainContext(KernelContext& outer, const ir::Node& plain) : outer_(outer), plain_(plain) {}
  const ir::Node& node() const override { return plain_; }
  const Value& value(size_t i) const override {
    static const Value kNone;
    return i < plain_.inputs.size() ? outer_.value(i) : kNone;
  }
  Tensor& output(size_t i, DType dtype, const Shape& shape) override {
    Tensor& t = outer_.output(i, dtype, shape);
    if (i == 0) out_ = &t;
    return t;
  }
  void set_output(size_t i, Value value) override {
    // A view of an input would be finished in place, writing into the input: copy it.
    if (i == 0 && value.is_tensor() && value.tensor().dtype() != DType::String) {
      Tensor& t = output(0, value.tensor().dtype(), value.tensor().shape());
      const Tensor src = value.tensor().to(Device::cpu());
      if (src.nbytes()) std::memcpy(t.raw_data(), src.raw_data(), src.nbytes());
      return;
    }
    outer_.set_output(i, std::move(value));
  }
  const std::map<std::string, Value>& scope() const override { return outer_.scope(); }
  int threads() const override { return outer_.threads(); }

  Tensor* out() const { return out_; }

 private:
  KernelContext& outer_;
  const ir::Node& plain_;
  Tensor* out_ = nullptr;
};

// The plain node behind a fused one: op `op` at `opset` in the default domain, with the first
// `inputs` inputs and every attribute but the activation.
ir::Node plain_node(const ir::Node& fused, const std::string& op, int opset, size_t inputs) {
  ir::Node n = fused;
  n.domain = "";
  n.op_type = op;
  n.opset = opset;
  if (n.inputs.size() > inputs) n.inputs.resize(inputs);
  n.attrs.erase("activation");
  n.attrs.erase("activation_params");
  return n;
}

using SixteenBitFloats = TypeList<Float16, BFloat16>;

// The values of a float16 or bfloat16 tensor, in float32 (exact).
std::vector<float> widen(const Tensor& t, const std::string& who) {
  std::vector<float> w(static_cast<size_t>(t.numel()));
  dispatch(SixteenBitFloats{}, t.dtype(), who.c_str(), [&](auto tag) {
    using H = typename decltype(tag)::type;
    const H* h = t.data<H>();
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(h[i]);
  });
  return w;
}

// Rounds every value to `dtype` (float16 or bfloat16), storing into `out` when given, else
// back into `w` as float32.
void narrow(std::vector<float>& w, DType dtype, Tensor* out, const std::string& who) {
  dispatch(SixteenBitFloats{}, dtype, who.c_str(), [&](auto tag) {
    using H = typename decltype(tag)::type;
    if (out) {
      H* h = out->data<H>();
      for (size_t i = 0; i < w.size(); ++i) h[i] = H(w[i]);
    } else {
      for (float& v : w) v = float(H(v));
    }
  });
}

std::unique_ptr<Kernel> reference_kernel(const KernelInfo& info, const ir::Node& plain) {
  for (const KernelDef* d : find_kernels("cpu", "", plain.op_type, plain.opset))
    if (d->tier == KernelTier::Reference) return d->make(PlainInfo(info, plain));
  fail(ErrorCode::Internal, info.node().label(), ": no reference kernel for ", plain.op_type);
}

// The plain op, then `extra` (Z or bias) and the activation, in float32.
class FusedKernel final : public Kernel {
 public:
  enum class Extra { None, SameShape, LastDim };

  FusedKernel(const KernelInfo& info, const std::string& op, int opset, size_t plain_inputs,
              Extra extra)
      : plain_(std::make_unique<ir::Node>(plain_node(info.node(), op, opset, plain_inputs))),
        act_(FusedActivation::from(info)),
        extra_index_(plain_inputs),
        extra_(extra),
        who_(info.node().label()) {
    for (size_t i = 0; i < info.num_inputs(); ++i) {
      const ir::TypeInfo* t = info.input_type(i);
      if (info.has_input(i) && t && t->elem != DType::Undefined && t->elem != DType::Float32 &&
          t->elem != DType::Float16 && t->elem != DType::BFloat16)
        info.unsupported("input of type " + std::string(dtype_name(t->elem)) +
                         " (fused operators are float32, float16 or bfloat16)");
    }
    inner_ = reference_kernel(info, *plain_);
  }

  void run(KernelContext& ctx) override {
    PlainContext pctx(ctx, *plain_);
    inner_->run(pctx);
    PI_CHECK(pctx.out(), Internal, who_, ": the plain kernel wrote no output");
    Tensor& y = *pctx.out();
    const DType dt = y.dtype();
    PI_CHECK(dt == DType::Float32 || dt == DType::Float16 || dt == DType::BFloat16, UnsupportedOp,
             who_, ": ", dtype_name(dt),
             " is not implemented (fused operators "
             "are float32, float16 or bfloat16)");
    const bool half = dt != DType::Float32;
    const int64_t n = y.numel();
    // 16-bit floats are finished in float32 and rounded once more, as the unfused 16-bit graph
    // (the product rounded, then Add and the activation each on 16-bit values) rounds too.
    std::vector<float> wide;
    if (half) wide = widen(y, who_);
    float* yp = half ? wide.data() : y.data<float>();
    const bool extra = extra_ != Extra::None && ctx.has_input(extra_index_);
    if (extra) {
      const Tensor& e = ctx.input(extra_index_);
      PI_CHECK(e.dtype() == dt, InvalidArgument, who_, ": input ", extra_index_, " must be ",
               dtype_name(dt), ", got ", e.describe());
      std::vector<float> e_wide;
      if (half) e_wide = widen(e, who_);
      const float* ep = half ? e_wide.data() : e.data<float>();
      if (extra_ == Extra::SameShape) {
        PI_CHECK(e.shape() == y.shape(), ShapeMismatch, who_, ": Z ", e.describe(),
                 " must have the output's shape ", shape_str(y.shape()));
        for (int64_t i = 0; i < n; ++i) yp[i] += ep[i];
      } else {
        const int64_t N = y.rank() > 0 ? y.dim(-1) : 1;
        PI_CHECK(e.rank() == 1 && e.numel() == N, ShapeMismatch, who_, ": bias ", e.describe(),
                 " must be 1-D of the output's last dimension ", N);
        for (int64_t i = 0; i < n; ++i) yp[i] += ep[i % N];
      }
    }
    if (half && extra && act_.kind != ActKind::None) narrow(wide, dt, nullptr, who_);
    act_.apply(yp, static_cast<size_t>(n));
    if (half) narrow(wide, dt, &y, who_);
  }

 private:
  std::unique_ptr<ir::Node> plain_;  // outlives inner_, which may keep a reference to it
  std::unique_ptr<Kernel> inner_;
  FusedActivation act_;
  size_t extra_index_;
  Extra extra_;
  std::string who_;
};

class FusedConvKernel final : public Kernel {
 public:
  explicit FusedConvKernel(const KernelInfo& info)
      : k_(info, "Conv", 11, 3, FusedKernel::Extra::SameShape) {}
  void run(KernelContext& ctx) override { k_.run(ctx); }

 private:
  FusedKernel k_;
};

class FusedGemmKernel final : public Kernel {
 public:
  explicit FusedGemmKernel(const KernelInfo& info)
      : k_(info, "Gemm", 13, 3, FusedKernel::Extra::None) {}
  void run(KernelContext& ctx) override { k_.run(ctx); }

 private:
  FusedKernel k_;
};

class FusedMatMulKernel final : public Kernel {
 public:
  explicit FusedMatMulKernel(const KernelInfo& info)
      : k_(info, "MatMul", 13, 2, FusedKernel::Extra::LastDim) {}
  void run(KernelContext& ctx) override { k_.run(ctx); }

 private:
  FusedKernel k_;
};

// The ONNX operator of a later opset, run as is (same inputs, outputs and attributes).
class LaterOpsetKernel : public Kernel {
 public:
  LaterOpsetKernel(const KernelInfo& info, const std::string& op, int opset)
      : plain_(std::make_unique<ir::Node>(plain_node(info.node(), op, opset, 1 << 20))),
        inner_(reference_kernel(info, *plain_)) {}
  void run(KernelContext& ctx) override {
    PlainContext pctx(ctx, *plain_);
    inner_->run(pctx);
  }

 private:
  std::unique_ptr<ir::Node> plain_;
  std::unique_ptr<Kernel> inner_;
};

class LayerNormKernel final : public LaterOpsetKernel {
 public:
  explicit LayerNormKernel(const KernelInfo& info)
      : LaterOpsetKernel(info, "LayerNormalization", 17) {}
};

class GeluKernel final : public LaterOpsetKernel {
 public:
  explicit GeluKernel(const KernelInfo& info) : LaterOpsetKernel(info, "Gelu", 20) {}
};

class HardSwishKernel final : public LaterOpsetKernel {
 public:
  explicit HardSwishKernel(const KernelInfo& info) : LaterOpsetKernel(info, "HardSwish", 14) {}
};

class MishKernel final : public LaterOpsetKernel {
 public:
  explicit MishKernel(const KernelInfo& info) : LaterOpsetKernel(info, "Mish", 18) {}
};

class AttentionKernel final : public LaterOpsetKernel {
 public:
  explicit AttentionKernel(const KernelInfo& info) : LaterOpsetKernel(info, "Attention", 23) {}
};

}  // namespace

PI_CPU_INTERNAL_KERNEL(FusedConv, 1, 1, FusedConvKernel);
PI_CPU_INTERNAL_KERNEL(FusedGemm, 1, 1, FusedGemmKernel);
PI_CPU_INTERNAL_KERNEL(FusedMatMul, 1, 1, FusedMatMulKernel);
PI_CPU_INTERNAL_KERNEL(LayerNormalization, 1, 1, LayerNormKernel);
PI_CPU_INTERNAL_KERNEL(Gelu, 1, 1, GeluKernel);
PI_CPU_INTERNAL_KERNEL(HardSwish, 1, 1, HardSwishKernel);
PI_CPU_INTERNAL_KERNEL(Mish, 1, 1, MishKernel);
PI_CPU_INTERNAL_KERNEL(Attention, 1, 1, AttentionKernel);

}  // namespace polyinfer::cpu
