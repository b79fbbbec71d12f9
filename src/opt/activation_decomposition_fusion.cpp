// Activation decompositions: the element-wise chains exporters write for an activation that ONNX
// has one operator for become that operator, so fuse-activation then folds it into the Conv,
// Gemm or MatMul before it and the channels-last pass carries it (one pass over memory, not 3-5).
//
//   HardSwish    c · x · g(x), the products in any order and nesting, c from Mul by a constant
//                or Div by one (Paddle: Div(Mul(x, Clip(x + 3, 0, 6)), 6); also Mul by 1/6,
//                Mul(x, Div(Clip(...), 6)), Mul(x, HardSigmoid(x, 1/6, 0.5)),
//                Mul(x, Clip(x / 6 + 0.5, 0, 1))), where g is Clip(a · x + b, 0, hi) or
//                HardSigmoid(x, a, b) (hi = 1) with a / hi = 1/6, b / hi = 1/2 and c · hi = 1
//                → HardSwish (default-domain opset >= 14) or ai.polyinfer.HardSwish
//   HardSigmoid  c · Clip(a · x + b, 0, hi) with c · hi = 1, or Clip(a · x + b, 0, 1) with an
//                affine part → HardSigmoid(alpha = c · a, beta = c · b)
//   SiLU         x · Sigmoid(x · 1) → x · Sigmoid(x), the form fuse-activation takes as Silu
//   Mish         x · Tanh(Softplus(x)) or x · Tanh(Log(Exp(x) + 1)) → Mish (opset >= 18) or
//                ai.polyinfer.Mish
// a · x + b may be written x + b, x · a, a · x + b, x / d + b; Clip's bounds are attributes
// (opset < 11) or constant inputs. Constants are one-element tensors of a rank that does not
// broadcast x; 1/6, 1/2 and the products c · hi match within kTol relative (exporters round
// 1/6 to 0.1666667). Every intermediate must be read by the pattern alone (not a graph output,
// not read by a subgraph); x itself may have other readers. float32 only.
#include <cmath>
#include <optional>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

// Relative tolerance on constants: a few float ulps (1/6 rounded to 7 digits is 2e-7 off).
constexpr double kTol = 1e-6;

bool near(double v, double want) { return std::fabs(v - want) <= kTol * std::fabs(want); }

// clamp(a · x + b, 0, hi): a gate of HardSwish / HardSigmoid.
struct Gate {
  std::string x;
  double a = 1, b = 0, hi = 1;
  bool affine = false;  // the pattern had an affine part (a != 1 or b != 0 was written)
};

// The constant factors and other operands of a product tree, with the nodes walked.
struct Product {
  double c = 1;
  std::vector<std::string> leaves, consts;
};

class Matcher {
 public:
  Matcher(const ir::Graph& g, const Uses& u, const std::vector<bool>& dead)
      : g_(g), u_(u), dead_(dead) {}

  // The node producing `v` when it is `op` in the default domain with one output, read by the
  // pattern alone and not yet rewritten; nullptr otherwise. Does not record it.
  const ir::Node* peek(const std::string& v, const char* op) const {
    const int p = u_.producer(v);
    if (p < 0 || dead_[p] || !u_.single_reader(v)) return nullptr;
    const ir::Node& n = g_.nodes[p];
    if (n.op_type != op || !n.domain.empty() || n.outputs.size() != 1) return nullptr;
    return &n;
  }
  // peek() that records the node as part of the pattern.
  const ir::Node* take(const std::string& v, const char* op) {
    const ir::Node* n = peek(v, op);
    if (n) nodes.push_back(u_.producer(v));
    return n;
  }
  std::optional<double> scalar(const std::string& v) const {
    return g_.initializers.count(v) ? scalar_constant(g_, v) : std::nullopt;
  }
  // For binary `n` with one input a scalar constant: that constant, and the other input in *o.
  std::optional<double> with_const(const ir::Node& n, std::string* o) const {
    if (n.inputs.size() != 2) return std::nullopt;
    for (int s = 0; s < 2; ++s)
      if (const auto c = scalar(n.inputs[s])) {
        *o = n.inputs[1 - s];
        consts.push_back(n.inputs[s]);
        return c;
      }
    return std::nullopt;
  }

