// Pad + Conv / AveragePool → the Conv or AveragePool with those pads. Exporters write a zero
// Pad before a pool or convolution that pads itself (torch's avg_pool2d(padding=1) in
// Inception-v3 becomes Pad → AveragePool; TensorFlow-converted models pad explicitly), and the
// Pad copies the whole tensor to add a border the consumer could read as zeros.
//
// Level 1 (the result is standard ONNX): a Pad in constant mode with value 0 (or none), constant
// non-negative pads on the spatial axes only (rank 3 or more, none on N and C), no axes input,
// read by one Conv or AveragePool alone (not a graph output) whose auto_pad is NOTSET. The pads
// add to the Conv's. An AveragePool must have no pads of its own, and then counts the border as
// the Pad made it count, as values: count_include_pad becomes 1 (not under ceil_mode, whose last
// window may pass the border).
#include <optional>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class PadFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-pad"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Pad"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& pad = g.nodes[i];
      if (!pad.domain.empty() || pad.op_type != "Pad" || pad.outputs.size() != 1 ||
          !u.single_reader(pad.outputs[0]))
        continue;
      const int rank = known_rank(g, pad.inputs[0]);
      const auto pads = zero_pads(g, pad, rank);
      if (!pads) continue;
      const int ri = u.readers(pad.outputs[0]).front();
      ir::Node& next = g.nodes[ri];
      if (!next.domain.empty() || next.inputs.empty() || next.inputs[0] != pad.outputs[0] ||
          (next.op_type != "Conv" && next.op_type != "AveragePool") ||
          attr_string(next, "auto_pad", "NOTSET") != "NOTSET")
        continue;
      const int spatial = rank - 2;
      std::vector<int64_t> own = attr_ints(next, "pads");
      if (own.empty()) own.assign(2 * spatial, 0);
      if (static_cast<int>(own.size()) != 2 * spatial) continue;  // the kernel reports it
      if (next.op_type == "AveragePool") {
        // With ceil_mode a last window may pass the padded border, and implementations differ
        // on whether count_include_pad counts that overhang: a Pad's zeros it would not count.
        if (attr_int(next, "ceil_mode", 0) != 0) continue;
        bool padded = false;
        for (int64_t p : own) padded = padded || p != 0;
        if (padded) continue;
        next.attrs["count_include_pad"] = make_int(1);
      }
      // ONNX pads: all begins, then all ends; the Pad's cover N and C too.
      for (int d = 0; d < spatial; ++d) {
        own[d] += (*pads)[2 + d];
        own[spatial + d] += (*pads)[rank + 2 + d];
      }
      next.attrs["pads"] = make_ints(own);
      next.inputs[0] = pad.inputs[0];
      dead[i] = true;
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  // The Pad's amounts when it pads only the spatial axes of a rank-`rank` value with zeros in
  // constant mode; nullopt otherwise.
  static std::optional<std::vector<int64_t>> zero_pads(const ir::Graph& g, const ir::Node& pad,
                                                       int rank) {
    if (rank < 3 || attr_string(pad, "mode", "constant") != "constant") return std::nullopt;
    std::vector<int64_t> pads;
    if (pad.opset < 11) {
      if (pad.opset < 2 || attr_float(pad, "value", 0.f) != 0.f) return std::nullopt;
      pads = attr_ints(pad, "pads");
    } else {
      if (pad.inputs.size() < 2 || pad.inputs[1].empty()) return std::nullopt;
      if (pad.inputs.size() > 3 && !pad.inputs[3].empty()) return std::nullopt;  // axes
      if (pad.inputs.size() > 2 && !pad.inputs[2].empty() && !is_scalar(g, pad.inputs[2], 0, 0))
        return std::nullopt;
      const Tensor* t = constant(g, pad.inputs[1]);
      if (!t || t->dtype() != DType::Int64) return std::nullopt;
      for (double v : to_doubles(*t)) pads.push_back(static_cast<int64_t>(v));
    }
    if (static_cast<int>(pads.size()) != 2 * rank) return std::nullopt;
    for (int64_t p : pads)
      if (p < 0) return std::nullopt;
    if (pads[0] || pads[1] || pads[rank] || pads[rank + 1]) return std::nullopt;
    return pads;
  }
};

}  // namespace

std::unique_ptr<Pass> make_pad_fusion() { return std::make_unique<PadFusion>(); }

}  // namespace polyinfer::opt
