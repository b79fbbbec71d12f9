// Loop-invariant code motion: a node of a Loop body whose inputs are the same on every iteration
// computes the same outputs on every iteration, so it runs once, before the Loop, in the graph
// that holds the Loop.
//
// A body's invariant values are the values it reads from enclosing graphs, its initializers, and
// its loop-carried inputs that it returns unchanged (v_out is v_in: Paddle's exports carry every
// weight of a decoder's loop that way). Such a carried input is first made an outer read: the
// body reads the Loop's initial value by its outer name and the formal input gets a fresh name
// (still returned as it came, so the Loop's outputs are what they were). A weight carried that
// way is then a constant for the body's passes and kernels: Transposes of it fold, MatMuls
// prepack it. Then every body node whose inputs are all invariant (in body order, so a moved
// node's outputs count) moves to the enclosing graph, just before the Loop, its outputs under
// fresh names that the body reads from outside; a body initializer it reads is copied there too
// (the copy shares the tensor's storage).
//
// Nodes that stay: those with subgraphs, random operators (a new draw per iteration is their
// meaning), operators outside the default domain, and nodes whose outputs the body returns (a
// formal output keeps its name). A Loop whose trip count M is a constant <= 0 is left alone.
// Where M or cond is computed, a Loop that then runs zero times still runs the moved nodes once:
// their results go unread, and a node that fails on the initial values (which the first
// iteration would see) reports its error there instead of the Loop returning them unchanged.
//
// This pass rewrites the bodies of the graph's Loop nodes (the one pass that does: the others
// leave bodies to optimize(), which takes them after the enclosing graph's rounds have settled).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

// Renames reads of `from` to `to` in `g`: node inputs, the implicit inputs of nodes with
// subgraphs, and, recursively, those subgraphs' reads where they do not define `from`
// themselves. `g`'s own formal outputs are the caller's business.
void rename_reads(ir::Graph& g, const std::string& from, const std::string& to) {
  for (auto& n : g.nodes) {
    for (auto& in : n.inputs)
      if (in == from) in = to;
    bool reads = false;
    for (auto& in : n.implicit_inputs)
      if (in == from) {
        in = to;
        reads = true;
      }
    if (!reads) continue;
    for (auto& [key, a] : n.attrs) {
      std::vector<ir::Graph*> subs;
      if (a.g) subs.push_back(a.g.get());
      for (auto& sg : a.graphs)
        if (sg) subs.push_back(sg.get());
      for (ir::Graph* sub : subs) {
        const auto free = sub->free_values();
        if (std::find(free.begin(), free.end(), from) == free.end()) continue;
        rename_reads(*sub, from, to);
        for (auto& o : sub->outputs)
          if (o.name == from) o.name = to;  // a branch returning the outer value as it is
      }
    }
  }
}

// True when `g` or a graph nested in it defines `name` (a formal input, an initializer or a node
// output): a read of the outer `name` there would find that one instead.
bool defines(const ir::Graph& g, const std::string& name) {
  for (const auto& v : g.inputs)
    if (v.name == name) return true;
  if (g.initializers.count(name)) return true;
  for (const auto& n : g.nodes) {
    for (const auto& o : n.outputs)
      if (o == name) return true;
    for (const auto& [key, a] : n.attrs) {
      if (a.g && defines(*a.g, name)) return true;
      for (const auto& sg : a.graphs)
        if (sg && defines(*sg, name)) return true;
    }
  }
  return false;
}

bool movable_op(const ir::Node& n) {
  return (n.domain.empty() || n.domain == "ai.onnx") && !is_random_op(n) && !has_subgraph(n) &&
         !n.outputs.empty() && (!n.inputs.empty() || n.op_type == "Constant");
}

