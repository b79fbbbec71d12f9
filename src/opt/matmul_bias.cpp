#include "opt/matmul_bias.h"

#include "opt/graph_util.h"

namespace polyinfer::opt {

int rewrite_matmul_bias(ir::Graph& g, const std::function<bool(int a_rank)>& accept,
                        const std::function<ir::Node(const ir::Node& mm, const ir::Node& add,
                                                     const std::string& bias)>& make) {
  if (!has_op(g, {"MatMul"})) return 0;
  const Uses u(g);
  std::vector<bool> dead(g.nodes.size(), false);
  int count = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    ir::Node& add = g.nodes[i];
    if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2 ||
        add.outputs.size() != 1 || add.opset < 7)
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
          !accept(known_rank(g, mm.inputs[0])) || elem_type(g, mm.inputs[0]) != DType::Float32)
        continue;
      ir::Node replacement = make(mm, add, bias);
      replacement.outputs = add.outputs;
      dead[mi] = true;
      add = std::move(replacement);
      ++count;
      break;
    }
  }
  if (count > 0) erase_dead(g, dead);
  return count;
}

}  // namespace polyinfer::opt
