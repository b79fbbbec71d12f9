// Shape, Size, ConstantOfShape and Range on OpenCL: small integer tensors that the shape
// arithmetic of exported models (dynamic batch and sequence) computes from shapes and scalars. The
// values are computed on the host by the CPU reference kernel, so every rule and error is the
// CPU's (Shape-15's start/end, Range's element count, ConstantOfShape's value), and the result is
// handed on as a device tensor: strict `--providers opencl` runs such models with no CPU node.
//
// The device copy is kept and handed out again while the values do not change (a run at the same
// shapes uploads nothing). An upload waits for the work enqueued before it (Context::upload), and
// reading a scalar or shape input that lives on the device does too; Shape and Size read only the
// input's shape, never its data. The consumers are views, Gathers, Concats and the Reshapes that
// read these values back anyway, so the waits cost little beside those.
#include <cstring>

#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

// The executor's context with outputs that go to host tensors and, unless `data_free`, inputs
// brought to the host (Shape and Size read their input's shape only).
class HostOutputsContext final : public KernelContext {
 public:
  HostOutputsContext(KernelContext& outer, bool data_free) : outer_(outer) {
    inputs_.resize(outer.num_inputs());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Value& v = outer.value(i);
      inputs_[i] = data_free || !v.is_tensor() ? v : Value(v.tensor().to(Device::cpu()));
    }
    outputs_.resize(outer.num_outputs());
  }
  const ir::Node& node() const override { return outer_.node(); }
  const Value& value(size_t i) const override {
    static const Value none;
    return i < inputs_.size() ? inputs_[i] : none;
  }
  Tensor& output(size_t i, DType dtype, const Shape& shape) override {
    outputs_.at(i) = Value(Tensor::empty(dtype, shape));
    return outputs_[i].tensor();
  }
  void set_output(size_t i, Value value) override { outputs_.at(i) = std::move(value); }
  const std::map<std::string, Value>& scope() const override { return outer_.scope(); }
  int threads() const override { return 1; }
  const std::vector<Value>& outputs() const { return outputs_; }

 private:
  KernelContext& outer_;
  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
};

bool same_contents(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.dtype() != b.dtype() || a.shape() != b.shape())
    return false;
  const size_t bytes = dtype_nbytes(a.dtype(), a.numel());
  return bytes == 0 || std::memcmp(a.raw_data(), b.raw_data(), bytes) == 0;
}

class HostComputedKernel final : public Kernel {
 public:
  explicit HostComputedKernel(const KernelInfo& info) {
    const ir::Node& n = info.node();
    data_free_ = n.op_type == "Shape" || n.op_type == "Size";
    if (data_free_) {
      // Any tensor that can live in device memory: not strings.
      const DType d = known_dtype(info, 0);
      if (d == DType::Undefined || d == DType::String)
        info.unsupported(std::string("input of dtype ") + dtype_name(d) + " (the OpenCL " +
                         n.op_type +
                         " takes any dtype but strings, known at "
                         "load time)");
    }
    if (n.op_type == "ConstantOfShape")
      if (const Tensor* v = info.attr_tensor("value"); v && v->dtype() == DType::String)
        info.unsupported("a string value (strings never live in device memory)");
    if (n.op_type == "Range" && known_dtype(info, 0) == DType::Undefined)
      info.unsupported("inputs of unknown dtype (the OpenCL Range takes any the CPU does)");
    for (const KernelDef* d : find_kernels("cpu", n.domain, n.op_type, n.opset))
      if (d->tier == KernelTier::Reference) {
        inner_ = d->make(info);
        break;
      }
    if (!inner_) info.unsupported("opset " + std::to_string(n.opset));
    ctx_ = Context::get();
  }
  std::string impl() const override { return "opencl:host"; }

  void run(KernelContext& kc) override {
    HostOutputsContext host(kc, data_free_);
    inner_->run(host);
    const std::vector<Value>& outs = host.outputs();
    cache_.resize(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!kc.wants_output(i)) continue;
      PI_CHECK(outs[i].is_tensor(), Internal, kc.node().label(), ": output ", i,
               " is not a tensor");
      const Tensor& t = outs[i].tensor();
      Cached& c = cache_[i];
      if (!same_contents(c.host, t)) {
        c.host = t;
        c.device = t.to(ctx_->device());
      }
      kc.set_output(i, Value(c.device));
    }
  }

 private:
  struct Cached {
    Tensor host;    // the last values
    Tensor device;  // and their device copy, handed out while they stay the same
  };
  bool data_free_ = false;
  std::unique_ptr<Kernel> inner_;
  std::vector<Cached> cache_;
  std::shared_ptr<Context> ctx_;
};

PI_REGISTER_KERNEL("opencl", "", Shape, 1, 28, HostComputedKernel);
PI_REGISTER_KERNEL("opencl", "", Size, 1, 28, HostComputedKernel);
PI_REGISTER_KERNEL("opencl", "", ConstantOfShape, 9, 28, HostComputedKernel);
PI_REGISTER_KERNEL("opencl", "", Range, 11, 28, HostComputedKernel);

}  // namespace
}  // namespace polyinfer::opencl
