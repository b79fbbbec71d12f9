#include "opt/optimize_model.h"

#include <algorithm>

namespace polyinfer::opt {
namespace {

// ONNX shape inference on the model as the passes left it. It can only learn something when
// folding has made new constants since its last try, and tries twice at most: a graph whose
// unknown shapes inference cannot settle (shape arithmetic on a dynamic input) then costs two
// inferences, not one per round.
class InferShapesAgain final : public Pass {
 public:
  explicit InferShapesAgain(Model& m) : m_(m), constants_(m.graph->initializers.size()) {}
  const char* name() const override { return "infer-shapes-again"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    if (tries_ == 2 || g.initializers.size() == constants_ || !has_unknown_shapes(g)) return 0;
    ++tries_;
    constants_ = g.initializers.size();
    return std::max(0, infer_shapes_again(m_));
  }

 private:
  Model& m_;
  size_t constants_;  // initializers at the last try (at import before the first)
  int tries_ = 0;
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
  return optimize(*m.graph, level, std::make_unique<InferShapesAgain>(m));
}

}  // namespace polyinfer::opt
