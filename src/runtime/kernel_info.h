// The KernelInfo a session's providers see for a node of a graph: its constants (guarded
// against their release, runtime/weight_release.h), static types, subgraphs and the session's
// threads and options.
#pragma once

#include <memory>
#include <shared_mutex>

#include "runtime/kernel.h"

namespace polyinfer {

struct RuntimeContext;

class GraphKernelInfo final : public KernelInfo {
 public:
  // `weights_mu`, when given, is held shared while a constant is looked up: an initializer may
  // be erased from `graph` meanwhile (a found weight stays: it is released only once all its
  // readers exist).
  GraphKernelInfo(const ir::Node& node, std::shared_ptr<const ir::Graph> graph,
                  std::shared_ptr<const RuntimeContext> rt,
                  std::shared_mutex* weights_mu = nullptr);

  const ir::Node& node() const override { return node_; }
  const Tensor* constant_input(size_t i) const override;
  const ir::TypeInfo* input_type(size_t i) const override;
  const ir::TypeInfo* output_type(size_t i) const override;
  // Partitions the subgraph on the same providers and plans its execution.
  std::unique_ptr<SubgraphRunner> subgraph(const std::string& attr) const override;
  int threads() const override;
  bool allow_tf32() const override;
  const ProviderOptions& options() const override;

 private:
  const ir::Node& node_;
  std::shared_ptr<const ir::Graph> graph_;
  std::shared_ptr<const RuntimeContext> rt_;
  std::shared_mutex* weights_mu_;
};

}  // namespace polyinfer
