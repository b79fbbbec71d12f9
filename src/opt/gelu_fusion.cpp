// GELU fusion: the decomposed GELU that exporters write becomes one Gelu node.
//   erf form:  0.5 · x · (1 + erf(x / √2))          (x / √2 may be written x · 0.70710678)
//   tanh form: 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))
//              (0.044715 · x³ as a product of x, x, x and the constant in any order and
//              grouping, x·x as Pow(x, 2) and x·x·x as Pow(x, 3) included: tf2onnx writes
//              x · (x · (0.044715 · x)))
// The final products come in three orders, all matched: ((x · a) · 0.5), ((x · 0.5) · a) and
// (x · (a · 0.5)) with a = 1 + erf(...), operands of each Mul/Add in either position.
// At default-domain opset >= 20 the standard Gelu is emitted, below it ai.polyinfer.Gelu (the
// same operator). When the Gelu follows a MatMul/Gemm, activation_fusion.cpp then folds it in.
// Every intermediate must be read by the pattern alone; x itself may have other readers.
#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;

class Matcher {
 public:
  Matcher(const ir::Graph& g, const Uses& u, const std::vector<bool>& dead)
      : g_(g), u_(u), dead_(dead) {}

  // The node producing `v` when it is `op` in the default domain, read by the pattern alone.
  const ir::Node* inner(const std::string& v, const char* op) {
    const int p = u_.producer(v);
    if (p < 0 || dead_[p] || !u_.single_reader(v)) return nullptr;
    const ir::Node& n = g_.nodes[p];
    if (n.op_type != op || !n.domain.empty()) return nullptr;
    nodes.push_back(p);
    return &n;
  }
  // The only reader of `v` when it is `op` in the default domain.
  const ir::Node* reader(const std::string& v, const char* op, int* index = nullptr) {
    if (!u_.single_reader(v)) return nullptr;
    const int r = u_.readers(v)[0];
    const ir::Node& n = g_.nodes[r];
    if (dead_[r] || n.op_type != op || !n.domain.empty() || n.outputs.size() != 1) return nullptr;
    nodes.push_back(r);
    if (index) *index = r;
    return &n;
  }
  bool is_const(const std::string& v, double c) const { return is_scalar(g_, v, c, 1e-4); }
  // For binary `n` with one input a constant ≈ c, the other input; "" otherwise.
  std::string with_const(const ir::Node& n, double c, double tol = 1e-4) {
    if (n.inputs.size() != 2) return "";
    for (int s = 0; s < 2; ++s)
      if (is_scalar(g_, n.inputs[s], c, tol)) return n.inputs[1 - s];
    return "";
  }

  std::vector<int> nodes;  // the pattern's nodes found so far

 private:
  const ir::Graph& g_;
  const Uses& u_;
  const std::vector<bool>& dead_;
};

class GeluFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-gelu"; }
  int min_level() const override { return 2; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Erf", "Tanh"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& n = g.nodes[i];
      if (dead[i] || !n.domain.empty() || n.inputs.size() != 1 || n.outputs.size() != 1 ||
          (n.op_type != "Erf" && n.op_type != "Tanh"))
        continue;
      Matcher m(g, u, dead);
      m.nodes.push_back(static_cast<int>(i));
      const std::string x = n.op_type == "Erf" ? erf_input(m, n) : tanh_input(m, n);
      if (x.empty() || elem_type(g, x) != DType::Float32) continue;
      const int end = tail(m, n.outputs[0], x);
      if (end < 0) continue;
      const bool standard = g.opsets.count("") && g.opsets.at("") >= 20;
      ir::Node gelu;
      if (standard) {
        gelu.name = g.nodes[end].name;
        gelu.op_type = "Gelu";
        gelu.opset = g.opsets.at("");
      } else {
        gelu = poly_node(g, "Gelu", g.nodes[end].name);
      }
      if (n.op_type == "Tanh") gelu.attrs["approximate"] = make_string("tanh");
      gelu.inputs = {x};
      gelu.outputs = g.nodes[end].outputs;
      for (int k : m.nodes) dead[k] = true;
      dead[end] = false;
      g.nodes[end] = std::move(gelu);
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  // erf(x / √2) or erf(x · (1/√2)): x, or "".
  static std::string erf_input(Matcher& m, const ir::Node& erf) {
    if (const ir::Node* d = m.inner(erf.inputs[0], "Div"))
      return d->inputs.size() == 2 && m.with_const(*d, kSqrt2) == d->inputs[0] ? d->inputs[0] : "";
    if (const ir::Node* d = m.inner(erf.inputs[0], "Mul")) return m.with_const(*d, 1 / kSqrt2);
    return "";
  }

  // tanh(√(2/π) · (x + 0.044715 · x³)): x, or "".
  static std::string tanh_input(Matcher& m, const ir::Node& t) {
    const ir::Node* s = m.inner(t.inputs[0], "Mul");
    if (!s) return "";
    const std::string r = m.with_const(*s, kSqrt2OverPi);
    const ir::Node* add = r.empty() ? nullptr : m.inner(r, "Add");
    if (!add || add->inputs.size() != 2) return "";
    for (int side = 0; side < 2; ++side) {
      const std::string& x = add->inputs[side];
      const size_t mark = m.nodes.size();
      Factors f;
      if (factors(m, add->inputs[1 - side], x, f) && f.x_power == 3 && f.others.size() == 1 &&
          m.is_const(f.others[0], 0.044715))
        return x;
      m.nodes.resize(mark);
    }
    return "";
  }

  // A product's factors: the power of x, and the others.
  struct Factors {
    int x_power = 0;
    std::vector<std::string> others;
  };

  // Adds the factors of `v` to `f`: Mul nodes read by the pattern alone are opened, x and
  // Pow(x, 2 or 3) count as powers of x, anything else is one factor. False (and `m` keeps the
  // nodes it opened, for the caller to drop) once f holds more than x³ and one constant.
  static bool factors(Matcher& m, const std::string& v, const std::string& x, Factors& f) {
    if (v == x) return ++f.x_power <= 3;
    const size_t mark = m.nodes.size();
    if (const ir::Node* pw = m.inner(v, "Pow")) {
      for (int e : {2, 3})
        if (pw->inputs.size() == 2 && pw->inputs[0] == x && m.with_const(*pw, e) == x)
          return (f.x_power += e) <= 3;
      m.nodes.resize(mark);
    } else if (const ir::Node* mul = m.inner(v, "Mul")) {
      if (mul->inputs.size() != 2) return false;
      return factors(m, mul->inputs[0], x, f) && factors(m, mul->inputs[1], x, f);
    }
    f.others.push_back(v);
    return f.others.size() <= 1;
  }

  // From f = erf(...) or tanh(...): 0.5 · x · (1 + f). The index of the last node, or -1.
  static int tail(Matcher& m, const std::string& f, const std::string& x) {
    const ir::Node* a = m.reader(f, "Add");
    if (!a || m.with_const(*a, 1.0) != f) return -1;
    const std::string& av = a->outputs[0];
    int i1 = -1, i2 = -1;
    const ir::Node* m1 = m.reader(av, "Mul", &i1);
    if (!m1 || m1->inputs.size() != 2) return -1;
    const std::string o1 = other_input(*m1, av);
    if (o1 == x) {  // (x · a) · 0.5
      const ir::Node* m2 = m.reader(m1->outputs[0], "Mul", &i2);
      return m2 && m.with_const(*m2, 0.5) == m1->outputs[0] ? i2 : -1;
    }
    if (m.is_const(o1, 0.5)) {  // x · (a · 0.5)
      const ir::Node* m2 = m.reader(m1->outputs[0], "Mul", &i2);
      return m2 && other_input(*m2, m1->outputs[0]) == x ? i2 : -1;
    }
    const ir::Node* h = m.inner(o1, "Mul");  // (x · 0.5) · a
    return h && m.with_const(*h, 0.5) == x ? i1 : -1;
  }
};

}  // namespace

std::unique_ptr<Pass> make_gelu_fusion() { return std::make_unique<GeluFusion>(); }

}  // namespace polyinfer::opt
