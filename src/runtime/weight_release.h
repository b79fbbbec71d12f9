// Weights held once: a session frees each original weight as soon as every node that reads it
// has copied it into its own form (Kernel::prepacked), before the next kernel makes its copy.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <shared_mutex>
#include <string>

#include "ir/graph.h"

namespace polyinfer {

struct PlacedNode;

class WeightRelease {
 public:
  // Frees one weight (the graph's owner erases the initializer). Called one at a time, with
  // mutex() held exclusively.
  using Release = std::function<void(const std::string&)>;

  // Counts the readers of each of `graph`'s initializers. A weight a subgraph or a graph output
  // reads is never released.
  WeightRelease(const ir::Graph& graph, Release release);

  // Kernel lookups of weights hold it shared while a release holds it exclusively: kernels are
  // created on several threads while weights are freed (runtime/partitioner.h).
  std::shared_mutex& mutex() { return mu_; }

  // The partitioner calls it for each created kernel, one at a time: the weights whose last
  // reader this was, and which every reader prepacked, are released.
  void placed(const PlacedNode& p);

  // Releases a weight that only device copies are read from (the executor's decision, once
  // every kernel exists), unless a subgraph or a graph output reads it; returns whether it was.
  bool release_unread(const std::string& name, const Shape& shape);

  // The weights released so far, with their shapes (FLOP estimates of later runs use them).
  const std::map<std::string, Shape>& released() const { return released_; }

 private:
  void release(const std::string& name, const Shape& shape);

  const ir::Graph& graph_;
  Release release_;
  std::shared_mutex mu_;
  std::map<std::string, int> pending_;  // readers not created yet
  std::set<std::string> needed_;        // read whole, or by a kernel that did not prepack it
  std::set<std::string> read_whole_;    // by a subgraph or as a graph output
  std::map<std::string, Shape> released_;
};

}  // namespace polyinfer
