#include "opt/optimizer.h"

#include <algorithm>
#include <map>

#include "opt/channels_last.h"
#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {

std::vector<std::unique_ptr<Pass>> all_passes() {
  std::vector<std::unique_ptr<Pass>> p;
  // Cleanups first, so the patterns below see through Identity and folded shape arithmetic.
  p.push_back(make_identity_elimination());
  p.push_back(make_shape_folding());
  p.push_back(make_constant_folding());
  p.push_back(make_loop_invariant_motion());  // its moved nodes fold in the next round
  p.push_back(make_dead_node_elimination());
  p.push_back(make_transpose_cancellation());
  p.push_back(make_conv_bn_folding());
  p.push_back(make_conv_channel_affine_folding());
  p.push_back(make_pad_fusion());
  p.push_back(make_matmul_add_to_gemm());
  // Quantized products before the float fusions, which would otherwise take the Conv/MatMul
  // (and a Relu) out of their DequantizeLinear → product → QuantizeLinear pattern.
  p.push_back(make_qdq_unsigned());  // first: the integer kernels then see uint8 sources
  p.push_back(make_qdq_fusion());
  p.push_back(make_qconv_add_fusion());
  // Fusions: whole-pattern ones first (LayerNorm, GELU become single nodes), then bias and
  // residual inputs, then the activation that follows (it may be a GELU found just before).
  p.push_back(make_layer_norm_fusion());
  p.push_back(make_gelu_fusion());
  p.push_back(make_activation_decomposition_fusion());  // HardSwish, HardSigmoid, SiLU, Mish
  p.push_back(make_matmul_bias_fusion());
  p.push_back(make_conv_add_fusion());
  p.push_back(make_activation_fusion());
  p.push_back(make_attention_fusion());  // level 3: its fast kernel is the CPU's
  // Last: a normalization's decomposed pattern (its ReduceMean) is the fusions' to take first.
  p.push_back(make_reduce_mean_to_pool());
  return p;
}

std::vector<std::unique_ptr<Pass>> after_layout_passes() {
  std::vector<std::unique_ptr<Pass>> p;
  // The layout's border Transposes next to the model's own (tf2onnx's 1-D convolutions).
  p.push_back(make_transpose_cancellation());
  p.push_back(make_concat_affine_fusion());
  p.push_back(make_channel_shuffle_fusion());
  p.push_back(make_pointwise_depthwise_fusion());
  return p;
}

