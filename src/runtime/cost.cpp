#include "runtime/cost.h"

#include <set>

namespace polyinfer {

namespace {

// Element count of a fully known shape, or -1.
double known_numel(const Shape* s) {
  if (!s) return -1;
  double n = 1;
  for (int64_t d : *s) {
    if (d < 0) return -1;
    n *= static_cast<double>(d);
  }
  return n;
}

const Shape* at(const std::vector<const Shape*>& v, size_t i) {
  return i < v.size() ? v[i] : nullptr;
}

// The ONNX operator a polyinfer operator stands for: FusedConv and NhwcFusedConv → Conv,
// (Nhwc)QLinearConvAdd → QLinearConv, QLinearAdd → Add, …
std::string base_op(const ir::Node& node) {
  std::string op = node.op_type;
  if (node.domain != "ai.polyinfer") return op;
  if (op.rfind("Nhwc", 0) == 0) op = op.substr(4);
  if (op.rfind("Fused", 0) == 0) op = op.substr(5);
  if (op == "ChannelAffine" || op == "ConcatChannelAffine") op = "BatchNormalization";
  if (op == "ConcatChannelShuffle") op = "Concat";  // moves each value once, as Concat does
  if (op == "QLinearConvAdd") op = "QLinearConv";   // the residual add is a rounding error here
  if (op == "QLinearAdd") op = "Add";
  if (op == "QLinearGemm") op = "QLinearMatMul";  // B is [K, N]; the bias is a rounding error
  return op;
}

bool in(const std::string& op, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (op == n) return true;
  return false;
}

// Operations per element for normalizations and Softmax: BatchNormalization is a scale and a
// shift (2); the others find a mean and a variance (or a max and a sum), then normalize, scale
// and shift — about 8 per element, 5 for Softmax (max, subtract, exp, sum, divide). Estimates
// of the work, not instruction counts: these ops are bandwidth-bound on every target.
double per_element_ops(const std::string& op) {
  if (op == "BatchNormalization") return 2;
  if (in(op, {"Softmax", "LogSoftmax", "Hardmax"})) return 5;
  return 8;
}

}  // namespace

const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::Conv: return "conv";
    case OpClass::MatMul: return "matmul";
    case OpClass::Pool: return "pool";
    case OpClass::Normalization: return "normalization";
    case OpClass::Softmax: return "softmax";
    case OpClass::Elementwise: return "elementwise";
    case OpClass::Reduction: return "reduction";
    case OpClass::Resize: return "resize";
    case OpClass::DataMovement: return "data-movement";
    case OpClass::View: return "view";
    case OpClass::Other: return "other";
  }
  return "other";
}

