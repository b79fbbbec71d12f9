#include "runtime/kernel_info.h"

#include <mutex>

#include "runtime/executor.h"
#include "runtime/shared_prepack.h"

namespace polyinfer {

namespace {

// The kernel's handle on its subgraph: the executor is shared with the node's CompiledSubgraph.
class SharedRunner final : public SubgraphRunner {
 public:
  explicit SharedRunner(std::shared_ptr<Executor> ex) : ex_(std::move(ex)) {}
  std::vector<Value> run(const std::vector<Value>& inputs,
                         const std::map<std::string, Value>& scope) override {
    return ex_->run(inputs, scope);
  }
  const ir::Graph& graph() const override { return ex_->graph(); }

 private:
  std::shared_ptr<Executor> ex_;
};

}  // namespace

GraphKernelInfo::GraphKernelInfo(const ir::Node& node, std::shared_ptr<const ir::Graph> graph,
                                 std::shared_ptr<const RuntimeContext> rt,
                                 std::shared_mutex* weights_mu, const OuterScope* outer,
                                 std::vector<CompiledSubgraph>* compiled)
    : node_(node),
      graph_(std::move(graph)),
      rt_(std::move(rt)),
      weights_mu_(weights_mu),
      outer_(outer),
      compiled_(compiled) {}

const Tensor* GraphKernelInfo::find_constant(const std::string& name) const {
  {
    std::shared_lock<std::shared_mutex> lock;
    if (weights_mu_) lock = std::shared_lock<std::shared_mutex>(*weights_mu_);
    auto it = graph_->initializers.find(name);
    if (it != graph_->initializers.end()) return &it->second;
  }
  if (outer_ && outer_->owner && outer_->reads.count(name))
    return outer_->owner->find_constant(name);
  return nullptr;
}

std::shared_ptr<const Tensor> GraphKernelInfo::shared_prepack(
    size_t i, const std::string& key, const std::function<Tensor()>& make) const {
  // The weight's identity: the graph that holds it (this one, or an enclosing one whose weight
  // a subgraph reads) and its name. Unlike the storage's address, it stays unique after the
  // original is released (runtime/weight_release.h).
  if (!has_input(i) || !rt_->prepacks) return KernelInfo::shared_prepack(i, key, make);
  const std::string& name = node_.inputs[i];
  const GraphKernelInfo* holder = this;
  while (holder) {
    {
      std::shared_lock<std::shared_mutex> lock;
      if (holder->weights_mu_) lock = std::shared_lock<std::shared_mutex>(*holder->weights_mu_);
      if (holder->graph_->initializers.count(name)) break;
    }
    const OuterScope* outer = holder->outer_;
    holder = outer && outer->owner && outer->reads.count(name) ? outer->owner : nullptr;
  }
  if (!holder) return KernelInfo::shared_prepack(i, key, make);
  return rt_->prepacks->get(holder->graph_.get(), name, key, make);
}

const ir::TypeInfo* GraphKernelInfo::find_type(const std::string& name) const {
  if (const ir::TypeInfo* t = graph_->type_of(name)) return t;
  if (outer_ && outer_->owner && outer_->reads.count(name)) return outer_->owner->find_type(name);
  return nullptr;
}

const Tensor* GraphKernelInfo::constant_input(size_t i) const {
  return has_input(i) ? find_constant(node_.inputs[i]) : nullptr;
}

const ir::TypeInfo* GraphKernelInfo::input_type(size_t i) const {
  return has_input(i) ? find_type(node_.inputs[i]) : nullptr;
}

const ir::TypeInfo* GraphKernelInfo::output_type(size_t i) const {
  return has_output(i) ? graph_->type_of(node_.outputs[i]) : nullptr;
}

std::unique_ptr<SubgraphRunner> GraphKernelInfo::subgraph(const std::string& attr) const {
  const ir::Attribute* a = node_.attr(attr);
  PI_CHECK(a && a->type == ir::Attribute::Type::Graph && a->g, InvalidModel, node_.label(),
           ": graph attribute '", attr, "' is missing");
  // The subgraph is owned by this node's attribute, which the outer graph keeps alive; the
  // aliasing constructor ties the subgraph's lifetime to the outer graph's.
  std::shared_ptr<const ir::Graph> sub(graph_, a->g.get());
  OuterScope scope;
  scope.owner = this;
  for (const auto& name : sub->free_values()) scope.reads.insert(name);
  std::shared_ptr<Executor> ex = compile_graph(sub, rt_, &scope);
  if (compiled_) compiled_->push_back({attr, ex});
  return std::make_unique<SharedRunner>(std::move(ex));
}

int GraphKernelInfo::threads() const { return rt_->threads; }
bool GraphKernelInfo::allow_tf32() const { return rt_->allow_tf32; }
const ProviderOptions& GraphKernelInfo::options() const { return rt_->options; }

}  // namespace polyinfer
