// MatMul + bias → FusedMatMul(A, B, bias): the linear layers of transformers (BERT's
// MatMul(x[B,S,H], W[H,N]) + b[N]), where A has more than two dimensions so Gemm cannot take
// them. Needs A of known rank >= 2, B a constant 2-D float32 matrix, the bias a constant 1-D
// float32 vector of B's column count, and the MatMul output read by the Add alone. A GELU or
// other activation after it fuses in next (activation_fusion.cpp).
#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class MatMulBiasFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-matmul-bias"; }
  int min_level() const override { return 2; }

  int run(ir::Graph& g) override {
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& add = g.nodes[i];
      if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2 || add.opset < 7)
        continue;
      for (int side = 0; side < 2; ++side) {
        const std::string& mm_out = add.inputs[side];
        const std::string& bias = add.inputs[1 - side];
        const int mi = u.producer(mm_out);
        if (mi < 0 || dead[mi] || !u.single_reader(mm_out)) continue;
        const ir::Node& mm = g.nodes[mi];
        if (mm.op_type != "MatMul" || !mm.domain.empty() || mm.inputs.size() != 2) continue;
        const Tensor* b = constant(g, mm.inputs[1]);
        const Tensor* c = constant(g, bias);
        if (!b || !c || b->rank() != 2 || b->dtype() != DType::Float32 ||
            c->dtype() != DType::Float32 || c->shape() != Shape{b->dim(1)} ||
            known_rank(g, mm.inputs[0]) < 2 || elem_type(g, mm.inputs[0]) != DType::Float32)
          continue;
        ir::Node fused = poly_node(g, "FusedMatMul", mm.name);
        fused.inputs = {mm.inputs[0], mm.inputs[1], bias};
        fused.outputs = add.outputs;
        dead[mi] = true;
        add = std::move(fused);
        ++count;
        break;
      }
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_bias_fusion() { return std::make_unique<MatMulBiasFusion>(); }

}  // namespace polyinfer::opt