  // Factors of `v` = ∏ leaves · c through Mul and Div-by-constant nodes read by the product
  // alone (the node of `v` itself is `top`, already recorded by the caller).
  void collect(const std::string& v, const ir::Node* top, Product& p, int depth = 0) {
    const ir::Node* n = top;
    if (!n && depth < 6) {
      if (const ir::Node* d = peek(v, "Div"); d && d->inputs.size() == 2 && scalar(d->inputs[1]))
        n = take(v, "Div");
      else if (const ir::Node* m = peek(v, "Mul"); m && m->inputs.size() == 2)
        n = take(v, "Mul");
    }
    if (n && n->op_type == "Mul" && n->inputs.size() == 2) {
      collect(n->inputs[0], nullptr, p, depth + 1);
      collect(n->inputs[1], nullptr, p, depth + 1);
    } else if (n && n->op_type == "Div" && n->inputs.size() == 2 && scalar(n->inputs[1]) &&
               *scalar(n->inputs[1]) != 0) {
      collect(n->inputs[0], nullptr, p, depth + 1);
      p.c /= *scalar(n->inputs[1]);
      consts.push_back(n->inputs[1]);
    } else if (const auto c = scalar(v)) {
      p.c *= *c;
      consts.push_back(v);
    } else {
      p.leaves.push_back(v);
    }
  }

  // a · x + b as Add/Mul/Div by constants (each read by the next alone); x = v when none.
  Gate affine(const std::string& v) {
    Gate r;
    r.x = v;
    std::string o;
    if (const ir::Node* add = peek(v, "Add")) {
      if (const auto b = with_const(*add, &o)) {
        take(v, "Add");
        r.b = *b;
        r.x = o;
        r.affine = true;
      }
    }
    const std::string s = r.x;
    if (const ir::Node* m = peek(s, "Mul")) {
      if (const auto a = with_const(*m, &o)) {
        take(s, "Mul");
        r.a = *a;
        r.x = o;
        r.affine = true;
      }
    } else if (const ir::Node* d = peek(s, "Div"); d && d->inputs.size() == 2) {
      const auto den = scalar(d->inputs[1]);
      if (den && *den != 0) {
        take(s, "Div");
        consts.push_back(d->inputs[1]);
        r.a = 1 / *den;
        r.x = d->inputs[0];
        r.affine = true;
      }
    }
    return r;
  }

  // `v` = Clip(a · x + b, 0, hi) or HardSigmoid(x, a, b), read by the pattern alone.
  std::optional<Gate> gate(const std::string& v) {
    const size_t mark = nodes.size(), cmark = consts.size();
    if (const ir::Node* h = take(v, "HardSigmoid")) {
      if (h->inputs.size() != 1) return fail(mark, cmark);
      Gate r;
      r.x = h->inputs[0];
      r.a = attr_float(*h, "alpha", 0.2f);
      r.b = attr_float(*h, "beta", 0.5f);
      r.affine = true;
      return r;
    }
    const ir::Node* c = take(v, "Clip");
    if (!c || c->inputs.empty()) return fail(mark, cmark);
    const auto bounds = clip_bounds(g_, *c);
    if (!bounds || bounds->first != 0 || !(bounds->second > 0) || std::isinf(bounds->second))
      return fail(mark, cmark);
    Gate r = affine(c->inputs[0]);
    r.hi = bounds->second;
    return r;
  }

  int producer(const std::string& v) const { return u_.producer(v); }

