// Attention fusion: the scaled dot-product attention that exporters write head by head becomes
// one Attention node over the projections' [B, S, H·D] outputs q, k, v:
//   Qh = Transpose(Reshape(q, [B, Sq, H, D]), [0, 2, 1, 3])        (likewise Vh from v)
//   Kt = Transpose(Reshape(k, [B, Sk, H, D]), [0, 2, 3, 1])        (or [0, 2, 1, 3] then
//                                                                    [0, 1, 3, 2])
//   P  = Softmax(MatMul(Qh, Kt) · c, last axis)                     (· c: Mul by a scalar
//                                                                    constant, Div by one, or
//                                                                    none)
//   y  = Reshape(Transpose(MatMul(P, Vh), [0, 2, 1, 3]), [B, Sq, H·Dv])
// → Attention(q, k, v) with q_num_heads = kv_num_heads = H and scale = c (1 without one): the
// standard operator at default-domain opset >= 23, below it ai.polyinfer.Attention (the same
// operator). Level 3, CPU only: the fast kernel (providers/cpu/fast/attention.cpp) reads the
// heads in place instead of 9 nodes writing each intermediate out.
//
// Every intermediate must be read by the pattern alone; q, k and v may have other readers.
// Shapes must be static (the Reshapes' targets are checked against them) and float32.
#include <optional>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

using Perm = std::vector<int64_t>;

class AttentionFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-attention"; }
  int min_level() const override { return 3; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Softmax"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& out = g.nodes[i];
      if (dead[i] || !is(out, "Reshape", 2)) continue;
      Match m{g, u, dead, {}};
      std::optional<Heads> found = match(m, out);
      if (!found) continue;
      const bool standard = g.opsets.count("") && g.opsets.at("") >= 23;
      ir::Node att;
      if (standard) {
        att.name = out.name;
        att.op_type = "Attention";
        att.opset = g.opsets.at("");
      } else {
        att = poly_node(g, "Attention", out.name);
      }
      att.attrs["q_num_heads"] = make_int(found->heads);
      att.attrs["kv_num_heads"] = make_int(found->heads);
      att.attrs["scale"] = make_float(found->scale);
      att.inputs = {found->q, found->k, found->v};
      att.outputs = out.outputs;
      for (int k : m.nodes) dead[k] = true;
      g.nodes[i] = std::move(att);  // the pattern's last node: everything it reads is defined
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  struct Match {
    const ir::Graph& g;
    const Uses& u;
    const std::vector<bool>& dead;
    std::vector<int> nodes;  // the pattern's nodes found so far (not the final Reshape)

    // The node producing `v` when it is `op` in the default domain, read by the pattern alone.
    const ir::Node* inner(const std::string& v, const char* op, size_t inputs) {
      const int p = u.producer(v);
      if (p < 0 || dead[p] || !u.single_reader(v)) return nullptr;
      const ir::Node& n = g.nodes[p];
      if (!is(n, op, inputs)) return nullptr;
      nodes.push_back(p);
      return &n;
    }
  };

  struct Heads {
    std::string q, k, v;
    int64_t heads = 0;
    float scale = 1.f;
  };

  static bool is(const ir::Node& n, const char* op, size_t inputs) {
    return n.op_type == op && n.domain.empty() && n.inputs.size() == inputs &&
           n.outputs.size() == 1;
  }

  // Follows Transposes back from `v` to a Reshape, composing their permutations; returns the
  // Reshape's input when the whole permutation is `want` and the Reshape splits [B, S, H·D]
  // into [B, S, H, D] (static shapes); "" otherwise. `split` gets [B, S, H, D].
  static std::string split_heads(Match& m, std::string v, const Perm& want, Shape* split) {
    Perm perm = {0, 1, 2, 3};  // dimension i of the start is dimension perm[i] of v
    int transposes = 0;
    for (;;) {
      const ir::Node* t = m.inner(v, "Transpose", 1);
      if (!t) break;
      const Perm p = attr_ints(*t, "perm");
      if (p.size() != 4) return "";
      Perm composed(4);
      for (size_t i = 0; i < 4; ++i) {
        if (perm[i] < 0 || perm[i] > 3) return "";
        composed[i] = p[static_cast<size_t>(perm[i])];
      }
      perm = composed;
      v = t->inputs[0];
      ++transposes;
    }
    if (transposes == 0 || perm != want) return "";
    const ir::Node* r = m.inner(v, "Reshape", 2);
    if (!r) return "";
    const std::optional<Shape> in = static_shape(m.g, r->inputs[0]);
    const std::optional<Shape> mid = static_shape(m.g, v);
    if (!in || !mid || in->size() != 3 || mid->size() != 4 || (*mid)[0] != (*in)[0] ||
        (*mid)[1] != (*in)[1] || (*mid)[2] * (*mid)[3] != (*in)[2] ||
        elem_type(m.g, r->inputs[0]) != DType::Float32)
      return "";
    *split = *mid;
    return r->inputs[0];
  }

  static std::optional<Heads> match(Match& m, const ir::Node& out) {
    const ir::Graph& g = m.g;
    // y = Reshape(Transpose(O, [0, 2, 1, 3]), [B, Sq, H·Dv])
    const ir::Node* merge = m.inner(out.inputs[0], "Transpose", 1);
    if (!merge || attr_ints(*merge, "perm") != Perm{0, 2, 1, 3}) return std::nullopt;
    const ir::Node* pv = m.inner(merge->inputs[0], "MatMul", 2);
    if (!pv) return std::nullopt;
    const ir::Node* softmax = m.inner(pv->inputs[0], "Softmax", 1);
    if (!softmax) return std::nullopt;
    const int64_t axis = attr_int(*softmax, "axis", softmax->opset >= 13 ? -1 : 1);
    if (axis != -1 && axis != 3) return std::nullopt;
    // The scaling: Mul by a scalar constant (either side), Div by one, or none.
    Heads h;
    std::string scores = softmax->inputs[0];
    const int sp = m.u.producer(scores);
    if (sp >= 0 && (g.nodes[sp].op_type == "Mul" || g.nodes[sp].op_type == "Div")) {
      const bool div = g.nodes[sp].op_type == "Div";
      const ir::Node* s = m.inner(scores, div ? "Div" : "Mul", 2);
      if (!s) return std::nullopt;
      const int side = !div && scalar_constant(g, s->inputs[0]) ? 0 : 1;
      const std::optional<double> c = scalar_constant(g, s->inputs[side]);
      if (!c || (div && *c == 0)) return std::nullopt;
      h.scale = to_float(div ? 1.0 / *c : *c);
      scores = s->inputs[1 - side];
    }
    const ir::Node* qk = m.inner(scores, "MatMul", 2);
    if (!qk) return std::nullopt;
    Shape qs, ks, vs;
    h.q = split_heads(m, qk->inputs[0], {0, 2, 1, 3}, &qs);
    h.k = split_heads(m, qk->inputs[1], {0, 2, 3, 1}, &ks);
    h.v = split_heads(m, pv->inputs[1], {0, 2, 1, 3}, &vs);
    if (h.q.empty() || h.k.empty() || h.v.empty()) return std::nullopt;
    // [B, S, H, D]: one batch, as many heads throughout, K's head size Q's, V's length K's.
    if (qs[0] != ks[0] || vs[0] != qs[0] || ks[2] != qs[2] || vs[2] != qs[2] || ks[3] != qs[3] ||
        vs[1] != ks[1])
      return std::nullopt;
    const std::optional<Shape> y = static_shape(g, out.outputs[0]);
    if (!y || *y != Shape{qs[0], qs[1], qs[2] * vs[3]}) return std::nullopt;
    h.heads = qs[2];
    return h;
  }
};

}  // namespace

std::unique_ptr<Pass> make_attention_fusion() { return std::make_unique<AttentionFusion>(); }

}  // namespace polyinfer::opt
