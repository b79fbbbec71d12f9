#include "runtime/kernel_info.h"

#include <mutex>

#include "runtime/executor.h"

namespace polyinfer {

GraphKernelInfo::GraphKernelInfo(const ir::Node& node, std::shared_ptr<const ir::Graph> graph,
                                 std::shared_ptr<const RuntimeContext> rt,
                                 std::shared_mutex* weights_mu)
    : node_(node), graph_(std::move(graph)), rt_(std::move(rt)), weights_mu_(weights_mu) {}

const Tensor* GraphKernelInfo::constant_input(size_t i) const {
  if (!has_input(i)) return nullptr;
  std::shared_lock<std::shared_mutex> lock;
  if (weights_mu_) lock = std::shared_lock<std::shared_mutex>(*weights_mu_);
  auto it = graph_->initializers.find(node_.inputs[i]);
  return it == graph_->initializers.end() ? nullptr : &it->second;
}

const ir::TypeInfo* GraphKernelInfo::input_type(size_t i) const {
  return has_input(i) ? graph_->type_of(node_.inputs[i]) : nullptr;
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
  return compile_graph(sub, rt_);
}

int GraphKernelInfo::threads() const { return rt_->threads; }
bool GraphKernelInfo::allow_tf32() const { return rt_->allow_tf32; }
const ProviderOptions& GraphKernelInfo::options() const { return rt_->options; }

}  // namespace polyinfer
