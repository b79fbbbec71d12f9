#include "plan/memory_sim.h"

#include <algorithm>
#include <map>
#include <set>

#include "runtime/arena_plan.h"

namespace polyinfer::plan {

namespace {

// Operators whose CPU kernels hand out their first input's buffer as their first output
// (ops/reshape.cpp, identity.cpp, dropout.cpp; Cast to the same type in cast.cpp).
bool is_view(const ir::Node& n, const ir::Graph& g) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  const std::string& op = n.op_type;
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "Identity" || op == "Dropout")
    return true;
  if (op == "Cast" && !n.inputs.empty()) {
    const ir::Attribute* to = n.attr("to");
    const ir::TypeInfo* t = g.type_of(n.inputs[0]);
    return to && t && static_cast<int64_t>(t->elem) == to->i;
  }
  return false;
}

struct Buffer {
  size_t bytes = 0;
  int producer = -1;
  int last_use = -1;
  bool escaped = false;
  bool pooled = true;  // false: a view of an initializer or a graph input (not the pool's)
};

}  // namespace

ActivationMemory simulate_activation_memory(const ir::Graph& g, const ElementBytes& element_bytes) {
  ActivationMemory r;
  std::vector<Buffer> buffers;
  std::map<std::string, int> buffer_of;  // value → its storage
  std::set<std::string> outside;         // graph inputs and initializers
  for (const auto& in : g.inputs) outside.insert(in.name);
  for (const auto& [name, t] : g.initializers) outside.insert(name);

  auto value_bytes = [&](const std::string& name) -> size_t {
    const ir::TypeInfo* t = g.type_of(name);
    if (!t || t->kind != ir::TypeInfo::Kind::Tensor || !t->has_shape) {
      r.unknown.push_back(name);
      return 0;
    }
    double n = 1;
    for (int64_t d : t->dims) {
      if (d < 0) {
        r.unknown.push_back(name);
        return 0;
      }
      n *= static_cast<double>(d);
    }
    const double e = element_bytes ? element_bytes(t->elem, false) : dtype_bits(t->elem) / 8.0;
    return static_cast<size_t>(n * e + 0.5);
  };

  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    const int idx = static_cast<int>(i);
    auto read = [&](const std::string& name) {
      if (auto it = buffer_of.find(name); it != buffer_of.end())
        buffers[it->second].last_use = std::max(buffers[it->second].last_use, idx);
    };
    for (const auto& name : n.inputs)
      if (!name.empty()) read(name);
    for (const auto& name : n.implicit_inputs) read(name);
    const bool view = is_view(n, g);
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const std::string& name = n.outputs[k];
      if (name.empty()) continue;
      if (view && k == 0 && !n.inputs.empty()) {
        const std::string& src = n.inputs[0];
        if (auto it = buffer_of.find(src); it != buffer_of.end()) {
          buffer_of[name] = it->second;
        } else {
          // A view of something the pool never allocated: it allocates nothing either.
          buffers.push_back({0, idx, idx, false, false});
          buffer_of[name] = static_cast<int>(buffers.size()) - 1;
        }
        continue;
      }
      buffers.push_back({value_bytes(name), idx, idx, false, true});
      buffer_of[name] = static_cast<int>(buffers.size()) - 1;
    }
  }
  for (const auto& out : g.outputs)
    if (auto it = buffer_of.find(out.name); it != buffer_of.end())
      buffers[it->second].escaped = true;

  // Replay the clock: at node i its outputs are allocated, then what node i read last is freed.
  std::vector<std::vector<int>> allocs(g.nodes.size()), frees(g.nodes.size());
  for (size_t b = 0; b < buffers.size(); ++b) {
    if (!buffers[b].pooled) continue;
    allocs[buffers[b].producer].push_back(static_cast<int>(b));
    if (!buffers[b].escaped) frees[buffers[b].last_use].push_back(static_cast<int>(b));
  }
  std::vector<Lifetime> lifetimes;
  std::vector<size_t> begin(buffers.size(), 0);
  size_t clock = 0, live = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int b : allocs[i]) {
      const size_t cls = size_class(buffers[b].bytes);
      begin[b] = clock++;
      ++r.buffers;
      r.total_bytes += cls;
      live += cls;
      if (buffers[b].escaped) r.output_bytes += buffers[b].bytes;
      r.peak_live_bytes = std::max(r.peak_live_bytes, live);
    }
    for (int b : frees[i]) {
      const size_t cls = size_class(buffers[b].bytes);
      live -= cls;
      lifetimes.push_back({cls, begin[b], clock++, 0});
    }
  }
  r.arena_bytes = plan_arena(lifetimes);
  std::sort(r.unknown.begin(), r.unknown.end());
  r.unknown.erase(std::unique(r.unknown.begin(), r.unknown.end()), r.unknown.end());
  return r;
}

}  // namespace polyinfer::plan
