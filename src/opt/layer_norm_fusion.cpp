// LayerNormalization fusion: the decomposed layer norm that exporters write for opsets below 17
// (BERT, GPT-2) becomes one node:
//   mean = ReduceMean(x, axes=[-1]);  d = Sub(x, mean)
//   var  = ReduceMean(Pow(d, 2) or Mul(d, d), axes=[-1])
//   y    = Div(d, Sqrt(Add(var, eps))) · gamma [+ beta]
// → LayerNormalization(x, gamma, [beta], axis=-1, epsilon=eps): the standard operator at
// default-domain opset >= 17, ai.polyinfer.LayerNormalization (the same operator) below it.
// Needs the last axis only (axes [-1] or [rank-1], keepdims 1), a constant scalar eps, gamma and
// beta constant 1-D float32 initializers, x float32, and every intermediate read by the pattern
// alone. The fused kernel computes the statistics in float32 as the decomposed graph did.
#include <set>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class LayerNormFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-layer-norm"; }
  int min_level() const override { return 2; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"ReduceMean"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      std::vector<int> nodes;
      std::string x, gamma, beta;
      float eps = 0;
      const int end = match(g, u, dead, static_cast<int>(i), &nodes, &x, &gamma, &beta, &eps);
      if (end < 0) continue;
      const bool standard = g.opsets.count("") && g.opsets.at("") >= 17;
      ir::Node ln;
      if (standard) {
        ln.name = g.nodes[i].name;
        ln.op_type = "LayerNormalization";
        ln.opset = g.opsets.at("");
      } else {
        ln = poly_node(g, "LayerNormalization", g.nodes[i].name);
      }
      ln.inputs = {x, gamma};
      if (!beta.empty()) ln.inputs.push_back(beta);
      ln.outputs = g.nodes[end].outputs;
      ln.attrs["axis"] = make_int(-1);
      ln.attrs["epsilon"] = make_float(eps);
      for (int k : nodes) dead[k] = true;
      dead[end] = false;
      g.nodes[end] = std::move(ln);
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  // ReduceMean over the last axis of its input, keepdims 1.
  static bool mean_last_axis(const ir::Graph& g, const ir::Node& n) {
    if (n.op_type != "ReduceMean" || !n.domain.empty() || n.outputs.size() != 1 ||
        attr_int(n, "keepdims", 1) != 1)
      return false;
    std::vector<int64_t> axes;
    if (n.opset >= 18) {
      if (n.inputs.size() != 2) return false;
      const Tensor* a = constant(g, n.inputs[1]);
      if (!a || a->dtype() != DType::Int64) return false;
      axes = a->to_vector<int64_t>();
    } else {
      if (n.inputs.size() != 1) return false;
      axes = attr_ints(n, "axes");
    }
    const int r = known_rank(g, n.inputs[0]);
    return axes.size() == 1 && (axes[0] == -1 || (r > 0 && axes[0] == r - 1));
  }

  // The pattern starting at ReduceMean node `i`; returns the index of its last node or -1.
  static int match(const ir::Graph& g, const Uses& u, const std::vector<bool>& dead, int i,
                   std::vector<int>* nodes, std::string* x, std::string* gamma, std::string* beta,
                   float* eps) {
    const ir::Node& m1 = g.nodes[i];
    if (dead[i] || !mean_last_axis(g, m1)) return -1;
    *x = m1.inputs[0];
    if (elem_type(g, *x) != DType::Float32) return -1;
    nodes->push_back(i);
    // The only reader of `v`, when it is `op` (default domain, one output, alive).
    auto reader = [&](const std::string& v, const char* op) -> const ir::Node* {
      if (!u.single_reader(v)) return nullptr;
      const int r = u.readers(v)[0];
      const ir::Node& n = g.nodes[r];
      if (dead[r] || n.op_type != op || !n.domain.empty() || n.outputs.size() != 1) return nullptr;
      nodes->push_back(r);
      return &n;
    };
    const ir::Node* sub = reader(m1.outputs[0], "Sub");
    if (!sub || sub->inputs.size() != 2 || sub->inputs[0] != *x) return -1;
    const std::string& d = sub->outputs[0];
    // d is read by the square (once or twice) and by the Div, by nothing else.
    std::set<int> dr(u.readers(d).begin(), u.readers(d).end());
    if (dr.size() != 2 || u.is_graph_output(d) || u.read_by_subgraph(d)) return -1;
    const ir::Node* sq = nullptr;
    const ir::Node* div = nullptr;
    for (int r : dr) {
      const ir::Node& n = g.nodes[r];
      if (dead[r] || !n.domain.empty() || n.inputs.size() != 2) return -1;
      if (n.op_type == "Div" && n.inputs[0] == d && n.inputs[1] != d) div = &n;
      else if (n.op_type == "Pow" && n.inputs[0] == d && is_scalar(g, n.inputs[1], 2.0))
        sq = &n;
      else if (n.op_type == "Mul" && n.inputs[0] == d && n.inputs[1] == d)
        sq = &n;
      else
        return -1;
      nodes->push_back(r);
    }
    if (!sq || !div) return -1;
    const ir::Node* m2 = reader(sq->outputs[0], "ReduceMean");
    if (!m2 || !mean_last_axis(g, *m2)) return -1;
    const ir::Node* add = reader(m2->outputs[0], "Add");
    if (!add || add->inputs.size() != 2) return -1;
    const std::string e = other_input(*add, m2->outputs[0]);
    const auto ev = scalar_constant(g, e);
    if (!ev || *ev < 0) return -1;
    *eps = to_float(*ev);
    const ir::Node* sqrt = reader(add->outputs[0], "Sqrt");
    if (!sqrt || div->inputs[1] != sqrt->outputs[0] || !u.single_reader(sqrt->outputs[0]))
      return -1;
    const ir::Node* mul = reader(div->outputs[0], "Mul");
    if (!mul || mul->inputs.size() != 2) return -1;
    *gamma = other_input(*mul, div->outputs[0]);
    if (!vector_const(g, *gamma, *x)) return -1;
    int end = u.readers(div->outputs[0])[0];
    const ir::Node* badd = nullptr;
    if (u.single_reader(mul->outputs[0])) {
      const int r = u.readers(mul->outputs[0])[0];
      const ir::Node& n = g.nodes[r];
      if (!dead[r] && n.op_type == "Add" && n.domain.empty() && n.inputs.size() == 2 &&
          vector_const(g, other_input(n, mul->outputs[0]), *x)) {
        badd = &n;
        end = r;
        nodes->push_back(r);
      }
    }
    if (badd) *beta = other_input(*badd, mul->outputs[0]);
    return end;
  }

  // A constant 1-D float32 vector matching x's last dimension (when that is known).
  static bool vector_const(const ir::Graph& g, const std::string& v, const std::string& x) {
    const Tensor* t = constant(g, v);
    if (!t || t->dtype() != DType::Float32 || t->rank() != 1) return false;
    const ir::TypeInfo* tx = g.type_of(x);
    if (tx && tx->has_shape && !tx->dims.empty() && tx->dims.back() >= 0)
      return t->dim(0) == tx->dims.back();
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_layer_norm_fusion() { return std::make_unique<LayerNormFusion>(); }

}  // namespace polyinfer::opt
