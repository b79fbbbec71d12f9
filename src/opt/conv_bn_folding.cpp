// Conv + BatchNormalization folding: an inference BatchNormalization after a Conv is a
// per-output-channel affine map, which folds into the Conv's weights and bias:
//   s[m] = scale[m] / sqrt(var[m] + epsilon)
//   W'[m, ...] = W[m, ...] * s[m]
//   B'[m] = (B[m] - mean[m]) * s[m] + bias[m]          (B = 0 when the Conv has none)
// Computed in double, stored as float32. Only when W, B and the four BN inputs are float32
// initializers, the Conv output has no other reader, and the BN is in inference mode with its
// optional outputs unread. The folded weights get new names (W may be shared with another Conv).
#include <algorithm>
#include <cmath>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class ConvBnFolding final : public Pass {
 public:
  const char* name() const override { return "conv-bn"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"BatchNormalization"})) return 0;
    const Uses u(g);
    NameGen names(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& bn = g.nodes[i];
      if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() != 5 ||
          !inference_only(bn, u))
        continue;
      const int ci = u.producer(bn.inputs[0]);
      if (ci < 0 || dead[ci]) continue;
      const ir::Node& conv = g.nodes[ci];
      if (conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2 ||
          !u.single_reader(bn.inputs[0]))
        continue;
      const Tensor* w = constant(g, conv.inputs[1]);
      const Tensor* b =
          conv.inputs.size() > 2 && !conv.inputs[2].empty() ? constant(g, conv.inputs[2]) : nullptr;
      if (!w || w->dtype() != DType::Float32 || w->rank() < 3) continue;
      if (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !b) continue;
      const int64_t M = w->dim(0);
      const Tensor* p[4];
      bool ok = !b || (b->dtype() == DType::Float32 && b->shape() == Shape{M});
      for (int k = 0; k < 4; ++k) {
        p[k] = constant(g, bn.inputs[1 + k]);
        ok = ok && p[k] && p[k]->dtype() == DType::Float32 && p[k]->shape() == Shape{M};
      }
      if (!ok) continue;
      const auto scale = to_doubles(*p[0]), bias = to_doubles(*p[1]), mean = to_doubles(*p[2]),
                 var = to_doubles(*p[3]);
      const double eps = attr_float(bn, "epsilon", 1e-5f);
      std::vector<double> wv = to_doubles(*w), bv(static_cast<size_t>(M), 0.0);
      if (b) bv = to_doubles(*b);
      const int64_t per = w->numel() / std::max<int64_t>(M, 1);
      for (int64_t m = 0; m < M; ++m) {
        const double s = scale[m] / std::sqrt(var[m] + eps);
        for (int64_t k = 0; k < per; ++k) wv[m * per + k] *= s;
        bv[m] = (bv[m] - mean[m]) * s + bias[m];
      }
      ir::Node folded = conv;
      folded.inputs.resize(3);
      folded.inputs[1] = names.fresh(conv.inputs[1] + "_bn");
      folded.inputs[2] = names.fresh(conv.name + "_bias_bn");
      folded.outputs = {bn.outputs[0]};
      g.initializers[folded.inputs[1]] = float_tensor(w->shape(), wv);
      g.initializers[folded.inputs[2]] = float_tensor({M}, bv);
      dead[ci] = true;
      bn = std::move(folded);  // in the BN's place: after everything the Conv read
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  static bool inference_only(const ir::Node& bn, const Uses& u) {
    if (attr_int(bn, "spatial", 1) != 1) return false;
    if (bn.opset < 7 && attr_int(bn, "is_test", 0) == 0) return false;
    if (bn.opset >= 14 && attr_int(bn, "training_mode", 0) != 0) return false;
    if (bn.outputs.empty() || bn.outputs[0].empty()) return false;
    for (size_t k = 1; k < bn.outputs.size(); ++k)
      if (!bn.outputs[k].empty() && !u.unused(bn.outputs[k])) return false;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv_bn_folding() { return std::make_unique<ConvBnFolding>(); }

}  // namespace polyinfer::opt