OpClass op_class(const ir::Node& node) {
  const std::string op = base_op(node);
  if (in(op, {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "PointwiseDepthwiseConv"}))
    return OpClass::Conv;
  if (in(op, {"MatMul", "Gemm", "MatMulInteger", "QLinearMatMul", "Attention"}))
    return OpClass::MatMul;
  if (in(op, {"MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool",
              "GlobalLpPool"}))
    return OpClass::Pool;
  if (in(op, {"BatchNormalization", "InstanceNormalization", "LayerNormalization",
              "GroupNormalization", "LpNormalization", "MeanVarianceNormalization",
              "RMSNormalization", "SimplifiedLayerNormalization", "SkipLayerNormalization"}))
    return OpClass::Normalization;
  if (in(op, {"Softmax", "LogSoftmax", "Hardmax"})) return OpClass::Softmax;
  if (op.rfind("Reduce", 0) == 0 || in(op, {"ArgMax", "ArgMin"})) return OpClass::Reduction;
  if (in(op, {"Resize", "Upsample"})) return OpClass::Resize;
  if (in(op, {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Constant"}))
    return OpClass::View;
  if (in(op, {"Transpose",    "Concat",         "Split",    "Slice",
              "Gather",       "GatherElements", "GatherND", "ScatterElements",
              "ScatterND",    "Scatter",        "Pad",      "Expand",
              "Tile",         "Cast",           "CastLike", "DepthToSpace",
              "SpaceToDepth", "Shape",          "Size",     "ConstantOfShape",
              "Range",        "Compress",       "OneHot",   "ReverseSequence",
              "Trilu",        "EyeLike"}))
    return OpClass::DataMovement;
  if (in(op, {"Add",
              "Sub",
              "Mul",
              "Div",
              "Pow",
              "Max",
              "Min",
              "Sum",
              "Mean",
              "Mod",
              "Relu",
              "LeakyRelu",
              "PRelu",
              "Sigmoid",
              "HardSigmoid",
              "HardSwish",
              "Tanh",
              "Exp",
              "Log",
              "Sqrt",
              "Reciprocal",
              "Neg",
              "Abs",
              "Erf",
              "Gelu",
              "Clip",
              "Elu",
              "Selu",
              "Celu",
              "Softplus",
              "Softsign",
              "Mish",
              "ThresholdedRelu",
              "Shrink",
              "Floor",
              "Ceil",
              "Round",
              "Sign",
              "Not",
              "And",
              "Or",
              "Xor",
              "Equal",
              "Greater",
              "Less",
              "GreaterOrEqual",
              "LessOrEqual",
              "Where",
              "IsNaN",
              "IsInf",
              "Sin",
              "Cos",
              "Tan",
              "Asin",
              "Acos",
              "Atan",
              "Sinh",
              "Cosh",
              "Asinh",
              "Acosh",
              "Atanh",
              "BitShift",
              "BitwiseAnd",
              "BitwiseOr",
              "BitwiseXor",
              "BitwiseNot",
              "QuantizeLinear",
              "DequantizeLinear",
              "DynamicQuantizeLinear",
              "CumSum"}))
    return OpClass::Elementwise;
  return OpClass::Other;
}

double node_flops(const ir::Node& node, const std::vector<const Shape*>& inputs,
                  const std::vector<const Shape*>& outputs) {
  const double out = known_numel(at(outputs, 0));
  const std::string op = base_op(node);
  const OpClass cls = op_class(node);
  if (cls == OpClass::View || cls == OpClass::DataMovement) return 0;
  if (out < 0) return -1;
  if (op == "PointwiseDepthwiseConv") {  // a 1x1 convolution on X, then a depthwise one
    const Shape* w1 = at(inputs, 1);
    const Shape* w2 = at(inputs, 3);
    const double x = known_numel(at(inputs, 0));
    if (!w1 || !w2 || w1->size() != 4 || w2->size() != 4 || x < 0) return -1;
    // X [N, H, W, C] → [N, H, W, E]: E multiply-adds per input value; then k per output value.
    return 2.0 * x * static_cast<double>((*w1)[0]) +
           2.0 * out * static_cast<double>((*w2)[2] * (*w2)[3]);
  }
  if (op == "Attention") {  // Q Kᵀ, softmax (5 per score), then the scores times V
    const Shape* q = at(inputs, 0);
    const Shape* k = at(inputs, 1);
    const double nq = known_numel(q);
    if (!q || !k || nq < 0 || (q->size() != 3 && q->size() != 4) || k->size() != q->size())
      return -1;
    const ir::Attribute* heads = node.attr("q_num_heads");
    if ((*k)[k->size() - 2] < 0) return -1;  // a dynamic key count
    const double sk = static_cast<double>((*k)[k->size() - 2]);
    const double rows = q->size() == 4
                            ? static_cast<double>((*q)[0] * (*q)[1] * (*q)[2])
                            : static_cast<double>((*q)[0] * (*q)[1]) * (heads ? heads->i : 1);
    return 2.0 * sk * (nq + out) + 5.0 * rows * sk;
  }
  if (cls == OpClass::Conv) {
    const Shape* w = at(inputs, op == "QLinearConv" ? 3 : 1);
    if (!w || w->size() < 3) return -1;
    double k = 1;
    for (size_t i = 2; i < w->size(); ++i) k *= static_cast<double>((*w)[i]);
    if (op == "ConvTranspose") {
      // Each input element scatters into w[1] (= C_out / group) channels over the kernel.
      const double x = known_numel(at(inputs, 0));
      return x < 0 ? -1 : 2.0 * x * static_cast<double>((*w)[1]) * k;
    }
    return 2.0 * out * static_cast<double>((*w)[1]) * k;  // w[1] = C_in / group
  }
  if (cls == OpClass::MatMul) {
    const Shape* a = at(inputs, 0);
    if (!a || a->empty() || a->back() < 0) return -1;
    int64_t k = a->back();
    if (op == "Gemm") {
      const ir::Attribute* ta = node.attr("transA");
      if (ta && ta->i && a->size() == 2) k = (*a)[0];
    }
    return 2.0 * out * static_cast<double>(k);
  }
  if (cls == OpClass::Pool) {
    if (op.rfind("Global", 0) == 0) return known_numel(at(inputs, 0));
    const ir::Attribute* ks = node.attr("kernel_shape");
    double k = 1;
    if (ks)
      for (int64_t d : ks->ints) k *= static_cast<double>(d);
    return out * k;
  }
  if (cls == OpClass::Normalization || cls == OpClass::Softmax) return out * per_element_ops(op);
  if (cls == OpClass::Reduction) {
    const double x = known_numel(at(inputs, 0));
    return x < 0 ? -1 : x;
  }
  if (cls == OpClass::Resize) {
    // Taps per output element: 1 (nearest), 2 per resized axis (linear), 4 per axis (cubic);
    // counted as if two axes are resized, as in images.
    const ir::Attribute* mode = node.attr("mode");
    const std::string m = mode ? mode->s : "nearest";
    return out * (m == "linear" || m == "bilinear" ? 4.0 : m == "cubic" ? 16.0 : 1.0);
  }
  return out;  // elementwise, and the memory-only ops' nominal count (not used: flops 0)
}

NodeCost node_cost(const ir::Node& node, const std::vector<TensorUse>& inputs,
                   const std::vector<TensorUse>& outputs, const ElementBytes& element_bytes) {
  NodeCost c;
  c.cls = op_class(node);
  c.memory_only = c.cls == OpClass::Other;
  if (c.cls == OpClass::View) return c;
  auto bytes_of = [&](const TensorUse& t) -> double {
    const double n = known_numel(t.shape);
    if (n < 0) {
      c.known = false;
      return 0;
    }
    const double e = element_bytes ? element_bytes(t.dtype, t.constant)
                                   : static_cast<double>(dtype_size(t.dtype));
    return n * e;
  };
  std::vector<const Shape*> in_shapes, out_shapes;
  for (const auto& t : inputs) in_shapes.push_back(t.shape);
  for (const auto& t : outputs) out_shapes.push_back(t.shape);
  const std::string op = base_op(node);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorUse& t = inputs[i];
    if (t.dtype == DType::Undefined && !t.shape) continue;  // omitted optional
    // Gather reads the rows it picks: as many elements as it writes (an embedding table is
    // not streamed whole per token).
    if (i == 0 && t.constant && op == "Gather" && !outputs.empty()) {
      TensorUse rows = outputs[0];
      rows.dtype = t.dtype;
      rows.constant = true;
      c.weight_bytes += bytes_of(rows);
      continue;
    }
    (t.constant ? c.weight_bytes : c.input_bytes) += bytes_of(t);
  }
  for (const auto& t : outputs)
    if (t.shape || t.dtype != DType::Undefined) c.output_bytes += bytes_of(t);
  if (!c.memory_only) {
    const double f = node_flops(node, in_shapes, out_shapes);
    if (f < 0) c.known = false;
    else
      c.flops = f;
  }
  return c;
}

NodeCost estimate_cost(const ir::Node& node, const ir::Graph& graph,
                       const ElementBytes& element_bytes) {
  std::vector<Shape> in_store(node.inputs.size()), out_store(node.outputs.size());
  auto use = [&](const std::string& name, Shape* store) {
    TensorUse u;
    if (name.empty()) return u;
    if (auto it = graph.initializers.find(name); it != graph.initializers.end()) {
      *store = it->second.shape();
      u.shape = store;
      u.dtype = it->second.dtype();
      u.constant = true;
    } else if (const ir::TypeInfo* t = graph.type_of(name);
               t && t->kind == ir::TypeInfo::Kind::Tensor) {
      u.dtype = t->elem;
      if (t->has_shape) {
        *store = t->dims;
        u.shape = store;
      }
    } else {
      // A value of unknown type still exists: mark it so its bytes count as unknown.
      u.dtype = DType::Float32;
    }
    return u;
  };
  std::vector<TensorUse> in, out;
  for (size_t i = 0; i < node.inputs.size(); ++i) in.push_back(use(node.inputs[i], &in_store[i]));
  for (size_t i = 0; i < node.outputs.size(); ++i)
    out.push_back(use(node.outputs[i], &out_store[i]));
  return node_cost(node, in, out, element_bytes);
}

double estimate_flops(const ir::Node& node, const ir::Graph& graph) {
  const NodeCost c = estimate_cost(node, graph);
  return c.known ? c.flops : -1;
}

}  // namespace polyinfer
