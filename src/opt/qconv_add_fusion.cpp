// QLinearConv + QLinearAdd (residual) → ai.polyinfer QLinearConvAdd: the last convolution of a
// quantized ResNet block and the shortcut addition after it become one oneDNN convolution with
// clip and sum post-ops, instead of the convolution writing its 8-bit output and a second pass
// reading it back with the shortcut.
//
//   QLinearConv(X, .., sc, zc) → c ─┐
//                               Z ──┴─ QLinearAdd(c, sc, zc, Z, zs, zz, sy, zy) → Y
// becomes QLinearConvAdd(X, sx, zx, W, sw, zw, sc, zc, B, Z, zs, zz, sy, zy) → Y:
//   c = clamp((acc + B)·sx·sw, (qmin - zc)·sc, (qmax - zc)·sc)
//   y = saturate(round((c + (Z - zz)·zs) / sy) + zy).
// The convolution's saturation stays (it may stand for an activation the exporter removed:
// a Relu is a zero point at the type's minimum), its rounding to sc goes: results move by at
// most sc/(2·sy) + 1 steps of Y, and are the closer ones to the real sum. Against the literal
// QDQ graph (which rounds there) that cost nothing that matters: cosine 0.999896 fused against
// 0.999891 unfused on QDQ ResNet-50, 0.999880 against 0.999908 on MobileNetV2
// (docs/quantization.md, "INT8 without VNNI").
// Conditions: the convolution's output read by the add alone; the add dequantizes it with the
// convolution's own (sc, zc); Z and Y of one 8-bit type (oneDNN's sum reads Z as Y's type).
#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class QConvAddFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-qconv-add"; }
  int min_level() const override { return 2; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"QLinearAdd"})) return 0;
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& add = g.nodes[i];
      if (add.op_type != "QLinearAdd" || add.domain != kPolyDomain || add.inputs.size() != 8 ||
          add.outputs.size() != 1)
        continue;
      for (int side = 0; side < 2; ++side) {
        const size_t ci = side == 0 ? 0 : 3, zi = side == 0 ? 3 : 0;
        const std::string& c = add.inputs[ci];
        const int pi = u.producer(c);
        if (pi < 0 || dead[pi] || !u.single_reader(c) || add.inputs[0] == add.inputs[3]) continue;
        const ir::Node& conv = g.nodes[pi];
        if (conv.op_type != "QLinearConv" || !conv.domain.empty() || conv.inputs.size() < 8)
          continue;
        if (!same_scalar(g, conv.inputs[6], add.inputs[ci + 1]) ||
            !same_scalar(g, conv.inputs[7], add.inputs[ci + 2]))
          continue;
        const DType yt = elem_type(g, add.inputs[7]);
        if (yt == DType::Undefined || elem_type(g, add.inputs[zi + 2]) != yt) continue;
        ir::Node fused = poly_node(g, "QLinearConvAdd", conv.name);
        fused.attrs = conv.attrs;
        fused.inputs.assign(conv.inputs.begin(), conv.inputs.begin() + 8);
        fused.inputs.push_back(conv.inputs.size() > 8 ? conv.inputs[8] : "");
        fused.inputs.push_back(add.inputs[zi]);
        fused.inputs.push_back(add.inputs[zi + 1]);
        fused.inputs.push_back(add.inputs[zi + 2]);
        fused.inputs.push_back(add.inputs[6]);
        fused.inputs.push_back(add.inputs[7]);
        fused.outputs = add.outputs;
        dead[pi] = true;
        add = std::move(fused);
        ++count;
        break;
      }
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  // Both one-element constants of the same type and value (as float for scales).
  static bool same_scalar(const ir::Graph& g, const std::string& a, const std::string& b) {
    if (a == b) return true;
    const std::optional<double> x = scalar_constant(g, a), y = scalar_constant(g, b);
    return x && y && elem_type(g, a) == elem_type(g, b) && float(*x) == float(*y);
  }
};

}  // namespace

std::unique_ptr<Pass> make_qconv_add_fusion() { return std::make_unique<QConvAddFusion>(); }

}  // namespace polyinfer::opt
