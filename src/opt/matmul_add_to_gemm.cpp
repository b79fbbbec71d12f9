// MatMul + Add → Gemm: Y = A·B + bias as one standard Gemm node (classifier heads of exported
// CNNs, linear layers of MLPs). Only where Gemm means exactly the same: A is known to be 2-D, B
// is a constant 2-D matrix, bias is a constant 1-D vector of B's column count (Gemm broadcasts it
// over rows, as Add did), all float32, the MatMul output has no other reader, and the opset is at
// least 7 (Gemm's numpy-style broadcasting of C).
#include "opt/graph_util.h"
#include "opt/matmul_bias.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class MatMulAddToGemm final : public Pass {
 public:
  const char* name() const override { return "matmul-add-gemm"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    return rewrite_matmul_bias(
        g, [](int a_rank) { return a_rank == 2; },
        [](const ir::Node& mm, const ir::Node& add, const std::string& bias) {
          ir::Node gemm;
          gemm.name = mm.name;
          gemm.op_type = "Gemm";
          gemm.opset = add.opset;
          gemm.inputs = {mm.inputs[0], mm.inputs[1], bias};
          return gemm;
        });
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_add_to_gemm() { return std::make_unique<MatMulAddToGemm>(); }

}  // namespace polyinfer::opt
