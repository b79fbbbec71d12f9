// The KernelInfo a session's providers see for a node of a graph: its constants (guarded
// against their release, runtime/weight_release.h), static types, subgraphs and the session's
// threads and options.
#pragma once

#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace polyinfer {

struct RuntimeContext;

class Executor;
class GraphKernelInfo;

// A subgraph compiled for a node's kernel (KernelInfo::subgraph): the attribute it came from
// and its executor, shared with the kernel, so that profiling reaches its nodes.
struct CompiledSubgraph {
  std::string attr;
  std::shared_ptr<Executor> executor;
};

// Where a subgraph's nodes sit: the KernelInfo of the node whose kernel compiles it, alive while
// the subgraph's kernels are created, and the names the subgraph reads from enclosing graphs.
// A body node's constant input or type that its own graph lacks is looked up there: a weight of
// the enclosing graph is as constant inside the body (its kernel may prepack it).
struct OuterScope {
  const GraphKernelInfo* owner = nullptr;
  std::set<std::string> reads;  // the subgraph's free values (ir::Graph::free_values)
};

class GraphKernelInfo final : public KernelInfo {
 public:
  // `weights_mu`, when given, is held shared while a constant is looked up: an initializer may
  // be erased from `graph` meanwhile (a found weight stays: it is released only once all its
  // readers exist). `outer` is set for the nodes of a subgraph; `compiled`, when given,
  // receives each subgraph that subgraph() compiles.
  GraphKernelInfo(const ir::Node& node, std::shared_ptr<const ir::Graph> graph,
                  std::shared_ptr<const RuntimeContext> rt, std::shared_mutex* weights_mu = nullptr,
                  const OuterScope* outer = nullptr,
                  std::vector<CompiledSubgraph>* compiled = nullptr);

  const ir::Node& node() const override { return node_; }
  const Tensor* constant_input(size_t i) const override;
  const ir::TypeInfo* input_type(size_t i) const override;
  const ir::TypeInfo* output_type(size_t i) const override;
  // Partitions the subgraph on the same providers and plans its execution.
  std::unique_ptr<SubgraphRunner> subgraph(const std::string& attr) const override;
  int threads() const override;
  bool allow_tf32() const override;
  const ProviderOptions& options() const override;
  // Shared through the session's SharedPrepacks (runtime/shared_prepack.h), by the graph that
  // holds the weight and its name.
  std::shared_ptr<const Tensor> shared_prepack(size_t i, const std::string& key,
                                               const std::function<Tensor()>& make) const override;

  // The initializer `name` of this node's graph, or of an enclosing one where this graph reads
  // it from there; nullptr otherwise. The same for a value's type.
  const Tensor* find_constant(const std::string& name) const;
  const ir::TypeInfo* find_type(const std::string& name) const;

 private:
  const ir::Node& node_;
  std::shared_ptr<const ir::Graph> graph_;
  std::shared_ptr<const RuntimeContext> rt_;
  std::shared_mutex* weights_mu_;
  const OuterScope* outer_;
  std::vector<CompiledSubgraph>* compiled_;
};

}  // namespace polyinfer