  // True when every constant the pattern read (Clip's bounds aside: Clip keeps its input's
  // shape) has a rank that cannot broadcast `x` to more
  // dimensions (a one-element [1, 1, 1, 1, 1] times a rank-4 x would be rank 5).
  bool consts_fit(const std::string& x) const {
    const int rx = known_rank(g_, x);
    for (const auto& c : consts) {
      const int rc = static_cast<int>(g_.initializers.at(c).shape().size());
      if (rc > 0 && (rx < 0 || rc > rx)) return false;
    }
    return true;
  }

  std::vector<int> nodes;                   // the pattern's nodes found so far (not its last)
  mutable std::vector<std::string> consts;  // constants the pattern read

 private:
  std::nullopt_t fail(size_t mark, size_t cmark) {
    nodes.resize(mark);
    consts.resize(cmark);
    return std::nullopt;
  }
  const ir::Graph& g_;
  const Uses& u_;
  const std::vector<bool>& dead_;
};

class ActivationDecompositionFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-activation-decomposition"; }
  int min_level() const override { return 2; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Clip", "HardSigmoid", "Sigmoid", "Tanh"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    opset_ = g.opsets.count("") ? g.opsets.at("") : 0;
    int count = 0;
    // Last node first, so the whole chain matches before a part of it would (the Div of
    // Clip(x + 3, 0, 6) / 6 is a HardSigmoid alone, and the first half of a HardSwish).
    for (size_t k = g.nodes.size(); k-- > 0;) {
      const ir::Node& n = g.nodes[k];
      if (dead[k] || !n.domain.empty() || n.outputs.size() != 1 || n.inputs.empty()) continue;
      if (n.op_type != "Mul" && n.op_type != "Div" && n.op_type != "Clip") continue;
      if (elem_type(g, n.outputs[0]) != DType::Float32) continue;
      // One matcher per pattern tried: a failed try leaves the nodes it walked recorded.
      Matcher hm(g, u, dead), mm(g, u, dead), sm(g, u, dead);
      const Matcher* used = &hm;
      std::optional<ir::Node> op = hard_activation(g, hm, n);
      if (!op && n.op_type == "Mul") {
        op = mish(g, mm, n);
        used = &mm;
      }
      if (!op && n.op_type == "Mul" && silu(g, sm, n, dead)) {
        ++count;
        continue;
      }
      if (!op) continue;
      op->name = n.name;
      op->outputs = n.outputs;
      for (int d : used->nodes) dead[d] = true;
      g.nodes[k] = std::move(*op);
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  // `op` in the default domain where its opset has it (from `since`), else ai.polyinfer's.
  ir::Node standard_or_poly(ir::Graph& g, const char* op, int since) const {
    if (opset_ >= since) {
      ir::Node n;
      n.op_type = op;
      n.opset = opset_;
      return n;
    }
    return poly_node(g, op, "");
  }

  // HardSwish or HardSigmoid ending at `n` (Mul, Div or Clip).
  std::optional<ir::Node> hard_activation(ir::Graph& g, Matcher& m, const ir::Node& n) const {
    if (n.op_type == "Clip") {  // Clip(a · x + b, 0, 1) → HardSigmoid(a, b)
      const auto bounds = clip_bounds(g, n);
      if (!bounds || bounds->first != 0 || bounds->second != 1) return std::nullopt;
      const Gate r = m.affine(n.inputs[0]);
      if (!r.affine || r.a == 0 || !m.consts_fit(r.x)) return std::nullopt;
      return hard_sigmoid(g, r.x, r.a, r.b);
    }
    Product p;
    m.collect(n.outputs[0], &n, p);
    if (p.leaves.size() == 1 && p.c > 0) {  // c · Clip(a · x + b, 0, hi), c · hi = 1
      const auto r = m.gate(p.leaves[0]);
      if (!r || !near(p.c * r->hi, 1) || m.nodes.empty() || !m.consts_fit(r->x))
        return std::nullopt;
      return hard_sigmoid(g, r->x, p.c * r->a, p.c * r->b);
    }
    if (p.leaves.size() != 2) return std::nullopt;
    for (int s = 0; s < 2; ++s) {  // c · x · g(x)
      const std::string& x = p.leaves[1 - s];
      const size_t mark = m.nodes.size(), cmark = m.consts.size();
      const auto r = m.gate(p.leaves[s]);
      if (r && r->x == x && near(r->a / r->hi, 1.0 / 6) && near(r->b / r->hi, 0.5) &&
          near(p.c * r->hi, 1) && m.consts_fit(x) && elem_type(g, x) == DType::Float32) {
        ir::Node h = standard_or_poly(g, "HardSwish", 14);
        h.inputs = {x};
        return h;
      }
      m.nodes.resize(mark);
      m.consts.resize(cmark);
    }
    return std::nullopt;
  }

  std::optional<ir::Node> hard_sigmoid(ir::Graph& g, const std::string& x, double a,
                                       double b) const {
    if (opset_ < 6 || elem_type(g, x) != DType::Float32) return std::nullopt;
    ir::Node h;
    h.op_type = "HardSigmoid";
    h.opset = opset_;
    h.inputs = {x};
    h.attrs["alpha"] = make_float(static_cast<float>(a));
    h.attrs["beta"] = make_float(static_cast<float>(b));
    return h;
  }

  // Mul(x, Tanh(Softplus(x))) or Mul(x, Tanh(Log(Add(Exp(x), 1)))) → Mish.
  std::optional<ir::Node> mish(ir::Graph& g, Matcher& m, const ir::Node& n) const {
    if (n.inputs.size() != 2) return std::nullopt;
    for (int s = 0; s < 2; ++s) {
      const std::string& x = n.inputs[1 - s];
      const size_t mark = m.nodes.size();
      const ir::Node* t = m.take(n.inputs[s], "Tanh");
      const ir::Node* sp = t && t->inputs.size() == 1 ? m.take(t->inputs[0], "Softplus") : nullptr;
      bool ok = sp && sp->inputs.size() == 1 && sp->inputs[0] == x;
      if (!ok && t && t->inputs.size() == 1) {
        const ir::Node* lg = m.take(t->inputs[0], "Log");
        const ir::Node* add = lg && lg->inputs.size() == 1 ? m.take(lg->inputs[0], "Add") : nullptr;
        std::string e;
        const auto one = add ? m.with_const(*add, &e) : std::nullopt;
        const ir::Node* ex = one && *one == 1 ? m.take(e, "Exp") : nullptr;
        ok = ex && ex->inputs.size() == 1 && ex->inputs[0] == x && m.consts_fit(x);
      }
      if (ok && elem_type(g, x) == DType::Float32) {
        ir::Node mi = standard_or_poly(g, "Mish", 18);
        mi.inputs = {x};
        return mi;
      }
      m.nodes.resize(mark);
    }
    return std::nullopt;
  }

  // Mul(x, Sigmoid(Mul(x, 1))): the Sigmoid reads x itself, the Mul by one goes.
  static bool silu(ir::Graph& g, Matcher& m, const ir::Node& n, std::vector<bool>& dead) {
    if (n.inputs.size() != 2) return false;
    for (int s = 0; s < 2; ++s) {
      const std::string& x = n.inputs[1 - s];
      const ir::Node* sg = m.peek(n.inputs[s], "Sigmoid");
      if (!sg || sg->inputs.size() != 1) continue;
      const ir::Node* one = m.peek(sg->inputs[0], "Mul");
      std::string o;
      const auto c = one ? m.with_const(*one, &o) : std::nullopt;
      if (!c || *c != 1 || o != x || !m.consts_fit(x)) continue;
      dead[m.producer(sg->inputs[0])] = true;
      g.nodes[m.producer(n.inputs[s])].inputs[0] = x;
      return true;
    }
    return false;
  }

  int opset_ = 0;
};

}  // namespace

std::unique_ptr<Pass> make_activation_decomposition_fusion() {
  return std::make_unique<ActivationDecompositionFusion>();
}

}  // namespace polyinfer::opt
