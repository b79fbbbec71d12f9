// Activation fusion: Conv, Gemm or MatMul (plain or already fused with a bias / residual) whose
// only reader is an activation becomes one ai.polyinfer Fused* node with `activation` set, so
// fast kernels apply it while the result is still in cache (oneDNN post-ops).
//
// Activations: Relu, LeakyRelu, Clip (constant bounds), Sigmoid, HardSigmoid, HardSwish (also
// ai.polyinfer's), Tanh,
// Gelu (the standard op or ai.polyinfer's, erf or tanh form: the GELU pass runs first), Silu
// written as Mul(x, Sigmoid(x)) and HardSwish written as Mul(x, HardSigmoid(x, 1/6, 0.5)). Only
// float32 products fuse (the fused ops are float32).
#include <cmath>
#include <optional>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

struct Act {
  std::string name;
  std::vector<float> params;
  int gate = -1;  // Silu, HardSwish: index of the Sigmoid / HardSigmoid the Mul multiplies by
};

class ActivationFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-activation"; }
  int min_level() const override { return 2; }

  int run(ir::Graph& g) override {
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& an = g.nodes[i];
      if (an.outputs.size() != 1 || an.inputs.empty()) continue;
      std::string x;
      const std::optional<Act> act = activation(g, u, an, &x);
      if (!act || (act->gate >= 0 && dead[act->gate])) continue;
      const int pi = u.producer(x);
      if (pi < 0 || dead[pi]) continue;
      // Silu's input has two readers (the gate and the Mul), both in the pattern.
      if (act->gate >= 0
              ? (u.readers(x).size() != 2 || u.is_graph_output(x) || u.read_by_subgraph(x))
              : !u.single_reader(x))
        continue;
      const ir::Node& p = g.nodes[pi];
      if (!fusable_product(g, p)) continue;
      ir::Node fused = p;
      if (p.domain.empty()) {
        fused = poly_node(g, "Fused" + p.op_type, p.name);
        fused.inputs = p.inputs;
        fused.attrs = p.attrs;
      }
      fused.outputs = an.outputs;
      fused.attrs["activation"] = make_string(act->name);
      if (!act->params.empty()) fused.attrs["activation_params"] = make_floats(act->params);
      dead[pi] = true;
      if (act->gate >= 0) dead[act->gate] = true;
      an = std::move(fused);
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  // Conv/Gemm/MatMul, or a Fused* without an activation yet, computing float32.
  static bool fusable_product(const ir::Graph& g, const ir::Node& p) {
    if (p.outputs.size() != 1) return false;
    const bool plain =
        p.domain.empty() && (p.op_type == "Conv" || p.op_type == "Gemm" || p.op_type == "MatMul");
    const bool fused =
        p.domain == kPolyDomain &&
        (p.op_type == "FusedConv" || p.op_type == "FusedGemm" || p.op_type == "FusedMatMul") &&
        attr_string(p, "activation", "").empty();
    if (!plain && !fused) return false;
    const DType t = elem_type(g, p.outputs[0]);
    return t == DType::Float32 || (t == DType::Undefined && !p.inputs.empty() &&
                                   elem_type(g, p.inputs[0]) == DType::Float32);
  }

  // The activation `n` applies to its input (set in *x), or nullopt.
  static std::optional<Act> activation(const ir::Graph& g, const Uses& u, const ir::Node& n,
                                       std::string* x) {
    *x = n.inputs[0];
    if (n.domain == kPolyDomain && n.op_type == "HardSwish" && n.inputs.size() == 1)
      return Act{"HardSwish", {}};  // HardSwish-14 below opset 14 (fuse-activation-decomposition)
    if (n.domain == kPolyDomain || (n.domain.empty() && n.op_type == "Gelu")) {
      if (n.op_type != "Gelu" || n.inputs.size() != 1) return std::nullopt;
      const std::string mode = attr_string(n, "approximate", "none");
      if (mode != "none" && mode != "tanh") return std::nullopt;
      return Act{mode == "tanh" ? "GeluTanh" : "Gelu", {}};
    }
    if (!n.domain.empty()) return std::nullopt;
    const std::string& op = n.op_type;
    if (n.inputs.size() == 1) {
      if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish") return Act{op, {}};
      if (op == "LeakyRelu") return Act{op, {attr_float(n, "alpha", 0.01f)}};
      if (op == "HardSigmoid")
        return Act{op, {attr_float(n, "alpha", 0.2f), attr_float(n, "beta", 0.5f)}};
    }
    if (op == "Clip") {
      const auto b = clip_bounds(g, n);
      if (!b) return std::nullopt;
      return Act{op, {b->first, b->second}};
    }
    if (op == "Mul" && n.inputs.size() == 2) {
      // Silu: Mul(x, Sigmoid(x)); HardSwish as torch exports it below opset 14:
      // Mul(x, HardSigmoid(x, alpha=1/6, beta=0.5)). Either order, the gate read by this Mul
      // alone.
      for (int side = 0; side < 2; ++side) {
        const std::string& s = n.inputs[side];
        const int si = u.producer(s);
        if (si < 0 || !u.single_reader(s)) continue;
        const ir::Node& gate = g.nodes[si];
        if (!gate.domain.empty() || gate.inputs.size() != 1 || gate.inputs[0] != n.inputs[1 - side])
          continue;
        *x = gate.inputs[0];
        if (gate.op_type == "Sigmoid") return Act{"Silu", {}, si};
        if (gate.op_type == "HardSigmoid" &&
            std::fabs(attr_float(gate, "alpha", 0.2f) - 1.0f / 6) < 1e-6f &&
            attr_float(gate, "beta", 0.5f) == 0.5f)
          return Act{"HardSwish", {}, si};
      }
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Pass> make_activation_fusion() { return std::make_unique<ActivationFusion>(); }

}  // namespace polyinfer::opt
