// Transpose cancellation: Transpose → a chain of nodes that do not care about axis order →
// Transpose. Where the two permutations compose to the identity, the chain runs on the first
// Transpose's input and both Transposes go; otherwise the first goes and the second applies the
// composed permutation. Either way a full pass over the tensor (or two) is saved.
//
// The chain: element-wise unary operators (activations, Cast, Not, ...), binary element-wise
// operators whose other operand is a one-element constant (it broadcasts alike in any order),
// and Squeeze / Unsqueeze with constant axes, whose axes are renumbered for the untransposed
// value (the permutation then loses or gains those axes). Every value from the first
// Transpose's output to the chain's end has that one reader (no graph output, no subgraph
// read); the second Transpose's output, where it goes, is renamed in its readers, so it must
// not be a graph output or a subgraph's read either.
//
// Where this comes from: tf2onnx writes each 1-D convolution as Unsqueeze → Transpose(NHWC to
// NCHW) → Conv → Transpose back → Squeeze, and the channels-last layout then adds its own
// Transposes next to those (deepcut: 24 such pairs, 10% of its time). Their pairs meet here.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

using Perm = std::vector<int64_t>;

bool element_wise_unary(const ir::Node& n) {
  static const std::set<std::string> ops{
      "Relu", "Clip",  "Sigmoid",    "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish",
      "Elu",  "Selu",  "Softplus",   "Neg",  "Abs",       "Exp",         "Sqrt",
      "Erf",  "Mish",  "Gelu",       "Cast", "Not",       "Sign",        "Floor",
      "Ceil", "Round", "Reciprocal", "Log",  "Identity",  "Softsign",    "ThresholdedRelu",
      "Celu", "IsNaN", "IsInf",      "Sin",  "Cos"};
  static const std::set<std::string> poly{"Gelu", "HardSwish", "Mish"};
  return n.domain.empty() ? ops.count(n.op_type) > 0
                          : n.domain == kPolyDomain && poly.count(n.op_type) > 0;
}

bool element_wise_binary(const ir::Node& n) {
  static const std::set<std::string> ops{"Add",   "Sub",  "Mul",     "Div", "Pow", "Max", "Min",
                                         "Equal", "Less", "Greater", "And", "Or",  "Xor"};
  return n.domain.empty() && ops.count(n.op_type) > 0;
}