namespace {

int count_nodes(const ir::Graph& g) {
  int n = static_cast<int>(g.nodes.size());
  for (const auto& node : g.nodes)
    for (const auto& [key, a] : node.attrs) {
      if (a.g) n += count_nodes(*a.g);
      for (const auto& sg : a.graphs)
        if (sg) n += count_nodes(*sg);
    }
  return n;
}

bool uses_poly_domain(const ir::Graph& g) {
  for (const auto& n : g.nodes) {
    if (n.domain == kPolyDomain) return true;
    for (const auto& [key, a] : n.attrs) {
      if (a.g && uses_poly_domain(*a.g)) return true;
      for (const auto& sg : a.graphs)
        if (sg && uses_poly_domain(*sg)) return true;
    }
  }
  return false;
}

// Rewrites per pass name, added up over a graph and its subgraphs.
using Counts = std::map<std::string, int>;

// Runs every pass in rounds until none changes `g` (at most 10).
// Each round runs every pass once; a rewrite can enable another pass's pattern (folding a Shape
// makes a Reshape's shape constant, a Conv+Add fusion lets the Relu after it fuse), so rounds
// repeat until nothing changes. The cap only guards against a pass pair that undoes each other's
// work, which would be a bug.
// A pass is a function of the graph: one that found nothing needs no new run until another pass
// changes the graph, so the last round only reruns the passes a late change may have given work
// (about a tenth of the optimizer's time on DenseNet-121).
int run_rounds(ir::Graph& g, int level, std::vector<std::unique_ptr<Pass>>& passes,
               Counts& counts) {
  constexpr int kMaxRounds = 10;
  int rounds = 0, step = 0, changed_at = -1;
  std::vector<int> found_nothing_at(passes.size(), -1);
  bool changed = true;
  while (changed && rounds < kMaxRounds) {
    changed = false;
    ++rounds;
    for (size_t i = 0; i < passes.size(); ++i, ++step) {
      if (passes[i]->min_level() > level || found_nothing_at[i] > changed_at) continue;
      const int n = passes[i]->run(g);
      counts[passes[i]->name()] += n;
      if (n > 0) {
        changed = true;
        changed_at = step;
      } else {
        found_nothing_at[i] = step;
      }
    }
  }
  return rounds;
}

OptimizeReport optimize_graph(ir::Graph& g, int level, std::unique_ptr<Pass> after_cleanups,
                              const Scope* scope, Counts& counts);

// Optimizes every subgraph of g's nodes (If/Loop/Scan bodies), each in g's scope, then sets each
// node's implicit inputs to what its bodies read now. True when some node reads fewer values of
// g than before (g's own passes may then find nodes dead).
bool optimize_bodies(ir::Graph& g, int level, const Scope* scope, Counts& counts) {
  bool fewer = false;
  for (auto& n : g.nodes) {
    bool has_body = false;
    for (auto& [key, a] : n.attrs) {
      std::vector<ir::Graph*> bodies;
      if (a.g) bodies.push_back(a.g.get());
      for (auto& sg : a.graphs)
        if (sg) bodies.push_back(sg.get());
      for (ir::Graph* body : bodies) {
        has_body = true;
        const Scope inner = make_scope(g, scope, *body);
        optimize_graph(*body, level, nullptr, &inner, counts);
      }
    }
    if (!has_body) continue;
    std::vector<std::string> reads = subgraph_reads(n);
    fewer = fewer || reads.size() < n.implicit_inputs.size();
    n.implicit_inputs = std::move(reads);
  }
  return fewer;
}

// optimize() on one graph: `scope` says where it sits when it is a body (nullptr at the top).
OptimizeReport optimize_graph(ir::Graph& g, int level, std::unique_ptr<Pass> after_cleanups,
                              const Scope* scope, Counts& counts) {
  const ScopeGuard guard(scope);
  OptimizeReport r;
  r.level = level;
  auto passes = all_passes();
  if (after_cleanups) {
    auto at = passes.begin();
    while (at != passes.end() && std::string((*at)->name()) != "dead-nodes") ++at;
    PI_CHECK(at != passes.end(), Internal, "optimize: no dead-nodes pass to follow");
    passes.insert(at + 1, std::move(after_cleanups));
  }
  r.rounds = run_rounds(g, level, passes, counts);
  // Bodies after their enclosing graph has settled: its folded constants are theirs to read.
  // A body that reads fewer of its values than before may have left some of them dead.
  if (optimize_bodies(g, level, scope, counts)) r.rounds += run_rounds(g, level, passes, counts);
  // Layout last, once the fusions have settled: it rewrites the fused convolutions into their
  // channels-last forms, which no fusion pattern matches.
  const bool layout = level >= 3 && to_channels_last(g);
  counts["channels-last"] += layout ? 1 : 0;
  // Then the passes that match the layout's operators.
  for (auto& p : after_layout_passes())
    if (p->min_level() <= level) counts[p->name()] += layout ? p->run(g) : 0;
  prune_unused(g);
  // Passes keep the order themselves (tests check each); sorting here would only hide a bug.
  PI_CHECK(is_topological(g), Internal, "the optimizer left graph '", g.name,
           "' out of topological order (a pass bug; run with optimization level 0)");
  return r;
}

}  // namespace

OptimizeReport optimize(ir::Graph& g, int level, std::unique_ptr<Pass> after_cleanups) {
  PI_CHECK(level >= 0 && level <= 3, InvalidArgument, "optimization level must be 0..3, got ",
           level);
  OptimizeReport r;
  r.level = level;
  r.nodes_before = count_nodes(g);
  if (level > 0) {
    // Names first, for the report's order, before the graph's passes (and its bodies') count.
    std::vector<std::string> order;
    for (const auto& p : all_passes())
      if (p->min_level() <= level) order.push_back(p->name());
    if (after_cleanups)
      order.insert(std::find(order.begin(), order.end(), "dead-nodes") + 1, after_cleanups->name());
    if (level >= 3) order.push_back("channels-last");
    for (const auto& p : after_layout_passes())  // one row per name: the counts add up
      if (p->min_level() <= level &&
          std::find(order.begin(), order.end(), p->name()) == order.end())
        order.push_back(p->name());
    Counts counts;
    const int rounds = optimize_graph(g, level, std::move(after_cleanups), nullptr, counts).rounds;
    r.rounds = rounds;
    for (const auto& name : order) r.rewrites.push_back({name, counts[name]});
  }
  r.nodes_after = count_nodes(g);
  r.polyinfer_only = uses_poly_domain(g);
  // Passes declare the domain when they emit an operator of it; one removed again leaves no need.
  // A body's operators count for the model: the top level declares the model's opsets.
  if (r.polyinfer_only) use_poly_domain(g);
  else
    g.opsets.erase(kPolyDomain);
  return r;
}

std::string OptimizeReport::summary() const {
  std::string s = std::to_string(nodes_before) + " -> " + std::to_string(nodes_after) + " nodes";
  std::string parts;
  for (const auto& [name, n] : rewrites)
    if (n > 0) parts += (parts.empty() ? "" : ", ") + name + " " + std::to_string(n);
  s += " (" + (parts.empty() ? std::string("no rewrites") : parts) + ")";
  return s;
}

}  // namespace polyinfer::opt
