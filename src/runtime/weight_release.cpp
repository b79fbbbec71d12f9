#include "runtime/weight_release.h"

#include <mutex>

#include "runtime/executor.h"

namespace polyinfer {

WeightRelease::WeightRelease(const ir::Graph& graph, Release release)
    : graph_(graph), release_(std::move(release)) {
  for (const auto& n : graph.nodes) {
    for (const auto& name : n.inputs)
      if (graph.initializers.count(name)) ++pending_[name];
    for (const auto& name : n.implicit_inputs) read_whole_.insert(name);
  }
  for (const auto& v : graph.outputs) read_whole_.insert(v.name);
  needed_ = read_whole_;
}

void WeightRelease::placed(const PlacedNode& p) {
  for (size_t k = 0; k < p.node->inputs.size(); ++k) {
    const std::string& name = p.node->inputs[k];
    auto it = pending_.find(name);
    if (it == pending_.end()) continue;
    if (!p.kernel->prepacked(k)) needed_.insert(name);
    if (--it->second > 0 || needed_.count(name)) continue;
    // Erasures happen only here and in release_unread, one at a time: reading the map needs
    // no lock against them.
    release(name, graph_.initializers.at(name).shape());
  }
}

bool WeightRelease::release_unread(const std::string& name, const Shape& shape) {
  if (read_whole_.count(name) || released_.count(name)) return false;
  release(name, shape);
  return true;
}

void WeightRelease::release(const std::string& name, const Shape& shape) {
  released_[name] = shape;
  if (!release_) return;
  std::unique_lock<std::shared_mutex> lock(mu_);
  release_(name);
}

}  // namespace polyinfer