class LoopInvariantMotion final : public Pass {
 public:
  const char* name() const override { return "loop-invariants"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Loop"})) return 0;
    int count = 0;
    NameGen names(g);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& loop = g.nodes[i];
      if (loop.op_type != "Loop" || !(loop.domain.empty() || loop.domain == "ai.onnx")) continue;
      auto it = loop.attrs.find("body");
      if (it == loop.attrs.end() || !it->second.g) continue;
      if (!loop.inputs.empty() && !loop.inputs[0].empty())
        if (auto m = scalar_constant(g, loop.inputs[0]); m && *m <= 0) continue;
      ir::Graph& body = *it->second.g;
      int made = carried_to_outer_reads(loop, body, names);
      std::vector<ir::Node> moved = move_invariants(g, body, names);
      made += static_cast<int>(moved.size());
      if (made == 0) continue;
      loop.implicit_inputs = subgraph_reads(loop);
      count += made;
      // Before the Loop: everything a moved node reads is defined there (an input or implicit
      // input of the Loop, or an earlier moved node's output).
      g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(i), moved.begin(), moved.end());
      i += moved.size();
    }
    return count;
  }

 private:
  // Carried inputs the body returns unchanged → reads of the Loop's initial value. Returns how
  // many it rewrote.
  static int carried_to_outer_reads(const ir::Node& loop, ir::Graph& body, NameGen& names) {
    // Loop inputs (M, cond, v...) and body inputs (iter, cond, v...) line up; body outputs are
    // (cond, v..., scans...).
    const size_t carried = loop.inputs.size() >= 2 ? loop.inputs.size() - 2 : 0;
    if (body.inputs.size() != 2 + carried || body.outputs.size() < 1 + carried) return 0;
    int count = 0;
    for (size_t k = 0; k < carried; ++k) {
      const std::string b = body.inputs[2 + k].name;
      const std::string& init = loop.inputs[2 + k];
      if (init.empty() || body.outputs[1 + k].name != b) continue;
      // Returned elsewhere too (as another carried value or a scan output): it would need an
      // outer value as a formal output; leave it.
      int returned = 0;
      for (const auto& o : body.outputs) returned += o.name == b ? 1 : 0;
      if (returned != 1) continue;
      // Read by nothing: nothing to gain.
      bool read = false;
      for (const auto& n : body.nodes) {
        for (const auto& in : n.inputs) read = read || in == b;
        for (const auto& in : n.implicit_inputs) read = read || in == b;
      }
      if (!read) continue;
      const std::string fresh = names.fresh(b + ".carried");
      body.inputs[2 + k].name = fresh;
      // The body must not define the outer name itself (it would hide the outer value).
      if (defines(body, init)) {
        body.inputs[2 + k].name = b;  // b stays the carried input
        continue;
      }
      body.outputs[1 + k].name = fresh;
      if (auto vt = body.value_types.find(b); vt != body.value_types.end()) {
        body.value_types[fresh] = vt->second;
        body.value_types.erase(vt);
      }
      rename_reads(body, b, init);
      ++count;
    }
    return count;
  }

  // Moves the body's nodes whose inputs are all invariant out of it, in order; returns them
  // renamed for the enclosing graph `g`.
  static std::vector<ir::Node> move_invariants(ir::Graph& g, ir::Graph& body, NameGen& names) {
    std::unordered_set<std::string> variant;  // defined by the body per iteration
    for (const auto& v : body.inputs) variant.insert(v.name);
    for (const auto& n : body.nodes)
      for (const auto& o : n.outputs)
        if (!o.empty()) variant.insert(o);
    std::unordered_set<std::string> returned;
    for (const auto& o : body.outputs) returned.insert(o.name);

    std::vector<ir::Node> moved;
    std::vector<bool> gone(body.nodes.size(), false);
    std::unordered_map<std::string, std::string> outer_name;  // body output/initializer → g's
    for (size_t j = 0; j < body.nodes.size(); ++j) {
      const ir::Node& n = body.nodes[j];
      if (!movable_op(n)) continue;
      bool ok = true;
      for (const auto& in : n.inputs)
        ok = ok && (in.empty() || !variant.count(in) || outer_name.count(in));
      for (const auto& o : n.outputs) ok = ok && !returned.count(o);
      if (!ok) continue;
      ir::Node m = n;
      for (auto& in : m.inputs) {
        if (in.empty()) continue;
        if (auto f = outer_name.find(in); f != outer_name.end()) {
          in = f->second;
        } else if (auto t = body.initializers.find(in); t != body.initializers.end()) {
          const std::string name = names.fresh(in);
          g.initializers[name] = t->second;  // shares the storage
          outer_name[in] = name;
          in = name;
        }
      }
      for (auto& o : m.outputs) {
        if (o.empty()) continue;
        const std::string name = names.fresh(o);
        if (auto vt = body.value_types.find(o); vt != body.value_types.end()) {
          g.value_types[name] = vt->second;
          body.value_types.erase(vt);
        }
        outer_name[o] = name;
        o = name;
      }
      m.name = names.fresh(n.name);
      moved.push_back(std::move(m));
      gone[j] = true;
    }
    if (moved.empty()) return moved;
    erase_dead(body, gone);
    for (const auto& [from, to] : outer_name)
      if (!body.initializers.count(from)) rename_reads(body, from, to);
    return moved;
  }
};

}  // namespace

std::unique_ptr<Pass> make_loop_invariant_motion() {
  return std::make_unique<LoopInvariantMotion>();
}

}  // namespace polyinfer::opt
