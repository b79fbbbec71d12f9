// Unsigned activations: QuantizeLinear → DequantizeLinear pairs on int8 activations become
// uint8 ones, before fuse-qdq turns them into integer kernels.
//
// Why: x86's int8 dot products (VNNI, AMX) multiply unsigned by signed bytes; oneDNN 2.6 runs an
// s8 source through compensation and, with a zero point, older kernels (MobileNetV2's depthwise
// convolutions ran markedly faster with u8 activations, docs/kernels.md; ResNet-50 gets brgconv
// instead of jit). Exact: with zero point z + 128 the uint8 value is the int8 one plus 128 —
// saturate(round(x/s) + z + 128) over [0, 255] is saturate(round(x/s) + z) over [-128, 127]
// plus 128 — and DequantizeLinear(q + 128, s, z + 128) = (q - z)·s.
// Conditions: the QuantizeLinear quantizes a computed value (not a constant) with a scalar int8
// zero point; every reader of its output is a DequantizeLinear with a scalar constant int8 zero
// point; the output is not a graph output nor read by a subgraph.
#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class QdqUnsigned final : public Pass {
 public:
  const char* name() const override { return "qdq-unsigned"; }
  int min_level() const override { return 2; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"QuantizeLinear"})) return 0;
    const Uses u(g);
    NameGen names(g);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& q = g.nodes[i];
      if (q.op_type != "QuantizeLinear" || !q.domain.empty() || q.inputs.size() != 3 ||
          q.outputs.size() != 1 || q.attr("saturate") || q.attr("output_dtype") ||
          q.attr("block_size") || q.attr("precision") || constant(g, q.inputs[0]) ||
          !s8_scalar(g, q.inputs[2]))
        continue;
      const std::string& v = q.outputs[0];
      if (u.is_graph_output(v) || u.read_by_subgraph(v) || u.readers(v).empty()) continue;
      bool ok = true;
      for (int r : u.readers(v)) {
        const ir::Node& d = g.nodes[r];
        ok = ok && d.op_type == "DequantizeLinear" && d.domain.empty() && d.inputs.size() == 3 &&
             d.inputs[0] == v && s8_scalar(g, d.inputs[2]) && !d.attr("output_dtype") &&
             !d.attr("block_size");
      }
      if (!ok) continue;
      q.inputs[2] = unsigned_zero_point(g, names, q.inputs[2]);
      for (int r : u.readers(v)) {
        ir::Node& d = g.nodes[r];
        d.inputs[2] = unsigned_zero_point(g, names, d.inputs[2]);
      }
      auto t = g.value_types.find(v);
      if (t != g.value_types.end()) t->second.elem = DType::UInt8;
      ++count;
    }
    return count;
  }

 private:
  static bool s8_scalar(const ir::Graph& g, const std::string& v) {
    const Tensor* t = constant(g, v);
    return t && t->dtype() == DType::Int8 && t->numel() == 1 && t->rank() <= 1;
  }

  // A uint8 initializer holding the int8 zero point `z` + 128 (one per distinct source).
  std::string unsigned_zero_point(ir::Graph& g, NameGen& names, const std::string& z) {
    auto it = made_.find(z);
    if (it != made_.end() && g.initializers.count(it->second)) return it->second;
    const Tensor& t = *constant(g, z);  // s8_scalar found it (in a body: maybe outer)
    const std::string name = names.fresh(z + "_u8");
    g.initializers[name] = Tensor::from_vector<uint8_t>(
        t.shape(), {static_cast<uint8_t>(int(t.data<int8_t>()[0]) + 128)});
    made_[z] = name;
    return name;
  }

  std::map<std::string, std::string> made_;
};

}  // namespace

std::unique_ptr<Pass> make_qdq_unsigned() { return std::make_unique<QdqUnsigned>(); }

}  // namespace polyinfer::opt
