// Concat along the channels + ChannelAffine → ConcatChannelAffine: DenseNet's dense layers
// concatenate every earlier feature map and normalize the result (BatchNormalization → ReLU, a
// ChannelAffine on the channels-last path) before their convolution. The concatenation is read
// by nothing else, so one pass that reads each input once and writes the normalized channels
// replaces a pass that writes the concatenation and a second that reads it back (DenseNet-121:
// 62 of each, ~36 MB each per run).
//
// Level 3, after the channels-last pass (ChannelAffine exists only from there): a Concat of the
// last axis (axis -1, or 3 on rank-4 values), read by the ChannelAffine alone, not a graph
// output nor read by a subgraph.
#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class ConcatAffineFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-concat-affine"; }
  int min_level() const override { return 3; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"ChannelAffine"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& affine = g.nodes[i];
      if (affine.domain != kPolyDomain || affine.op_type != "ChannelAffine" ||
          affine.inputs.size() != 3 || affine.outputs.size() != 1)
        continue;
      const std::string& x = affine.inputs[0];
      const int ci = u.producer(x);
      if (ci < 0 || dead[ci] || !u.single_reader(x)) continue;
      const ir::Node& concat = g.nodes[ci];
      if (!last_axis_concat(g, concat)) continue;
      std::vector<std::string> inputs = {affine.inputs[1], affine.inputs[2]};
      inputs.insert(inputs.end(), concat.inputs.begin(), concat.inputs.end());
      affine.op_type = "ConcatChannelAffine";
      affine.inputs = std::move(inputs);
      // The concatenation's value is gone; its type entry goes with it (prune_unused).
      dead[ci] = true;
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  static bool last_axis_concat(const ir::Graph& g, const ir::Node& n) {
    if (n.op_type != "Concat" || !n.domain.empty() || n.outputs.size() != 1 || n.inputs.empty())
      return false;
    for (const auto& in : n.inputs)
      if (in.empty()) return false;
    const ir::Attribute* a = n.attr("axis");
    if (!a || a->type != ir::Attribute::Type::Int) return false;
    if (a->i == -1) return true;
    int rank = known_rank(g, n.outputs[0]);
    if (rank < 0) rank = known_rank(g, n.inputs[0]);  // Concat's inputs share the output's rank
    return rank > 0 && a->i == rank - 1;
  }
};

}  // namespace

std::unique_ptr<Pass> make_concat_affine_fusion() { return std::make_unique<ConcatAffineFusion>(); }

}  // namespace polyinfer::opt
