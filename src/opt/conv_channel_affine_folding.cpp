// Conv + a per-output-channel constant Add, Sub, Mul or Div → Conv with folded weights and bias:
//   Add/Sub c:  B'[m] = B[m] ± c[m]
//   Mul/Div c:  W'[m, ...] = W[m, ...] · c[m] (or / c[m]),  B'[m] = B[m] · c[m] (or / c[m])
// Exporters that write a convolution without its bias and add the bias after it (Paddle:
// Conv → Add(Reshape(bias) as [1, M, 1, 1])), or scale a convolution's output by a constant,
// leave an elementwise node that costs a pass over the output and, at level 3, sits between
// layout Transposes that the channels-last pass cannot remove (PP-OCR's classifier: 18 such
// Adds). c is a float32 constant that broadcasts along the output channels alone: after
// aligning it to the output's rank from the right, every axis but the channel axis is 1, the
// channel axis 1 or M. Sub and Div only with the convolution as their first operand; Div not
// by zero. The Conv's output must have that node as its only reader. Computed in double,
// stored as float32, as conv-bn does; the folded constants get new names (W may be shared).
#include <algorithm>
#include <cmath>

#include "opt/graph_util.h"
#include "opt/passes.h"

namespace polyinfer::opt {
namespace {

// The per-channel values of `c` for M output channels of a rank-`rank` output; empty when it
// does not broadcast along the channel axis alone.
std::vector<double> per_channel(const Tensor& c, int64_t rank, int64_t M) {
  if (c.dtype() != DType::Float32 || c.rank() > rank) return {};
  const int64_t lead = rank - c.rank();
  for (int64_t a = 0; a < c.rank(); ++a) {
    const int64_t axis = lead + a, d = c.dim(static_cast<int>(a));
    if (d != 1 && !(axis == 1 && d == M)) return {};
  }
  std::vector<double> v = to_doubles(c);
  if (v.size() == 1) v.assign(static_cast<size_t>(M), v[0]);
  return v;
}

class ConvChannelAffineFolding final : public Pass {
 public:
  const char* name() const override { return "conv-channel-affine"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    if (!has_op(g, {"Add", "Sub", "Mul", "Div"}) || !has_op(g, {"Conv"})) return 0;
    const Uses u(g);
    NameGen names(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& op = g.nodes[i];
      const std::string& t = op.op_type;
      if (!op.domain.empty() || (t != "Add" && t != "Sub" && t != "Mul" && t != "Div") ||
          op.inputs.size() != 2 || op.outputs.size() != 1 || op.inputs[0] == op.inputs[1])
        continue;
      const bool commutes = t == "Add" || t == "Mul";
      for (int side = 0; side < (commutes ? 2 : 1); ++side) {
        const std::string& y = op.inputs[side];
        const int ci = u.producer(y);
        if (ci < 0 || dead[ci] || !u.single_reader(y)) continue;
        const ir::Node& conv = g.nodes[ci];
        if (conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2 ||
            conv.outputs.size() != 1)
          continue;
        const Tensor* w = constant(g, conv.inputs[1]);
        const bool has_b = conv.inputs.size() > 2 && !conv.inputs[2].empty();
        const Tensor* b = has_b ? constant(g, conv.inputs[2]) : nullptr;
        const Tensor* c = constant(g, op.inputs[1 - side]);
        if (!w || w->dtype() != DType::Float32 || w->rank() < 3 || !c || (has_b && !b)) continue;
        const int64_t M = w->dim(0);
        if (b && (b->dtype() != DType::Float32 || b->shape() != Shape{M})) continue;
        std::vector<double> cv = per_channel(*c, w->rank(), M);
        if (cv.empty()) continue;
        const bool scale = t == "Mul" || t == "Div";
        if (t == "Div") {
          bool zero = false;
          for (double& x : cv) {
            zero = zero || x == 0;
            x = 1 / x;
          }
          if (zero) continue;
        }
        if (t == "Sub")
          for (double& x : cv) x = -x;
        std::vector<double> wv = to_doubles(*w), bv(static_cast<size_t>(M), 0.0);
        if (b) bv = to_doubles(*b);
        const int64_t per = w->numel() / std::max<int64_t>(M, 1);
        for (int64_t m = 0; m < M; ++m) {
          if (scale) {
            for (int64_t k = 0; k < per; ++k) wv[m * per + k] *= cv[m];
            bv[m] *= cv[m];
          } else {
            bv[m] += cv[m];
          }
        }
        ir::Node folded = conv;
        folded.inputs.resize(3);
        if (scale) {
          folded.inputs[1] = names.fresh(conv.inputs[1] + "_scaled");
          g.initializers[folded.inputs[1]] = float_tensor(w->shape(), wv);
        }
        folded.inputs[2] = names.fresh(conv.name + "_bias_folded");
        g.initializers[folded.inputs[2]] = float_tensor({M}, bv);
        folded.outputs = {op.outputs[0]};
        dead[ci] = true;
        op = std::move(folded);  // in the elementwise node's place: after all the Conv read
        ++count;
        break;
      }
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv_channel_affine_folding() {
  return std::make_unique<ConvChannelAffineFolding>();
}

}  // namespace polyinfer::opt
