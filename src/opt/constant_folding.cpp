// Constant folding: a node whose inputs are all initializers computes the same tensors on every
// run, so it is evaluated once here and its outputs become initializers.
//
// It evaluates with the CPU reference kernels (provider cpu-ref) on a one-node graph through the
// ordinary Executor, so folding computes exactly what running the node would. It leaves alone:
// random operators (a new draw per run is their meaning); nodes with subgraphs; DequantizeLinear
// (its int8 weights feed quantized kernels' QDQ patterns, and folding would store them as float);
// nodes whose outputs are graph outputs (they keep being produced by a node); outputs that are not
// tensors; outputs over kMaxElements that are also larger than the node's inputs (a Tile or
// ConstantOfShape could otherwise blow up the model; same-size folds like Transpose of a weight
// are kept); and nodes the reference kernels reject, which are left for the runtime to report.

#include "opt/graph_util.h"
#include "opt/passes.h"
#include "runtime/executor.h"

namespace polyinfer::opt {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 20;

// A host copy independent of the evaluation session's memory pool.
Tensor host_copy(const Tensor& t) {
  if (t.dtype() == DType::String) {
    Tensor out = Tensor::empty(DType::String, t.shape());
    const auto* src = static_cast<const std::string*>(t.raw_data());
    auto* dst = static_cast<std::string*>(out.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) dst[i] = src[i];
    return out;
  }
  Tensor host = t.to(Device::cpu());
  return Tensor::from_host(host.dtype(), host.shape(), host.raw_data(), host.nbytes());
}

bool too_big(const std::optional<Shape>& shape, int64_t in_elems) {
  if (!shape) return false;
  try {
    const int64_t n = shape_numel(*shape);
    return n > kMaxElements && n > in_elems;
  } catch (const Error&) {
    return true;  // beyond the element limit
  }
}

class ConstantFolding final : public Pass {
 public:
  const char* name() const override { return "constant-folding"; }
  int min_level() const override { return 1; }

  int run(ir::Graph& g) override {
    const Uses u(g);
    std::vector<bool> dead(g.nodes.size(), false);
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& n = g.nodes[i];
      if (!n.domain.empty() || is_random_op(n) || n.op_type == "DequantizeLinear" ||
          has_subgraph(n))
        continue;
      if (const Tensor* v = constant_attr(n); v && !u.is_graph_output(n.outputs[0])) {
        g.initializers[n.outputs[0]] = *v;  // shares the attribute's storage
        g.value_types.erase(n.outputs[0]);
        dead[i] = true;
        ++count;
        continue;
      }
      bool foldable = !n.outputs.empty();
      int64_t in_elems = 0;
      for (const auto& in : n.inputs) {
        if (in.empty()) continue;
        const Tensor* t = constant(g, in);
        foldable = foldable && t != nullptr;
        if (t) in_elems += t->numel();
      }
      for (const auto& o : n.outputs) {
        foldable = foldable && !o.empty() && !u.is_graph_output(o);
        // Known too big before evaluating it (a ConstantOfShape of a large shape): skip early.
        if (foldable && too_big(static_shape(g, o), in_elems)) foldable = false;
      }
      if (!foldable) continue;
      std::vector<Value> out;
      if (!evaluate(g, n, &out)) continue;
      bool ok = out.size() == n.outputs.size();
      for (const auto& v : out)
        ok = ok && v.is_tensor() &&
             (v.tensor().numel() <= kMaxElements || v.tensor().numel() <= in_elems);
      if (!ok) continue;
      for (size_t k = 0; k < out.size(); ++k) {
        g.initializers[n.outputs[k]] = host_copy(out[k].tensor());
        g.value_types.erase(n.outputs[k]);  // an initializer's type is its tensor's
      }
      dead[i] = true;
      ++count;
    }
    if (count > 0) erase_dead(g, dead);
    return count;
  }

 private:
  // The tensor of a Constant whose value is a tensor attribute, or nullptr: that is its value
  // as is (whatever its size: it is in the model already). Exporters write one per shape and
  // index (ShuffleNetV2 has 110), and an evaluation session for each cost more than the rest
  // of the pass. Other forms (value_float, value_ints, ...) are evaluated.
  static const Tensor* constant_attr(const ir::Node& n) {
    if (n.op_type != "Constant" || n.attrs.size() != 1 || n.outputs.size() != 1 ||
        n.outputs[0].empty())
      return nullptr;
    const ir::Attribute* v = n.attr("value");
    if (!v || v->type != ir::Attribute::Type::Tensor || !v->t.defined()) return nullptr;
    return &v->t;
  }

  // Runs `n` alone on its constant inputs; false when the reference kernels cannot.
  bool evaluate(const ir::Graph& g, const ir::Node& n, std::vector<Value>* out) {
    auto one = std::make_shared<ir::Graph>();
    one->name = "fold";
    one->opsets = g.opsets;
    one->nodes.push_back(n);
    for (const auto& in : n.inputs)
      if (!in.empty()) one->initializers[in] = *constant(g, in);  // a body's: maybe outer
    for (const auto& o : n.outputs) one->outputs.push_back({o, ir::TypeInfo{}});
    try {
      if (!rt_) {
        auto rt = std::make_shared<RuntimeContext>();
        auto p = std::shared_ptr<Provider>(create_provider("cpu-ref"));
        rt->providers.push_back(p);
        rt->pools.push_back(std::make_shared<MemoryPool>(p->allocator()));
        rt->threads = 1;
        rt_ = rt;
      }
      *out = compile_graph(one, rt_)->run({}, {});
      return true;
    } catch (const Error&) {
      return false;  // unsupported here or bad data: the runtime reports it when the node runs
    }
  }

  std::shared_ptr<RuntimeContext> rt_;
};

}  // namespace

std::unique_ptr<Pass> make_constant_folding() { return std::make_unique<ConstantFolding>(); }

}  // namespace polyinfer::opt
