// Reference kernels of the ai.polyinfer channels-last operators (NhwcFusedConv, NhwcQLinearConv,
// NhwcQLinearConvAdd, NhwcMaxPool, NhwcAveragePool, NhwcGlobalAveragePool, NhwcGlobalMaxPool;
// docs/optimizer.md). Each one transposes its layout-bearing inputs to NCHW, runs the NCHW
// operator's reference kernel and transposes the result back: slow, obviously right, and the oracle
// for the oneDNN versions.
#include <cstring>

#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

// [a, b, c, d] → [a, c, d, b] (NCHW → NHWC) when to_nhwc, else [a, b, c, d] → [a, d, b, c].
// Any element type (float32 for the float operators, 8-bit for NhwcQLinearConv): elements move
// as bytes.
Tensor permute4(const Tensor& x, bool to_nhwc) {
  PI_CHECK(x.rank() == 4, InvalidArgument, "channels-last operators take tensors of rank 4, got ",
           dtype_name(x.dtype()), shape_str(x.shape()));
  const Shape& s = x.shape();
  const Shape out = to_nhwc ? Shape{s[0], s[2], s[3], s[1]} : Shape{s[0], s[3], s[1], s[2]};
  Tensor y = Tensor::empty(x.dtype(), out);
  const auto* in = static_cast<const unsigned char*>(x.raw_data());
  auto* o = static_cast<unsigned char*>(y.raw_data());
  const size_t es = dtype_size(x.dtype());
  // Both directions are "move axis 1 of the input to the end" or its inverse; index the input.
  const int64_t n = s[0], a = s[1], b = s[2], c = s[3];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < a; ++j)
      for (int64_t k = 0; k < b; ++k)
        for (int64_t l = 0; l < c; ++l) {
          const int64_t src = ((i * a + j) * b + k) * c + l;
          const int64_t dst =
              to_nhwc ? ((i * b + k) * c + l) * a + j : ((i * c + l) * a + j) * b + k;
          std::memcpy(o + dst * es, in + src * es, es);
        }
  return y;
}

class InnerInfo final : public KernelInfo {
 public:
  InnerInfo(const KernelInfo& outer, ir::Node node)
      : outer_(outer),
        node_(std::move(node)),
        qlinear_(node_.op_type.rfind("QLinearConv", 0) == 0) {}
  const ir::Node& node() const override { return node_; }
  const Tensor* constant_input(size_t i) const override {
    return layout_input(qlinear_, i) ? nullptr : outer_.constant_input(i);
  }
  const ir::TypeInfo* input_type(size_t) const override { return nullptr; }
  const ir::TypeInfo* output_type(size_t) const override { return nullptr; }
  std::unique_ptr<SubgraphRunner> subgraph(const std::string& attr) const override {
    return outer_.subgraph(attr);
  }
  int threads() const override { return outer_.threads(); }
  const ProviderOptions& options() const override { return outer_.options(); }
  // X and the residual Z (FusedConv's input 3, QLinearConvAdd's 9) are channels-last;
  // QLinearConv's input 3 is its weights.
  static bool layout_input(bool qlinear, size_t i) { return i == 0 || i == (qlinear ? 9 : 3); }

 private:
  const KernelInfo& outer_;
  ir::Node node_;
  bool qlinear_;
};

class InnerContext final : public KernelContext {
 public:
  InnerContext(KernelContext& outer, std::vector<Value> values)
      : outer_(outer), values_(std::move(values)) {}
  const ir::Node& node() const override { return outer_.node(); }
  const Value& value(size_t i) const override { return i < values_.size() ? values_[i] : none_; }
  Tensor& output(size_t i, DType dtype, const Shape& shape) override {
    PI_CHECK(i == 0, Internal, "channels-last operators have one output");
    y_ = Tensor::empty(dtype, shape);
    return y_;
  }
  void set_output(size_t i, Value v) override {
    PI_CHECK(i == 0 && v.is_tensor(), Internal, "channels-last operators have one tensor output");
    y_ = v.tensor();
  }
  const std::map<std::string, Value>& scope() const override { return outer_.scope(); }
  int threads() const override { return outer_.threads(); }
  const Tensor& result() const { return y_; }

 private:
  KernelContext& outer_;
  std::vector<Value> values_;
  Value none_;
  Tensor y_;
};

class NhwcReference final : public Kernel {
 public:
  explicit NhwcReference(const KernelInfo& info) {
    ir::Node inner = info.node();
    inner.op_type = inner.op_type.substr(4);  // drop "Nhwc"
    qlinear_ = inner.op_type.rfind("QLinearConv", 0) == 0;
    if (inner.op_type == "FusedConv" || inner.op_type == "QLinearConvAdd") {
      inner.opset = 1;
    } else if (qlinear_) {
      inner.domain = "";
      inner.opset = 10;
    } else {
      inner.domain = "";
      inner.opset = inner.op_type == "AveragePool" ? 19 : inner.op_type == "MaxPool" ? 12 : 1;
    }
    const KernelDef* ref = nullptr;
    for (const KernelDef* d : find_kernels("cpu", inner.domain, inner.op_type, inner.opset))
      if (d->tier == KernelTier::Reference) ref = d;
    PI_CHECK(ref != nullptr, Internal, info.node().label(), ": no reference kernel for ",
             inner.op_type);
    InnerInfo ii(info, inner);
    inner_ = ref->make(ii);
  }

  void run(KernelContext& ctx) override {
    std::vector<Value> values;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Value& v = ctx.value(i);
      values.push_back(InnerInfo::layout_input(qlinear_, i) && v.is_tensor()
                           ? Value(permute4(v.tensor(), /*to_nhwc=*/false))
                           : v);
    }
    InnerContext inner(ctx, std::move(values));
    inner_->run(inner);
    const Tensor y = permute4(inner.result(), /*to_nhwc=*/true);
    Tensor& out = ctx.output(0, y.dtype(), y.shape());
    std::memcpy(out.raw_data(), y.raw_data(), y.nbytes());
  }

 private:
  std::unique_ptr<Kernel> inner_;
  bool qlinear_ = false;
};

PI_CPU_INTERNAL_KERNEL(NhwcFusedConv, 1, 1, NhwcReference);
PI_CPU_INTERNAL_KERNEL(NhwcQLinearConv, 1, 1, NhwcReference);
PI_CPU_INTERNAL_KERNEL(NhwcQLinearConvAdd, 1, 1, NhwcReference);
PI_CPU_INTERNAL_KERNEL(NhwcMaxPool, 1, 1, NhwcReference);
PI_CPU_INTERNAL_KERNEL(NhwcAveragePool, 1, 1, NhwcReference);
PI_CPU_INTERNAL_KERNEL(NhwcGlobalAveragePool, 1, 1, NhwcReference);
PI_CPU_INTERNAL_KERNEL(NhwcGlobalMaxPool, 1, 1, NhwcReference);

}  // namespace
}  // namespace polyinfer::cpu
