// ShuffleNet's channel shuffle → ConcatChannelShuffle. ShuffleNetV2 joins its two branches with
// Concat, shuffles the channels in two groups (Reshape to [..., 2, C/2], Transpose of the last
// two axes, Reshape back), and the next unit splits the result in halves with two Slices. In
// channels-last form all of that moves channels along the last axis only, so one pass that
// reads each branch once and writes each half once replaces a Concat, a Transpose and two
// Slices that moved every value three times.
//
// Level 3, after the channels-last pass: Concat of the last axis over G inputs of one static
// shape [..., C'] → Reshape to [..., G, C'] → Transpose swapping the last two axes → Reshape to
// [..., G * C'], each read by the next alone. When the result is read only by Slices of the last
// axis (constant starts and ends, steps 1) that cut it into S equal parts in order, those Slices'
// outputs become the fused node's S outputs; else it has the shuffled tensor as its one output.
#include <algorithm>
#include <optional>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class ChannelShuffleFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-channel-shuffle"; }
  int min_level() const override { return 3; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Transpose"}) || !has_op(g, {"Concat"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t ti = 0; ti < g.nodes.size(); ++ti) {
      const ir::Node& t = g.nodes[ti];
      if (!is(t, "Transpose") || dead[ti]) continue;
      // Walk up to the Concat and down to the last Reshape.
      const int r1 = single_producer(g, u, t.inputs[0], "Reshape");
      const int ci = r1 < 0 ? -1 : single_producer(g, u, g.nodes[r1].inputs[0], "Concat");
      const int r2 = only_reader(g, u, t.outputs[0], "Reshape");
      if (ci < 0 || r2 < 0 || dead[ci] || dead[r1] || dead[r2]) continue;
      const ir::Node& concat = g.nodes[ci];
      const auto groups = shuffle_shape(g, concat, g.nodes[r1], t, g.nodes[r2]);
      if (!groups) continue;
      const std::string& shuffled = g.nodes[r2].outputs[0];
      const std::vector<int> slices = split_slices(g, u, shuffled, *groups);

      // The fused node takes the last Reshape's place, or the first Slice's when it takes
      // over the split: everything it reads is defined before the Concat.
      ir::Node fused = poly_node(g, "ConcatChannelShuffle", t.name);
      fused.inputs = concat.inputs;
      size_t at = static_cast<size_t>(r2);
      fused.outputs = {shuffled};
      dead[ci] = dead[r1] = dead[ti] = true;
      if (!slices.empty()) {
        at = static_cast<size_t>(*std::min_element(slices.begin(), slices.end()));
        fused.outputs.clear();
        for (int s : slices) fused.outputs.push_back(g.nodes[s].outputs[0]);
        dead[r2] = true;
        for (int s : slices) dead[s] = static_cast<size_t>(s) != at;
      }
      g.nodes[at] = std::move(fused);
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  static bool is(const ir::Node& n, const char* op) { return n.domain.empty() && n.op_type == op; }

  // The node producing v if it is `op` and v is read by one node alone; else -1.
  static int single_producer(const ir::Graph& g, const Uses& u, const std::string& v,
                             const char* op) {
    const int p = u.producer(v);
    if (p < 0 || !is(g.nodes[p], op) || !u.single_reader(v)) return -1;
    return p;
  }

  // The node reading v if it is `op` and the only reader of v; else -1.
  static int only_reader(const ir::Graph& g, const Uses& u, const std::string& v, const char* op) {
    if (!u.single_reader(v)) return -1;
    const int r = u.readers(v).front();
    return is(g.nodes[r], op) ? r : -1;
  }

  // G when concat → r1 → t → r2 is a channel shuffle of the last axis in G groups.
  static std::optional<int64_t> shuffle_shape(const ir::Graph& g, const ir::Node& concat,
                                              const ir::Node& r1, const ir::Node& t,
                                              const ir::Node& r2) {
    const int64_t G = static_cast<int64_t>(concat.inputs.size());
    if (G < 2 || concat.outputs.size() != 1) return std::nullopt;
    const auto x = static_shape(g, concat.inputs[0]);
    if (!x || x->empty() || elem_type(g, concat.inputs[0]) == DType::String) return std::nullopt;
    for (const auto& in : concat.inputs)
      if (in.empty() || static_shape(g, in) != x) return std::nullopt;
    const int rank = static_cast<int>(x->size());
    const int64_t axis = attr_int(concat, "axis", 0);
    if (axis != -1 && axis != rank - 1) return std::nullopt;
    const int64_t cg = x->back();
    Shape grouped(x->begin(), x->end() - 1), joined = *x;
    grouped.push_back(G);
    grouped.push_back(cg);
    joined.back() = G * cg;
    Shape swapped = grouped;
    std::swap(swapped[rank - 1], swapped[rank]);
    if (static_shape(g, r1.outputs[0]) != grouped || static_shape(g, t.outputs[0]) != swapped ||
        static_shape(g, r2.outputs[0]) != joined)
      return std::nullopt;
    std::vector<int64_t> perm(static_cast<size_t>(rank) + 1);
    for (int d = 0; d <= rank; ++d) perm[d] = d;
    std::swap(perm[rank - 1], perm[rank]);
    if (attr_ints(t, "perm") != perm) return std::nullopt;
    return G;
  }

  // The Slices that read `v` (and nothing else does) and cut its last axis into equal parts,
  // in part order; empty when the readers are not such a split.
  static std::vector<int> split_slices(const ir::Graph& g, const Uses& u, const std::string& v,
                                       int64_t groups) {
    if (u.is_graph_output(v) || u.read_by_subgraph(v)) return {};
    const auto shape = static_shape(g, v);
    const std::vector<int>& readers = u.readers(v);
    if (!shape || readers.size() < 2) return {};
    const int64_t c = shape->back(), S = static_cast<int64_t>(readers.size());
    const int rank = static_cast<int>(shape->size());
    if (c % S != 0 || (c / S) % groups != 0) return {};
    std::vector<int> order(readers.size(), -1);
    for (int r : readers) {
      const ir::Node& s = g.nodes[r];
      if (!is(s, "Slice") || s.opset < 10 || s.inputs.size() < 3 || s.inputs[0] != v ||
          s.outputs.size() != 1)
        return {};
      const Tensor* starts = constant(g, s.inputs[1]);
      const Tensor* ends = constant(g, s.inputs[2]);
      const Tensor* axes =
          s.inputs.size() > 3 && !s.inputs[3].empty() ? constant(g, s.inputs[3]) : nullptr;
      const Tensor* steps =
          s.inputs.size() > 4 && !s.inputs[4].empty() ? constant(g, s.inputs[4]) : nullptr;
      if (!starts || !ends || starts->numel() != 1 || ends->numel() != 1) return {};
      if (s.inputs.size() > 3 && !s.inputs[3].empty() && (!axes || axes->numel() != 1)) return {};
      if (s.inputs.size() > 4 && !s.inputs[4].empty() && (!steps || steps->numel() != 1)) return {};
      const int64_t axis = axes ? static_cast<int64_t>(to_doubles(*axes)[0]) : 0;
      if (axis != -1 && axis != rank - 1) return {};
      if (steps && to_doubles(*steps)[0] != 1) return {};
      auto clamp = [c](double x) {
        const int64_t i =
            x < 0 ? static_cast<int64_t>(x) + c : static_cast<int64_t>(std::min<double>(x, c));
        return std::clamp<int64_t>(i, 0, c);
      };
      const int64_t b = clamp(to_doubles(*starts)[0]), e = clamp(to_doubles(*ends)[0]);
      const int64_t part = c / S;
      if (b % part != 0 || e - b != part) return {};
      const int64_t k = b / part;
      if (order[k] >= 0) return {};
      order[k] = r;
    }
    return order;  // every part found once: S readers, S distinct parts
  }
};

}  // namespace

std::unique_ptr<Pass> make_channel_shuffle_fusion() {
  return std::make_unique<ChannelShuffleFusion>();
}

}  // namespace polyinfer::opt
