// Reshape, Flatten, Squeeze, Unsqueeze and Identity of float32 tensors on Vulkan: no dispatch,
// the output is a view of the input's device memory with another shape. The shape arithmetic is
// the CPU reference kernel's, which this kernel creates and runs (its only effect is
// set_output(x.reshaped(...)), which works on any device), so both agree on every rule
// (0 and -1 in Reshape, allowzero, negative axes).
//
// A shape or axes input that is a constant is kept on the host, reported prepacked, and handed to
// the CPU kernel in place of the executor's value: otherwise it would be copied to the device
// every run and read back, which waits for all recorded work. One computed at run time is still
// read that way (read_int_list copies it to the host).
#include "providers/vulkan/ops/common.h"

namespace polyinfer::vulkan {
namespace {

// The executor's context with the constant inputs replaced by host copies.
class HostConstantsContext final : public KernelContext {
 public:
  HostConstantsContext(KernelContext& outer, const std::vector<Value>& constants)
      : outer_(outer), constants_(constants) {}
  const ir::Node& node() const override { return outer_.node(); }
  const Value& value(size_t i) const override {
    return i < constants_.size() && !constants_[i].is_none() ? constants_[i] : outer_.value(i);
  }
  Tensor& output(size_t i, DType dtype, const Shape& shape) override {
    return outer_.output(i, dtype, shape);
  }
  void set_output(size_t i, Value value) override { outer_.set_output(i, std::move(value)); }
  const std::map<std::string, Value>& scope() const override { return outer_.scope(); }
  int threads() const override { return outer_.threads(); }

 private:
  KernelContext& outer_;
  const std::vector<Value>& constants_;
};

class ViewKernel final : public Kernel {
 public:
  explicit ViewKernel(const KernelInfo& info) {
    // The data input only: shapes and axes are int64 and stay where they are.
    require_float32(info, kMaxRank, 1);
    const ir::Node& n = info.node();
    for (const KernelDef* d : find_kernels("cpu", n.domain, n.op_type, n.opset))
      if (d->tier == KernelTier::Reference) {
        inner_ = d->make(info);
        break;
      }
    if (!inner_) info.unsupported("opset " + std::to_string(n.opset));
    for (size_t i = 1; i < info.num_inputs(); ++i)
      if (const Tensor* c = info.constant_input(i)) {
        constants_.resize(i + 1);
        constants_[i] = Value(c->clone());
      }
  }
  std::string impl() const override { return "vulkan:view"; }
  bool prepacked(size_t i) const override {
    return i > 0 && i < constants_.size() && !constants_[i].is_none();
  }

  void run(KernelContext& kc) override {
    check_input(kc, kc.input(0));
    HostConstantsContext ctx(kc, constants_);
    inner_->run(ctx);
  }

 private:
  std::unique_ptr<Kernel> inner_;
  std::vector<Value> constants_;  // by input index; None where the input is not constant
};

PI_REGISTER_KERNEL("vulkan", "", Reshape, 1, 23, ViewKernel);
PI_REGISTER_KERNEL("vulkan", "", Flatten, 1, 23, ViewKernel);
PI_REGISTER_KERNEL("vulkan", "", Squeeze, 1, 23, ViewKernel);
PI_REGISTER_KERNEL("vulkan", "", Unsqueeze, 1, 23, ViewKernel);
PI_REGISTER_KERNEL("vulkan", "", Identity, 1, 23, ViewKernel);

}  // namespace
}  // namespace polyinfer::vulkan
