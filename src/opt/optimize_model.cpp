#include "opt/optimize_model.h"

#include <algorithm>
#include <map>

namespace polyinfer::opt {

bool has_unknown_shapes(const ir::Graph& g) {
  for (const auto& n : g.nodes)
    for (const auto& out : n.outputs) {
      if (out.empty()) continue;  // an omitted optional output
      const ir::TypeInfo* t = g.type_of(out);
      if (!t) return true;
      if (t->kind != ir::TypeInfo::Kind::Tensor) continue;  // sequences: inference's limit
      if (!t->has_shape) return true;
      for (size_t i = 0; i < t->dims.size(); ++i)
        if (t->dims[i] < 0 && (i >= t->dim_params.size() || t->dim_params[i].empty()))
          return true;
    }
  return false;
}

OptimizeReport optimize_model(Model& m, int level) {
  if (level < 1 || !has_unknown_shapes(*m.graph)) return optimize(*m.graph, level);
  const OptimizeReport folding = optimize(*m.graph, 1);
  int completed = 0;
  bool folded = false;
  for (const auto& [pass, n] : folding.rewrites) folded = folded || n > 0;
  if (folded) completed = std::max(0, infer_shapes_again(m));
  OptimizeReport r = optimize(*m.graph, level);
  // One report for both: the level-1 passes' rewrites of the two runs added up.
  std::map<std::string, int> first(folding.rewrites.begin(), folding.rewrites.end());
  for (auto& [pass, n] : r.rewrites) {
    const auto it = first.find(pass);
    if (it != first.end()) n += it->second;
  }
  r.rewrites.push_back({"infer-shapes-again", completed});
  r.nodes_before = folding.nodes_before;
  r.rounds += folding.rounds;
  return r;
}

}  // namespace polyinfer::opt
