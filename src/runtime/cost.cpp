#include "runtime/cost.h"

#include <algorithm>
#include <cmath>
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

// Dimension i of a shape (counted from the end where negative); -1 where absent or unknown.
int64_t dim_at(const Shape* s, int i) {
  if (!s) return -1;
  const int r = static_cast<int>(s->size());
  const int k = i < 0 ? r + i : i;
  return k >= 0 && k < r ? (*s)[k] : -1;
}

int64_t int_attr(const ir::Node& node, const char* name, int64_t def) {
  const ir::Attribute* a = node.attr(name);
  return a ? a->i : def;
}

// An attention's two products and its softmax: Q Kᵀ over `qk` query elements (rows times the
// head size), the probabilities times V into `out` elements, and 5 operations per score, with
// `keys` keys per query row.
double attention_flops(double qk, double out, double rows, double keys) {
  return 2.0 * keys * (qk + out) + 5.0 * rows * keys;
}

// The key count of com.microsoft attention ops: present_key's `present_axis` where known, else
// the new keys after the past ones (past's `past_axis`; none when the past is absent).
int64_t keys_of(const Shape* present, int present_axis, const Shape* past, int past_axis,
                int64_t new_keys) {
  if (dim_at(present, present_axis) >= 0) return dim_at(present, present_axis);
  if (new_keys < 0) return -1;
  if (!past) return new_keys;
  const int64_t p = dim_at(past, past_axis);
  return p < 0 ? -1 : p + new_keys;
}

// com.microsoft Attention: X [B, S, Hin] times the packed weights [Hin, Dq + Dk + Dv], then
// attention over the past and the new keys (present [2, B, N, P + S, H], past [2, B, N, P, H]).
double ms_attention_flops(const ir::Node& node, const std::vector<const Shape*>& inputs,
                          const std::vector<const Shape*>& outputs, double out) {
  const Shape* x = at(inputs, 0);
  const double nx = known_numel(x);
  const int64_t hin = dim_at(x, -1), cols = dim_at(at(inputs, 1), -1);
  if (!x || x->size() != 3 || nx < 0 || hin <= 0 || cols < 0) return -1;
  const int64_t keys = keys_of(at(outputs, 1), 3, at(inputs, 4), 3, (*x)[1]);
  if (keys < 0) return -1;
  const ir::Attribute* sizes = node.attr("qkv_hidden_sizes");
  const double dq = sizes && sizes->ints.size() == 3 ? static_cast<double>(sizes->ints[0])
                                                     : static_cast<double>(cols) / 3;
  const double tokens = nx / static_cast<double>(hin);
  const double heads = static_cast<double>(int_attr(node, "num_heads", 1));
  return 2.0 * nx * static_cast<double>(cols) +
         attention_flops(tokens * dq, out, tokens * heads, static_cast<double>(keys));
}

// com.microsoft MultiHeadAttention: Q [B, S, D] or packed QKV [B, S, N, 3, H]; K [B, L, D],
// [B, N, L, H] or packed KV [B, L, N, 2, H]; past_key [B, N, P, H]; present_key [B, N, T, H].
double mha_flops(const ir::Node& node, const std::vector<const Shape*>& inputs,
                 const std::vector<const Shape*>& outputs, double out) {
  const Shape* q = at(inputs, 0);
  const double nq = known_numel(q);
  if (!q || (q->size() != 3 && q->size() != 5) || nq < 0) return -1;
  const Shape* k = at(inputs, 1);
  const int64_t new_keys = !k ? (*q)[1] : dim_at(k, k->size() == 4 ? 2 : 1);
  const int64_t keys = keys_of(at(outputs, 1), 2, at(inputs, 6), 2, new_keys);
  if (keys < 0) return -1;
  const double heads =
      q->size() == 5 ? static_cast<double>((*q)[2]) : double(int_attr(node, "num_heads", 1));
  return attention_flops(q->size() == 5 ? nq / 3 : nq, out,
                         static_cast<double>((*q)[0] * (*q)[1]) * heads, static_cast<double>(keys));
}

// com.microsoft GroupQueryAttention: Y [B, S, N * H]; the keys are present_key's [B, Nk, T, H]
// (the whole buffer: an upper bound where the cache is one shared buffer of the longest
// sequence), else past_key's [B, Nk, P, H] and the S new ones.
double gqa_flops(const ir::Node& node, const std::vector<const Shape*>& inputs,
                 const std::vector<const Shape*>& outputs, double out) {
  const Shape* y = at(outputs, 0);
  const int64_t b = dim_at(y, 0), s = dim_at(y, 1), heads = int_attr(node, "num_heads", 0);
  if (b < 0 || s < 0 || heads <= 0) return -1;
  const int64_t keys = keys_of(at(outputs, 1), 2, at(inputs, 3), 2, s);
  if (keys < 0) return -1;
  return attention_flops(out, out, static_cast<double>(b * s * heads), static_cast<double>(keys));
}

