// NhwcFusedConv 1x1 → NhwcFusedConv 3x3 depthwise → NhwcPointwiseDepthwiseConv: the expansion
// and the depthwise convolution of a MobileNet-style inverted-residual block, so one kernel
// computes both and the expanded activations (6x the block's input) are never written out
// (providers/cpu/fast/conv_pointwise_depthwise.cpp).
//
// Level 3, after the channels-last pass (whose operators it matches). The 1x1 convolution: constant
// weights [E, C, 1, 1], stride 1, no padding, group 1, no residual Z, its output read by the
// depthwise convolution alone (not a graph output, not read by a subgraph). The depthwise one:
// constant weights [E, 1, 3, 3], group E, undilated, no residual Z. The fused node keeps the
// depthwise node's output and attributes; the 1x1's activation becomes pointwise_activation.
//
// Only where the expanded tensor is large (its static shape known): the fusion saves moving it
// through memory, which costs little while it fits in the caches; on smaller maps oneDNN's two
// kernels ran faster (docs/kernels.md has the figures).
#include <algorithm>
#include <optional>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

bool is_nhwc_conv(const ir::Node& n) {
  return n.domain == kPolyDomain && n.op_type == "NhwcFusedConv" && n.outputs.size() == 1 &&
         (n.inputs.size() < 4 || n.inputs[3].empty()) && n.inputs.size() >= 2;
}

// Bytes of one image's expanded tensor from which fusing pays (above).
constexpr double kMinExpandedBytes = 1 << 20;

bool all_equal(const std::vector<int64_t>& v, int64_t want) {
  return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == want; });
}

class PointwiseDepthwiseFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-pointwise-depthwise"; }
  int min_level() const override { return 3; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"NhwcFusedConv"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& dw = g.nodes[i];
      if (!is_nhwc_conv(dw) || !depthwise_3x3(g, dw)) continue;
      const std::string& t = dw.inputs[0];
      const int pi = u.producer(t);
      if (pi < 0 || dead[pi] || !u.single_reader(t)) continue;
      const ir::Node& pw = g.nodes[pi];
      if (!is_nhwc_conv(pw) || !pointwise(g, pw, dw)) continue;
      const std::string b1 = pw.inputs.size() > 2 ? pw.inputs[2] : "";
      const std::string b2 = dw.inputs.size() > 2 ? dw.inputs[2] : "";
      std::vector<std::string> inputs = {pw.inputs[0], pw.inputs[1], b1, dw.inputs[1]};
      if (!b2.empty()) inputs.push_back(b2);
      if (const ir::Attribute* a = pw.attr("activation")) dw.attrs["pointwise_activation"] = *a;
      if (const ir::Attribute* a = pw.attr("activation_params"))
        dw.attrs["pointwise_activation_params"] = *a;
      dw.op_type = "NhwcPointwiseDepthwiseConv";
      dw.inputs = std::move(inputs);
      dead[pi] = true;  // the expanded value's type entry goes with it (prune_unused)
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  // Weights [E, 1, 3, 3] with group E, undilated.
  static bool depthwise_3x3(const ir::Graph& g, const ir::Node& n) {
    const Tensor* w = constant(g, n.inputs[1]);
    if (!w || w->dtype() != DType::Float32 || w->rank() != 4) return false;
    const Shape& s = w->shape();
    return s[1] == 1 && s[2] == 3 && s[3] == 3 && attr_int(n, "group", 1) == s[0] &&
           all_equal(attr_ints(n, "dilations"), 1);
  }

  // Weights [E, C, 1, 1] matching the depthwise's E, stride 1, no padding, group 1.
  static bool pointwise(const ir::Graph& g, const ir::Node& n, const ir::Node& dw) {
    const Tensor* w = constant(g, n.inputs[1]);
    const Tensor* w2 = constant(g, dw.inputs[1]);
    if (!w || w->dtype() != DType::Float32 || w->rank() != 4) return false;
    const Shape& s = w->shape();
    const std::string pad = attr_string(n, "auto_pad", "NOTSET");
    if (s[2] != 1 || s[3] != 1 || s[0] != w2->shape()[0] || attr_int(n, "group", 1) != 1 ||
        !all_equal(attr_ints(n, "strides"), 1) || !all_equal(attr_ints(n, "pads"), 0) ||
        (pad != "NOTSET" && pad != "VALID"))
      return false;
    const std::optional<Shape> x = static_shape(g, n.inputs[0]);  // [N, H, W, C]
    return x && x->size() == 4 &&
           static_cast<double>((*x)[1]) * static_cast<double>((*x)[2]) * static_cast<double>(s[0]) *
                   4 >=
               kMinExpandedBytes;
  }
};

}  // namespace

std::unique_ptr<Pass> make_pointwise_depthwise_fusion() {
  return std::make_unique<PointwiseDepthwiseFusion>();
}

}  // namespace polyinfer::opt
