// Dead-node elimination: nodes none of whose outputs reach a graph output (directly or through
// other nodes, or through a subgraph's outer-scope read) are removed. Other rewrites leave such
// nodes behind (a folded Shape's input chain, a BatchNormalization's unread outputs).
#include <set>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class DeadNodeElimination final : public Pass {
 public:
  const char* name() const override { return "dead-nodes"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    std::set<std::string> needed;
    for (const auto& v : g.outputs) needed.insert(v.name);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t k = g.nodes.size(); k-- > 0;) {
      const ir::Node& n = g.nodes[k];
      bool live = n.outputs.empty();  // a node without outputs is kept, whatever it is for
      for (const auto& o : n.outputs) live = live || (!o.empty() && needed.count(o));
      if (!live) {
        dead[k] = true;
        ++count;
        continue;
      }
      needed.insert(n.inputs.begin(), n.inputs.end());
      needed.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }
};

}  // namespace

std::unique_ptr<Pass> make_dead_node_elimination() {
  return std::make_unique<DeadNodeElimination>();
}

}  // namespace polyinfer::opt