// LinearAttention, Q [B, T, Hq * dk], V [B, T, Hkv * dv]: per token each key/value head updates
// its [dk, dv] state (k ⊗ v added: 2 per element; the decay: 1 more; the delta rule's Sᵀk and
// correction: 2 more) and each query head reads it (qᵀ S: 2 per element).
double linear_attention_flops(const ir::Node& node, const std::vector<const Shape*>& inputs) {
  const Shape* q = at(inputs, 0);
  const Shape* v = at(inputs, 2);
  const int64_t hq = int_attr(node, "q_num_heads", 0), hkv = int_attr(node, "kv_num_heads", 0);
  if (!q || !v || q->size() != 3 || v->size() != 3 || hq <= 0 || hkv <= 0 || known_numel(q) < 0 ||
      dim_at(v, 2) < 0)
    return -1;
  const ir::Attribute* rule = node.attr("update_rule");
  const std::string r = rule ? rule->s : "gated_delta";
  const double per_state = 2.0 + (r == "gated" || r == "gated_delta" ? 1 : 0) +
                           (r == "delta" || r == "gated_delta" ? 2 : 0);
  const double dk = static_cast<double>((*q)[2]) / static_cast<double>(hq);
  const double dv = static_cast<double>((*v)[2]) / static_cast<double>(hkv);
  return static_cast<double>((*q)[0] * (*q)[1]) * dk * dv *
         (per_state * static_cast<double>(hkv) + 2.0 * static_cast<double>(hq));
}

// DeformConv: Conv's multiply-adds, plus one sample per input channel, tap and output position,
// interpolated from 2^r corners (a multiply-add each) and scaled by the mask.
double deform_conv_flops(const ir::Node& node, const Shape& w, double out) {
  if (known_numel(&w) < 0) return -1;
  double k = 1;
  for (size_t i = 2; i < w.size(); ++i) k *= static_cast<double>(w[i]);
  const double conv = 2.0 * out * static_cast<double>(w[1]) * k;
  if (w[0] == 0) return conv;
  const double samples = out / static_cast<double>(w[0]) * static_cast<double>(w[1]) *
                         static_cast<double>(int_attr(node, "group", 1)) * k;
  return conv + samples * (2.0 * std::ldexp(1.0, static_cast<int>(w.size() - 2)) + 1);
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
  if (in(op, {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "PointwiseDepthwiseConv",
              "DeformConv", "CausalConvWithState"}))
    return OpClass::Conv;
  if (in(op, {"MatMul", "Gemm", "MatMulInteger", "QLinearMatMul", "MatMulNBits", "Attention",
              "MultiHeadAttention", "GroupQueryAttention", "FlexAttention", "LinearAttention"}))
    return OpClass::MatMul;
  if (in(op, {"MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool",
              "GlobalLpPool"}))
    return OpClass::Pool;
  if (in(op, {"BatchNormalization", "InstanceNormalization", "LayerNormalization",
              "GroupNormalization", "LpNormalization", "MeanVarianceNormalization",
              "RMSNormalization", "SimplifiedLayerNormalization", "SkipLayerNormalization",
              "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization"}))
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
              "Trilu",        "EyeLike"}) ||
      in(op, {"BitCast", "TensorScatter", "GatherBlockQuantized"}))
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
              "CumSum",
              "CumProd",
              "Swish",
              "SwiGLU",
              "FastGelu",
              "BiasGelu",
              "QuickGelu",
              "BiasAdd",
              "RotaryEmbedding"}))
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
  if (node.domain == "com.microsoft") {
    if (op == "Attention") return ms_attention_flops(node, inputs, outputs, out);
    if (op == "MultiHeadAttention") return mha_flops(node, inputs, outputs, out);
    if (op == "GroupQueryAttention") return gqa_flops(node, inputs, outputs, out);
  }
  if (op == "LinearAttention") return linear_attention_flops(node, inputs);
  // ONNX Attention and FlexAttention (4-D Q [B, H, L, E]): Q Kᵀ, softmax (5 per score), then the
  // scores times V.
  if (op == "Attention" || op == "FlexAttention") {
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
    if (op == "DeformConv") return deform_conv_flops(node, *w, out);
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
    const double e = element_bytes ? element_bytes(t.dtype, t.constant) : dtype_bits(t.dtype) / 8.0;
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
    // not streamed whole per token). GatherBlockQuantized reads as many of its data's packed
    // elements (`bits` each in uint8) and one scale and zero point per block_size of them.
    const bool blocks = op == "GatherBlockQuantized";
    if (t.constant && !outputs.empty() && ((i == 0 && op == "Gather") || (blocks && i != 1))) {
      TensorUse rows = outputs[0];
      rows.dtype = t.dtype;
      rows.constant = true;
      double share = 1;
      if (blocks && t.dtype == DType::UInt8)
        share = static_cast<double>(int_attr(node, "bits", 4)) / 8;
      if (blocks && i >= 2)
        share /= static_cast<double>(std::max<int64_t>(1, int_attr(node, "block_size", 128)));
      c.weight_bytes += bytes_of(rows) * share;
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
