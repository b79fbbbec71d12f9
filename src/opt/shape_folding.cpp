// Shape-subgraph folding: Shape (and Size) of a value whose shape is fully known at load time is
// a constant. Exporters compute reshape targets as Shape → Gather → Unsqueeze → Concat chains;
// once the Shape is an initializer, constant folding finishes the chain and the Reshape gets a
// constant target. Values with symbolic dimensions (a dynamic batch) are left alone.
#include <algorithm>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class ShapeFolding final : public Pass {
 public:
  const char* name() const override { return "shape-folding"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Shape", "Size"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& n = g.nodes[i];
      if (!n.domain.empty() || (n.op_type != "Shape" && n.op_type != "Size") ||
          n.inputs.size() != 1 || n.outputs.size() != 1 || u.is_graph_output(n.outputs[0]))
        continue;
      const auto shape = static_shape(g, n.inputs[0]);
      if (!shape) continue;
      Tensor t;
      if (n.op_type == "Size") {
        int64_t numel = 0;
        try {
          numel = shape_numel(*shape);  // checked: a malformed declared shape may overflow
        } catch (const Error&) {
          continue;
        }
        t = Tensor::scalar<int64_t>(numel);
      } else {
        // Opset 15 slices the shape with start/end (negative counts from the back, clamped).
        const int64_t r = static_cast<int64_t>(shape->size());
        auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
        const int64_t start = n.opset >= 15 ? clamp(attr_int(n, "start", 0)) : 0;
        const int64_t end = n.opset >= 15 ? clamp(attr_int(n, "end", r)) : r;
        std::vector<int64_t> dims;
        for (int64_t d = start; d < end; ++d) dims.push_back((*shape)[d]);
        t = Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims);
      }
      g.initializers[n.outputs[0]] = t;
      g.value_types.erase(n.outputs[0]);
      dead[i] = true;
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }
};

}  // namespace

std::unique_ptr<Pass> make_shape_folding() { return std::make_unique<ShapeFolding>(); }

}  // namespace polyinfer::opt
