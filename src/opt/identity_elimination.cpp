// Identity elimination: Identity, inference-mode Dropout and a Pad whose pads are all zero pass
// their input through, so their readers can read the input directly. (torch exports AvgPool2d
// behind a zero Pad: three in DenseNet-121, each a copy and, on the channels-last path, two
// Transposes around it.)
//
// y = Identity(x): readers of y read x instead. When y is a graph output (its name must stay),
// the node that produces x writes y directly, if x is an ordinary intermediate; otherwise (x is
// a graph input, an initializer or another output) the Identity stays. Values read by a
// subgraph keep their names (renaming would mean rewriting the body).
#include <map>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class IdentityElimination final : public Pass {
 public:
  const char* name() const override { return "identity"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Identity", "Dropout", "Pad"})) return 0;
    const Uses u(g);
    std::map<std::string, std::string> rename;
    auto resolve = [&](std::string v) {
      for (auto it = rename.find(v); it != rename.end(); it = rename.find(v)) v = it->second;
      return v;
    };
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& n = g.nodes[i];
      if (!passes_through(g, u, n)) continue;
      const std::string x = resolve(n.inputs[0]);
      const std::string& y = n.outputs[0];
      if (u.read_by_subgraph(y)) continue;
      if (!u.is_graph_output(y)) {
        rename[y] = x;
      } else {
        const int p = u.producer(x);
        if (p < 0 || dead[p] || u.is_graph_output(x) || u.read_by_subgraph(x)) continue;
        for (auto& o : g.nodes[p].outputs)
          if (o == x) o = y;
        rename[x] = y;
      }
      dead[i] = true;
      ++count;
    }
    if (count == 0) return 0;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!dead[i])
        for (auto& in : g.nodes[i].inputs)
          if (!in.empty()) in = resolve(in);
    erase_dead(g, dead);
    return count;
  }

 private:
  static bool passes_through(const ir::Graph& g, const Uses& u, const ir::Node& n) {
    if (!n.domain.empty() || n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty() ||
        n.outputs[0].empty())
      return false;
    if (n.op_type == "Identity") return n.inputs.size() == 1 && n.outputs.size() == 1;
    if (n.op_type == "Pad") return zero_pads(g, n);
    if (n.op_type != "Dropout") return false;
    // The mask output must be unread; from opset 12 training_mode must be absent or false
    // (before 12 polyinfer evaluates Dropout in inference mode, as every inference runtime).
    if (n.outputs.size() > 1 && !n.outputs[1].empty() && !u.unused(n.outputs[1])) return false;
    if (n.opset >= 12 && n.inputs.size() > 2 && !n.inputs[2].empty()) {
      const auto t = scalar_constant(g, n.inputs[2]);
      if (!t || *t != 0) return false;
    }
    return true;
  }

  // Every mode pads nothing when every pad is zero; the pads must be known now (an attribute
  // before opset 11, a constant input from 11; Pad-18's axes only select which pads are given).
  static bool zero_pads(const ir::Graph& g, const ir::Node& n) {
    if (n.outputs.size() != 1) return false;
    std::vector<double> pads;
    if (n.opset < 11) {
      if (!n.attrs.count("pads")) return false;
      for (int64_t v : attr_ints(n, "pads")) pads.push_back(static_cast<double>(v));
    } else {
      const Tensor* t = n.inputs.size() > 1 ? constant(g, n.inputs[1]) : nullptr;
      if (!t) return false;
      pads = to_doubles(*t);
    }
    for (double v : pads)
      if (v != 0) return false;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_identity_elimination() {
  return std::make_unique<IdentityElimination>();
}

}  // namespace polyinfer::opt
