#include "opt/optimize_model.h"

#include <algorithm>

#include "infer/infer.h"

namespace polyinfer::opt {
namespace {

// Type inference again (src/infer/), on the graph as the passes left it: folding makes new
// constants (a Reshape's target), from which more shapes follow.
class InferAgain final : public Pass {
 public:
  explicit InferAgain(const Model& m) : constants_(m.graph->initializers.size()) {}
  const char* name() const override { return "infer-types"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    if (g.initializers.size() == constants_ || !has_unknown_shapes(g)) return 0;
    constants_ = g.initializers.size();
    return infer::infer_types(g).inferred;
  }

 private:
  size_t constants_;  // initializers at the last run (at import before the first)
};

}  // namespace

bool has_unknown_shapes(const ir::Graph& g) {
  for (const auto& n : g.nodes)
    for (const auto& out : n.outputs) {
      if (out.empty()) continue;  // an omitted optional output
      const ir::TypeInfo* t = g.type_of(out);
      if (!t) return true;
      if (t->kind != ir::TypeInfo::Kind::Tensor) continue;  // sequences: inference's limit
      if (!t->has_shape) return true;
      for (size_t i = 0; i < t->dims.size(); ++i)
        if (t->dims[i] < 0 && (i >= t->dim_params.size() || t->dim_params[i].empty())) return true;
    }
  return false;
}

OptimizeReport optimize_model(Model& m, int level) {
  if (level < 1 || !has_unknown_shapes(*m.graph)) return optimize(*m.graph, level);
  return optimize(*m.graph, level, std::make_unique<InferAgain>(m));
}

}  // namespace polyinfer::opt
