// ai.polyinfer NhwcPointwiseDepthwiseConv(X, W1, [B1], W2, [B2]) in its split form: the two
// NhwcFusedConv nodes the optimizer fused (opt/pointwise_depthwise_fusion.cpp), each on its own
// kernel, with the expanded tensor between them:
//   T = NhwcFusedConv(X, W1, B1; activation = pointwise_activation)     (1x1)
//   Y = NhwcFusedConv(T, W2, B2; the node's window attributes, group, activation)
// Registered twice: at the reference tier the parts run on the reference kernels (the oracle for
// the fused AVX2 kernel in fast/conv_pointwise_depthwise.cpp), at the fast tier on the best
// kernel the CPU provider has for each part (oneDNN's), for CPUs the fused kernel declines.
#include <memory>

#include "providers/cpu/choice.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

// The part's view of the fused node: input i of the part is input map[i] of the fused node
// (-1: the expanded tensor, which is no input of the fused node).
class PartInfo final : public KernelInfo {
 public:
  PartInfo(const KernelInfo& outer, const ir::Node& part, std::vector<int> map, bool last)
      : outer_(outer), part_(part), map_(std::move(map)), last_(last) {}
  const ir::Node& node() const override { return part_; }
  const Tensor* constant_input(size_t i) const override {
    return i < map_.size() && map_[i] >= 0 ? outer_.constant_input(size_t(map_[i])) : nullptr;
  }
  const ir::TypeInfo* input_type(size_t i) const override {
    return i < map_.size() && map_[i] >= 0 ? outer_.input_type(size_t(map_[i])) : nullptr;
  }
  const ir::TypeInfo* output_type(size_t i) const override {
    return last_ ? outer_.output_type(i) : nullptr;
  }
  std::unique_ptr<SubgraphRunner> subgraph(const std::string& attr) const override {
    return outer_.subgraph(attr);
  }
  int threads() const override { return outer_.threads(); }
  const ProviderOptions& options() const override { return outer_.options(); }

 private:
  const KernelInfo& outer_;
  const ir::Node& part_;
  std::vector<int> map_;
  bool last_;
};

// The part's run: its inputs given; its output either the fused node's (the last part) or a
// tensor of its own.
class PartContext final : public KernelContext {
 public:
  // `out`: the first part's output, kept by the kernel between runs.
  PartContext(KernelContext& outer, const ir::Node& part, std::vector<Value> values, bool last,
              Tensor& out)
      : outer_(outer), part_(part), values_(std::move(values)), last_(last), out_(out) {}
  const ir::Node& node() const override { return part_; }
  const Value& value(size_t i) const override { return i < values_.size() ? values_[i] : none_; }
  Tensor& output(size_t i, DType dtype, const Shape& shape) override {
    if (last_) return outer_.output(i, dtype, shape);
    PI_CHECK(i == 0, Internal, "a convolution has one output");
    // Kept from the last run when it fits (one run at a time per session): the expanded
    // tensor is megabytes, which a fresh allocation would fault in on every run.
    if (!out_.defined() || out_.dtype() != dtype || out_.shape() != shape)
      out_ = Tensor::empty(dtype, shape);
    return out_;
  }
  void set_output(size_t i, Value v) override {
    if (last_) return outer_.set_output(i, std::move(v));
    PI_CHECK(i == 0 && v.is_tensor(), Internal, "a convolution has one tensor output");
    out_ = v.tensor();
  }
  const std::map<std::string, Value>& scope() const override { return outer_.scope(); }
  int threads() const override { return outer_.threads(); }

 private:
  KernelContext& outer_;
  const ir::Node& part_;
  std::vector<Value> values_;
  Value none_;
  bool last_;
  Tensor& out_;
};

// The NhwcFusedConv kernel up to `tier` that takes the part, chosen as the provider chooses one
// for such a node (its choice table, providers/cpu/choice.h).
std::unique_ptr<Kernel> part_kernel(const PartInfo& info, KernelTier tier) {
  std::vector<const KernelDef*> defs;
  for (const KernelDef* d : find_kernels("cpu", "ai.polyinfer", "NhwcFusedConv", 1))
    if (d->tier <= tier) defs.push_back(d);
  PI_CHECK(!defs.empty(), Internal, info.node().label(), ": no NhwcFusedConv kernel");
  return choose_kernel(defs, info);
}

template <KernelTier Tier> class SplitPointwiseDepthwise final : public Kernel {
 public:
  explicit SplitPointwiseDepthwise(const KernelInfo& info) {
    const ir::Node& n = info.node();
    PI_CHECK(n.inputs.size() >= 4, InvalidModel, n.label(), ": takes X, W1, [B1], W2, [B2], got ",
             n.inputs.size(), " inputs");
    // The 1x1 part: no window attributes (a 1x1 stride-1 convolution), its own activation.
    pointwise_ = std::make_unique<ir::Node>();
    pointwise_->name = n.name + "/pointwise";
    pointwise_->op_type = "NhwcFusedConv";
    pointwise_->domain = n.domain;
    pointwise_->opset = 1;
    pointwise_->inputs = {n.inputs[0], n.inputs[1], n.inputs[2]};
    pointwise_->outputs = {n.name + "/expanded"};
    if (const ir::Attribute* a = n.attr("pointwise_activation"))
      pointwise_->attrs["activation"] = *a;
    if (const ir::Attribute* a = n.attr("pointwise_activation_params"))
      pointwise_->attrs["activation_params"] = *a;
    // The depthwise part: every other attribute.
    depthwise_ = std::make_unique<ir::Node>(n);
    depthwise_->name = n.name + "/depthwise";
    depthwise_->op_type = "NhwcFusedConv";
    depthwise_->inputs = {pointwise_->outputs[0], n.inputs[3],
                          n.inputs.size() > 4 ? n.inputs[4] : std::string()};
    depthwise_->attrs.erase("pointwise_activation");
    depthwise_->attrs.erase("pointwise_activation_params");
    first_ = part_kernel(PartInfo(info, *pointwise_, {0, 1, 2}, false), Tier);
    second_ = part_kernel(PartInfo(info, *depthwise_, {-1, 3, 4}, true), Tier);
  }

  // An input a part prepacked is not read again (the executor may release it).
  bool prepacked(size_t i) const override {
    if (i == 1 || i == 2) return first_->prepacked(i);
    if (i == 3 || i == 4) return second_->prepacked(i - 2);
    return false;
  }
  std::string impl() const override { return first_->impl() + " + " + second_->impl(); }

  void run(KernelContext& ctx) override {
    PartContext a(ctx, *pointwise_, {ctx.value(0), ctx.value(1), ctx.value(2)}, false, expanded_);
    first_->run(a);
    PartContext b(ctx, *depthwise_, {Value(expanded_), ctx.value(3), ctx.value(4)}, true,
                  expanded_);
    second_->run(b);
  }

 private:
  std::unique_ptr<ir::Node> pointwise_, depthwise_;
  std::unique_ptr<Kernel> first_, second_;
  Tensor expanded_;
};

using SplitReference = SplitPointwiseDepthwise<KernelTier::Reference>;
using SplitFast = SplitPointwiseDepthwise<KernelTier::Fast>;

}  // namespace

PI_CPU_INTERNAL_KERNEL(NhwcPointwiseDepthwiseConv, 1, 1, SplitReference);
PI_CPU_CANDIDATE("ai.polyinfer", NhwcPointwiseDepthwiseConv, 1, 1, "pointwise_then_depthwise",
                 SplitFast);

}  // namespace polyinfer::cpu
