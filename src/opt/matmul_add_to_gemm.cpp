// MatMul + Add → Gemm: Y = A·B + bias as one standard Gemm node (classifier heads of exported
// CNNs, linear layers of MLPs). Only where Gemm means exactly the same: A is known to be 2-D, B
// is a constant 2-D matrix, bias is a constant 1-D vector of B's column count (Gemm broadcasts it
// over rows, as Add did), all float32, the MatMul output has no other reader, and the opset is at
// least 7 (Gemm's numpy-style broadcasting of C).
#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class MatMulAddToGemm final : public Pass {
 public:
  const char* name() const override { return "matmul-add-gemm"; }
  int min_level() const override { return 1; }

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
        if (!b || !c || b->rank() != 2 || b->dtype() != DType::Float32 || !c ||
            c->dtype() != DType::Float32 || c->shape() != Shape{b->dim(1)} ||
            known_rank(g, mm.inputs[0]) != 2 || elem_type(g, mm.inputs[0]) != DType::Float32)
          continue;
        ir::Node gemm;
        gemm.name = mm.name;
        gemm.op_type = "Gemm";
        gemm.opset = add.opset;
        gemm.inputs = {mm.inputs[0], mm.inputs[1], bias};
        gemm.outputs = add.outputs;
        dead[mi] = true;
        add = std::move(gemm);
        ++count;
        break;
      }
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_add_to_gemm() { return std::make_unique<MatMulAddToGemm>(); }

}  // namespace polyinfer::opt
