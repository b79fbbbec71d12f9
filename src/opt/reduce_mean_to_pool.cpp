// ReduceMean over every spatial axis → GlobalAveragePool: the same mean, as the operator the
// layout and the kernels know. torch exports `x.mean([2, 3])` (MNASNet's head, timm's models)
// as ReduceMean, which the channels-last layout cannot convert: the whole last feature map went
// back to NCHW through a Transpose first (MNASNet-1.0's 7x7x1280).
//
//   y = ReduceMean(x, axes = {2, 3}, keepdims = 1)   →  y = GlobalAveragePool(x)
//   y = ReduceMean(x, axes = {2, 3}, keepdims = 0)   →  y = Flatten(GlobalAveragePool(x))
//
// for float x of rank 4 (images: the layout's domain; in a rank-3 [B, S, D] tensor the same
// axes are a transformer's hidden dim, a LayerNorm's mean), axes as an attribute (before opset
// 18) or a constant input. Flatten at axis 1 turns [N, C, 1, 1] into [N, C], which is
// ReduceMean's output without the kept axes. The optimizer runs it after the fusions, so a
// normalization's decomposed pattern is theirs first.
#include <algorithm>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

// The node's reduced axes, normalized to [0, rank) and sorted, when they are known at load
// time; empty when not (or when absent: all axes, or none under noop_with_empty_axes).
std::vector<int64_t> reduced_axes(const ir::Graph& g, const ir::Node& n, int rank) {
  std::vector<int64_t> axes;
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    const Tensor* t = constant(g, n.inputs[1]);
    if (!t) return {};
    for (double d : to_doubles(*t)) axes.push_back(static_cast<int64_t>(d));
  } else {
    axes = attr_ints(n, "axes");
  }
  for (auto& a : axes) {
    if (a < -rank || a >= rank) return {};
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

class ReduceMeanToPool final : public Pass {
 public:
  const char* name() const override { return "reduce-mean-to-pool"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"ReduceMean"})) return 0;
    NameGen names(g);
    std::vector<ir::Node> out;
    out.reserve(g.nodes.size());
    int count = 0;
    for (auto& n : g.nodes) {
      if (!matches(g, n)) {
        out.push_back(std::move(n));
        continue;
      }
      const bool keep = attr_int(n, "keepdims", 1) != 0;
      ir::Node pool;
      pool.op_type = "GlobalAveragePool";
      pool.name = n.name;
      pool.opset = n.opset;
      pool.inputs = {n.inputs[0]};
      if (keep) {
        pool.outputs = {n.outputs[0]};
        out.push_back(std::move(pool));
      } else {
        const std::string pooled = names.fresh(n.outputs[0] + "_pooled");
        pool.outputs = {pooled};
        if (const ir::TypeInfo* t = g.type_of(n.inputs[0])) {
          ir::TypeInfo pt = *t;
          for (size_t i = 2; i < pt.dims.size(); ++i) {
            pt.dims[i] = 1;
            if (i < pt.dim_params.size()) pt.dim_params[i].clear();
          }
          g.value_types[pooled] = pt;
        }
        ir::Node flat;
        flat.op_type = "Flatten";
        flat.name = names.fresh(n.name + "_flatten");
        flat.opset = n.opset;
        flat.inputs = {pooled};
        flat.outputs = {n.outputs[0]};
        flat.attrs["axis"] = make_int(1);
        out.push_back(std::move(pool));
        out.push_back(std::move(flat));
      }
      ++count;
    }
    g.nodes = std::move(out);
    return count;
  }

 private:
  static bool matches(const ir::Graph& g, const ir::Node& n) {
    if (n.op_type != "ReduceMean" || !n.domain.empty() || n.inputs.empty() ||
        n.outputs.size() != 1 || has_subgraph(n))
      return false;
    const DType t = elem_type(g, n.inputs[0]);
    if (t != DType::Float32 && t != DType::Float16 && t != DType::BFloat16 && t != DType::Float64)
      return false;
    return known_rank(g, n.inputs[0]) == 4 && reduced_axes(g, n, 4) == std::vector<int64_t>{2, 3};
  }
};

}  // namespace

std::unique_ptr<Pass> make_reduce_mean_to_pool() { return std::make_unique<ReduceMeanToPool>(); }

}  // namespace polyinfer::opt
