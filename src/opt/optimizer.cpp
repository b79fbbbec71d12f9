#include "opt/optimizer.h"

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
  p.push_back(make_dead_node_elimination());
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
  p.push_back(make_concat_affine_fusion());
  p.push_back(make_channel_shuffle_fusion());
  p.push_back(make_pointwise_depthwise_fusion());
  return p;
}

OptimizeReport optimize(ir::Graph& g, int level, std::unique_ptr<Pass> after_cleanups) {
  PI_CHECK(level >= 0 && level <= 3, InvalidArgument, "optimization level must be 0..3, got ",
           level);
  OptimizeReport r;
  r.level = level;
  r.nodes_before = static_cast<int>(g.nodes.size());
  if (level > 0) {
    auto passes = all_passes();
    if (after_cleanups) {
      auto at = passes.begin();
      while (at != passes.end() && std::string((*at)->name()) != "dead-nodes") ++at;
      PI_CHECK(at != passes.end(), Internal, "optimize: no dead-nodes pass to follow");
      passes.insert(at + 1, std::move(after_cleanups));
    }
    std::vector<int> counts(passes.size(), 0);
    // Each round runs every pass once; a rewrite can enable another pass's pattern (folding a
    // Shape makes a Reshape's shape constant, a Conv+Add fusion lets the Relu after it fuse), so
    // rounds repeat until nothing changes. The cap only guards against a pass pair that undoes
    // each other's work, which would be a bug.
    // A pass is a function of the graph: one that found nothing needs no new run until another
    // pass changes the graph, so the last round only reruns the passes a late change may have
    // given work (about a tenth of the optimizer's time on DenseNet-121).
    constexpr int kMaxRounds = 10;
    int step = 0, changed_at = -1;
    std::vector<int> found_nothing_at(passes.size(), -1);
    bool changed = true;
    while (changed && r.rounds < kMaxRounds) {
      changed = false;
      ++r.rounds;
      for (size_t i = 0; i < passes.size(); ++i, ++step) {
        if (passes[i]->min_level() > level || found_nothing_at[i] > changed_at) continue;
        const int n = passes[i]->run(g);
        counts[i] += n;
        if (n > 0) {
          changed = true;
          changed_at = step;
        } else {
          found_nothing_at[i] = step;
        }
      }
    }
    // Layout last, once the fusions have settled: it rewrites the fused convolutions into
    // their channels-last forms, which no fusion pattern matches.
    const bool layout = level >= 3 && to_channels_last(g);
    // Then the passes that match the layout's operators.
    std::vector<std::pair<std::string, int>> after;
    for (auto& p : after_layout_passes())
      if (p->min_level() <= level) after.push_back({p->name(), layout ? p->run(g) : 0});
    prune_unused(g);
    // Passes keep the order themselves (tests check each); sorting here would only hide a bug.
    PI_CHECK(is_topological(g), Internal, "the optimizer left graph '", g.name,
             "' out of topological order (a pass bug; run with optimization level 0)");
    for (size_t i = 0; i < passes.size(); ++i)
      if (passes[i]->min_level() <= level) r.rewrites.push_back({passes[i]->name(), counts[i]});
    if (level >= 3) r.rewrites.push_back({"channels-last", layout ? 1 : 0});
    r.rewrites.insert(r.rewrites.end(), after.begin(), after.end());
  }
  r.nodes_after = static_cast<int>(g.nodes.size());
  for (const auto& n : g.nodes) r.polyinfer_only = r.polyinfer_only || n.domain == kPolyDomain;
  // Passes declare the domain when they emit an operator of it; one removed again leaves no need.
  if (!r.polyinfer_only) g.opsets.erase(kPolyDomain);
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
