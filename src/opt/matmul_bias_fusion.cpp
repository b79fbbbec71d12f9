// MatMul + bias → FusedMatMul(A, B, bias): the linear layers of transformers (BERT's
// MatMul(x[B,S,H], W[H,N]) + b[N]), where A has more than two dimensions so Gemm cannot take
// them. Needs A of known rank >= 2, B a constant 2-D float32 matrix, the bias a constant 1-D
// float32 vector of B's column count, and the MatMul output read by the Add alone. A GELU or
// other activation after it fuses in next (activation_fusion.cpp).
#include "opt/graph_util.h"
#include "opt/matmul_bias.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

class MatMulBiasFusion final : public Pass {
 public:
  const char* name() const override { return "fuse-matmul-bias"; }
  int min_level() const override { return 2; }

  int run(ir::Graph& g) override {
    return rewrite_matmul_bias(
        g, [](int a_rank) { return a_rank >= 2; },
        [&g](const ir::Node& mm, const ir::Node&, const std::string& bias) {
          ir::Node fused = poly_node(g, "FusedMatMul", mm.name);
          fused.inputs = {mm.inputs[0], mm.inputs[1], bias};
          return fused;
        });
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_bias_fusion() { return std::make_unique<MatMulBiasFusion>(); }

}  // namespace polyinfer::opt