// The axes of Squeeze/Unsqueeze `n` (attribute before opset 13, constant input from 13),
// normalized against `rank`; nullopt when absent or computed.
std::optional<std::vector<int64_t>> squeeze_axes(const ir::Graph& g, const ir::Node& n,
                                                 int64_t rank) {
  std::vector<int64_t> axes;
  if (n.opset < 13) {
    if (!n.attr("axes")) return std::nullopt;
    axes = attr_ints(n, "axes");
  } else {
    if (n.inputs.size() < 2 || n.inputs[1].empty()) return std::nullopt;
    const Tensor* t = constant(g, n.inputs[1]);
    if (!t || t->dtype() != DType::Int64) return std::nullopt;
    for (double v : to_doubles(*t)) axes.push_back(static_cast<int64_t>(v));
  }
  for (auto& a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;  // the kernel reports it on the original
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

// One node of a chain: which node, and for Squeeze/Unsqueeze the axes it takes on the
// untransposed value; `perm` is the permutation that maps its output back to that value's form
// (output axis a is the untransposed output's axis perm[a]).
struct Step {
  size_t node;
  std::vector<int64_t> axes;
  Perm perm;
};

class TransposeCancellation final : public Pass {
 public:
  const char* name() const override { return "transpose-cancellation"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Transpose"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false), touched(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (touched[i] || !is_transpose(g.nodes[i])) continue;
      const auto p0 = perm_of(g, g.nodes[i]);
      if (!p0) continue;
      std::vector<Step> chain;
      size_t end = SIZE_MAX;
      Perm composed;
      if (!follow(g, u, i, *p0, touched, &chain, &end, &composed)) continue;
      rewrite(g, u, i, chain, end, composed, &dead);
      touched[i] = touched[end] = true;
      for (const Step& s : chain) touched[s.node] = true;
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  static bool is_transpose(const ir::Node& n) {
    return n.op_type == "Transpose" && n.domain.empty() && n.inputs.size() == 1 &&
           n.outputs.size() == 1 && !n.inputs[0].empty();
  }

  static std::optional<Perm> perm_of(const ir::Graph& g, const ir::Node& t) {
    if (t.attr("perm")) {
      Perm p = attr_ints(t, "perm");
      Perm sorted = p;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < sorted.size(); ++k)
        if (sorted[k] != static_cast<int64_t>(k)) return std::nullopt;
      return p;
    }
    const int r = known_rank(g, t.inputs[0]);
    if (r < 0) return std::nullopt;
    Perm p(static_cast<size_t>(r));
    std::iota(p.rbegin(), p.rend(), 0);  // no perm: the axes reversed
    return p;
  }

  // Walks from Transpose `start` (permutation p0) through single readers to a Transpose.
  static bool follow(const ir::Graph& g, const Uses& u, size_t start, Perm p,
                     const std::vector<bool>& touched, std::vector<Step>* chain, size_t* end,
                     Perm* composed) {
    std::string cur = g.nodes[start].outputs[0];
    for (int steps = 0; steps < 32; ++steps) {
      if (!u.single_reader(cur)) return false;
      const size_t r = static_cast<size_t>(u.readers(cur)[0]);
      if (r <= start || touched[r]) return false;
      const ir::Node& n = g.nodes[r];
      if (is_transpose(n)) {
        const auto p1 = perm_of(g, n);
        if (!p1 || p1->size() != p.size()) return false;
        if (u.is_graph_output(n.outputs[0]) || u.read_by_subgraph(n.outputs[0])) return false;
        composed->resize(p.size());
        for (size_t j = 0; j < p.size(); ++j) (*composed)[j] = p[static_cast<size_t>((*p1)[j])];
        *end = r;
        return true;
      }
      if (n.outputs.size() != 1 || n.outputs[0].empty()) return false;
      Step s{r, {}, p};
      if (element_wise_unary(n)) {
        if (n.inputs[0] != cur) return false;
        for (size_t k = 1; k < n.inputs.size(); ++k)  // Clip's bounds
          if (!n.inputs[k].empty() && !scalar_constant(g, n.inputs[k])) return false;
      } else if (element_wise_binary(n)) {
        if (n.inputs.size() != 2) return false;
        const Tensor* c = constant(g, n.inputs[n.inputs[0] == cur ? 1 : 0]);
        if (!c || c->rank() > static_cast<int64_t>(p.size())) return false;
        // One element broadcasts alike in any order; a float32 one (a bias) is permuted too.
        if (c->numel() != 1 && c->dtype() != DType::Float32) return false;
      } else if ((n.op_type == "Squeeze" || n.op_type == "Unsqueeze") && n.domain.empty() &&
                 n.inputs[0] == cur) {
        const bool squeeze = n.op_type == "Squeeze";
        const int64_t rank = static_cast<int64_t>(p.size());
        std::vector<int64_t> axes;
        if (squeeze) {
          const auto a = squeeze_axes(g, n, rank);
          if (!a) return false;
          axes = *a;
        } else {
          int64_t added = 0;
          if (n.opset < 13)
            added = n.attr("axes") ? static_cast<int64_t>(attr_ints(n, "axes").size()) : 0;
          else if (n.inputs.size() > 1 && !n.inputs[1].empty())
            if (const Tensor* t = constant(g, n.inputs[1])) added = t->numel();
          if (added == 0) return false;
          const auto a = squeeze_axes(g, n, rank + added);
          if (!a || static_cast<int64_t>(a->size()) != added) return false;
          axes = *a;
        }
        s.axes = squeeze ? squeezed_source_axes(p, axes) : axes;
        p = squeeze ? after_squeeze(p, axes) : after_unsqueeze(p, axes);
        s.perm = p;
      } else {
        return false;
      }
      chain->push_back(std::move(s));
      cur = n.outputs[0];
    }
    return false;
  }

  // Squeezing axes A of T(X) (axis a of it is X's axis p[a]) squeezes X's axes p[A].
  static std::vector<int64_t> squeezed_source_axes(const Perm& p, const std::vector<int64_t>& a) {
    std::vector<int64_t> out;
    for (int64_t x : a) out.push_back(p[static_cast<size_t>(x)]);
    std::sort(out.begin(), out.end());
    return out;
  }
  // The permutation left after squeezing axes A: p without them, renumbered.
  static Perm after_squeeze(const Perm& p, const std::vector<int64_t>& a) {
    Perm kept;
    for (size_t k = 0; k < p.size(); ++k)
      if (!std::binary_search(a.begin(), a.end(), static_cast<int64_t>(k))) kept.push_back(p[k]);
    Perm sorted = kept;
    std::sort(sorted.begin(), sorted.end());
    for (auto& v : kept) v = std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
    return kept;
  }
  // Unsqueezing at positions A: X gets its new axes at the same positions; they map to
  // themselves, and the others follow p through X's axes' new positions.
  static Perm after_unsqueeze(const Perm& p, const std::vector<int64_t>& a) {
    const size_t rank = p.size() + a.size();
    std::vector<int64_t> pos;  // X's axis j → its position after the insertion
    for (size_t k = 0; k < rank; ++k)
      if (!std::binary_search(a.begin(), a.end(), static_cast<int64_t>(k)))
        pos.push_back(static_cast<int64_t>(k));
    Perm out(rank);
    size_t next = 0;
    for (size_t k = 0; k < rank; ++k) {
      if (std::binary_search(a.begin(), a.end(), static_cast<int64_t>(k))) {
        out[k] = static_cast<int64_t>(k);
      } else {
        out[k] = pos[static_cast<size_t>(p[next++])];
      }
    }
    return out;
  }

  // Constant `c` as it broadcasts against the untransposed value: aligned to the permutation's
  // rank from the right, then axis a moved to position perm[a].
  static Tensor untransposed(const Tensor& c, const Perm& perm) {
    const size_t r = perm.size();
    Shape s4(r - static_cast<size_t>(c.rank()), 1);
    for (int64_t d : c.shape()) s4.push_back(d);
    Shape out(r);
    for (size_t a = 0; a < r; ++a) out[static_cast<size_t>(perm[a])] = s4[a];
    std::vector<float> src(static_cast<size_t>(c.numel())), dst(src.size());
    // Copied out first: a weight still in the mapped model file may be unaligned.
    std::memcpy(src.data(), c.peek_bytes(), c.nbytes());
    std::vector<int64_t> idx(r, 0), stride(r, 1);
    for (size_t k = r; k-- > 1;) stride[k - 1] = stride[k] * out[k];
    for (size_t i = 0; i < src.size(); ++i) {
      int64_t at = 0;
      for (size_t a = 0; a < r; ++a) at += idx[a] * stride[static_cast<size_t>(perm[a])];
      dst[static_cast<size_t>(at)] = src[i];
      for (size_t a = r; a-- > 0;) {  // next index of s4, last axis fastest
        if (++idx[a] < s4[a]) break;
        idx[a] = 0;
      }
    }
    return Tensor::from_vector<float>(out, dst);
  }

  static void rewrite(ir::Graph& g, const Uses& u, size_t start, const std::vector<Step>& chain,
                      size_t end, const Perm& composed, std::vector<bool>* dead) {
    const std::string x = g.nodes[start].inputs[0], v = g.nodes[start].outputs[0];
    (*dead)[start] = true;
    std::string prev = x;  // the value the next node reads, untransposed
    for (const Step& s : chain) {
      ir::Node& n = g.nodes[s.node];
      if (&s == &chain.front())
        for (auto& in : n.inputs)
          if (in == v) in = x;
      if (element_wise_binary(n)) {
        const size_t side = n.inputs[0] == prev ? 1 : 0;
        const Tensor& c = *constant(g, n.inputs[side]);
        if (c.numel() != 1) {
          NameGen names(g);
          const std::string name = names.fresh(n.inputs[side] + "_untransposed");
          g.initializers[name] = untransposed(c, s.perm);
          n.inputs[side] = name;
        }
      }
      if (n.op_type == "Squeeze" || n.op_type == "Unsqueeze") {
        if (n.opset < 13) {
          n.attrs["axes"] = make_ints(s.axes);
        } else {
          NameGen names(g);
          const std::string name = names.fresh(n.name + "_axes");
          g.initializers[name] =
              Tensor::from_vector<int64_t>({static_cast<int64_t>(s.axes.size())}, s.axes);
          n.inputs[1] = name;
        }
      }
      // The output is now the untransposed form: axis perm[a] of it is axis a of what it was.
      if (auto it = g.value_types.find(n.outputs[0]); it != g.value_types.end()) {
        ir::TypeInfo& t = it->second;
        if (t.has_shape && t.dims.size() == s.perm.size()) {
          ir::TypeInfo was = t;
          for (size_t a = 0; a < s.perm.size(); ++a) {
            t.dims[static_cast<size_t>(s.perm[a])] = was.dims[a];
            if (!was.dim_params.empty())
              t.dim_params[static_cast<size_t>(s.perm[a])] = was.dim_params[a];
          }
        } else {
          t.has_shape = false;
          t.dims.clear();
          t.dim_params.clear();
        }
      }
      prev = n.outputs[0];
    }
    ir::Node& t1 = g.nodes[end];
    bool identity = true;
    for (size_t j = 0; j < composed.size(); ++j) identity = identity && composed[j] == int64_t(j);
    if (!identity) {
      t1.inputs[0] = prev;
      t1.attrs["perm"] = make_ints(composed);
      return;
    }
    const std::string y = t1.outputs[0];
    for (int r : u.readers(y))
      for (auto& in : g.nodes[static_cast<size_t>(r)].inputs)
        if (in == y) in = prev;
    g.value_types.erase(y);
    (*dead)[end] = true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_transpose_cancellation() {
  return std::make_unique<TransposeCancellation>();
}

}  // namespace polyinfer::opt
