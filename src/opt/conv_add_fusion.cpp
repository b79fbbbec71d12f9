// Conv + residual Add → FusedConv with Z: Y = Conv(X, W, B) + Z, the shortcut of a ResNet block
// (after it, the block's Relu fuses in as the activation: act(Conv + Z)). Needs the Conv output
// read by the Add alone, Z of the same known shape (numbers or the same named dimensions) so the
// Add does not broadcast, and float32. A FusedConv that already has Z or an activation is left.
#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class ConvAddFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-conv-add"; }
  int min_level() const override { return 2; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Add"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& add = g.nodes[i];
      if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2 ||
          add.outputs.size() != 1 || add.inputs[0] == add.inputs[1])
        continue;
      for (int side = 0; side < 2; ++side) {
        const std::string& c = add.inputs[side];
        const std::string& z = add.inputs[1 - side];
        const int ci = u.producer(c);
        if (ci < 0 || dead[ci] || !u.single_reader(c)) continue;
        const ir::Node& conv = g.nodes[ci];
        if (!fusable_conv(conv) || elem_type(g, c) != DType::Float32 ||
            elem_type(g, z) != DType::Float32 || !same_shape(g, c, z))
          continue;
        ir::Node fused = conv;
        if (conv.domain.empty()) {
          fused = poly_node(g, "FusedConv", conv.name);
          fused.inputs = conv.inputs;
          fused.attrs = conv.attrs;
        }
        fused.inputs.resize(3);  // X, W, B ("" when the Conv has none)
        fused.inputs.push_back(z);
        fused.outputs = add.outputs;
        dead[ci] = true;
        add = std::move(fused);
        ++count;
        break;
      }
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  static bool fusable_conv(const ir::Node& n) {
    if (n.outputs.size() != 1 || n.inputs.size() < 2) return false;
    if (n.domain.empty()) return n.op_type == "Conv" && n.inputs.size() <= 3;
    return n.domain == kPolyDomain && n.op_type == "FusedConv" &&
           (n.inputs.size() < 4 || n.inputs[3].empty()) && attr_string(n, "activation", "").empty();
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv_add_fusion() { return std::make_unique<ConvAddFusion>(); }

}  // namespace polyinfer::opt
