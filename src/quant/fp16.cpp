#include "quant/fp16.h"

#include <map>

#include "quant/rewrite_util.h"

namespace polyinfer::quant {

bool fp16_safe(const std::string& op) {
  // Ops whose float inputs and outputs share one type and whose results do not accumulate long
  // sums or cross exponent ranges: half precision costs them a rounding per element at most
  // (Conv/MatMul/Gemm accumulate, but every 16-bit kernel of note accumulates in float32).
  static const std::set<std::string> safe = {
      "Conv", "ConvTranspose", "MatMul", "Gemm", "Add", "Sub", "Mul", "Neg", "Abs", "Max", "Min",
      "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf", "Clip",
      "Elu", "Selu", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
      "BatchNormalization", "Concat", "Split", "Slice", "Gather", "Reshape", "Flatten", "Squeeze",
      "Unsqueeze", "Transpose", "Expand", "Tile", "Pad", "Where", "Identity", "DepthToSpace",
      "SpaceToDepth",
      // x·Φ(x) is bounded by |x| and computed per element (in float32 by every kernel).
      "Gelu"};
  return safe.count(op) > 0;
}

namespace {

// The node runs in 16 bits under these options (its values permitting).
bool convertible(const ir::Node& n, const Fp16Options& o) {
  if (n.domain.empty()) return fp16_safe(n.op_type);
  // The fused products take the ONNX ops' 16-bit rules; LayerNormalization (a reduction) and
  // the channels-last Nhwc* forms (oneDNN float32 kernels on the CPU) stay float32.
  static const std::set<std::string> fused = {"FusedConv", "FusedGemm", "FusedMatMul", "Gelu"};
  return o.fused && n.domain == "ai.polyinfer" && fused.count(n.op_type) > 0;
}

// Gives `to` the type of `from` with element type `elem`, when the graph knows that type.
void set_type(ir::Graph& g, const std::string& from, const std::string& to, DType elem) {
  ir::TypeInfo t;
  if (const ir::TypeInfo* k = g.type_of(from)) {
    t = *k;
  } else if (auto it = g.initializers.find(from); it != g.initializers.end()) {
    t.kind = ir::TypeInfo::Kind::Tensor;
    t.has_shape = true;
    t.dims = it->second.shape();
    t.dim_params.assign(t.dims.size(), "");
  } else {
    return;
  }
  t.elem = elem;
  g.value_types[to] = t;
}

// Ops that take a tensor of any type without computing on its values: no Cast is needed for
// them whatever the precision of their input.
bool type_agnostic(const ir::Node& n) {
  return n.domain.empty() && (n.op_type == "Shape" || n.op_type == "Size");
}

bool known_type(const ir::Graph& g, const std::string& v) {
  if (g.initializers.count(v)) return true;
  const ir::TypeInfo* t = g.type_of(v);
  return t && t->kind == ir::TypeInfo::Kind::Tensor && t->elem != DType::Undefined;
}

template <class H> Tensor narrowed(const Tensor& t) {
  std::vector<H> h(size_t(t.numel()));
  const float* x = t.data<float>();
  for (size_t i = 0; i < h.size(); ++i) h[i] = H(x[i]);  // both round to nearest even
  return Tensor::from_vector<H>(t.shape(), h);
}

// A float32 initializer in the 16-bit type `type` (Float16 or BFloat16).
Tensor to_half(const Tensor& t, DType type) {
  return type == DType::BFloat16 ? narrowed<BFloat16>(t) : narrowed<Float16>(t);
}

// Float types that float32 holds exactly: a Cast from one to float32 and back is the identity.
bool widens_exactly_to_float32(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

}  // namespace

Fp16Report convert_fp16(ir::Graph& g, const Fp16Options& o) {
  PI_CHECK(o.type == DType::Float16 || o.type == DType::BFloat16, InvalidArgument,
           "the half-precision conversion targets float16 or bfloat16, not ", dtype_name(o.type));
  const DType half_type = o.type;
  // Names of the values and Casts the rewrite adds say which 16-bit type they hold.
  const std::string tag = half_type == DType::BFloat16 ? "bf16" : "fp16";
  const int opset = default_opset(g);
  Namer name(g);
  Fp16Report report;

  // Values a subgraph reads from outside keep float32: its body was typed against them.
  std::set<std::string> outer_reads;
  for (const auto& n : g.nodes)
    outer_reads.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());

  // 1. Which nodes run in 16 bits: safe ops whose every float input and output is a known
  // float32 tensor (and which have at least one).
  std::vector<bool> half(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (!convertible(n, o) || named_in(n, o.exclude) || !n.implicit_inputs.empty()) continue;
    bool ok = true, any_float = false;
    for (const auto& v : n.outputs) {
      ok = ok && !v.empty() && known_type(g, v) && !outer_reads.count(v);
      if (ok && is_float32(g, v)) any_float = true;
      if (ok && !is_float32(g, v) && is_float(g.type_of(v)->elem)) ok = false;  // other float types
    }
    for (const auto& v : n.inputs)
      if (!v.empty()) {
        ok = ok && known_type(g, v);
        if (ok && is_float32(g, v)) any_float = true;
        else if (ok) {
          const DType t =
              g.initializers.count(v) ? g.initializers.at(v).dtype() : g.type_of(v)->elem;
          ok = !is_float(t);
        }
      }
    half[i] = ok && any_float;
  }

  // 2. Where each float32 value lives: in half when its producer runs in half.
  std::map<std::string, bool> home_half;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& v : g.nodes[i].outputs)
      if (!v.empty() && is_float32(g, v)) home_half[v] = half[i];

  // Graph outputs keep float32: a half producer writes a renamed value and a Cast restores it.
  std::vector<ir::Node> tail;
  for (const auto& out : g.outputs) {
    auto h = home_half.find(out.name);
    if (h == home_half.end() || !h->second) continue;
    const std::string renamed = name(out.name + "_" + tag);
    for (auto& n : g.nodes) {
      for (auto& v : n.outputs)
        if (v == out.name) v = renamed;
      for (auto& v : n.inputs)
        if (v == out.name) v = renamed;
    }
    home_half[renamed] = true;
    home_half[out.name] = false;
    // The graph output's declared type (outputs hold it, not value_types), made 16-bit below.
    if (const ir::TypeInfo* t = g.type_of(out.name)) g.value_types[renamed] = *t;
    ir::Node c = make_node("Cast", name(out.name + "_Cast"), {renamed}, {out.name}, opset);
    set_int_attr(c, "to", int64_t(DType::Float32));
    tail.push_back(std::move(c));
    ++report.casts;
  }
  for (const auto& [v, h] : home_half)
    if (h)
      if (auto t = g.value_types.find(v); t != g.value_types.end()) t->second.elem = half_type;

  // 3. Initializers read only in half become half; those read in both get a half copy.
  std::map<std::string, int> half_readers, float_readers;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& v : g.nodes[i].inputs)
      if (g.initializers.count(v) && g.initializers.at(v).dtype() == DType::Float32)
        ++(half[i] ? half_readers : float_readers)[v];
  std::set<std::string> graph_io;
  for (const auto& v : g.inputs) graph_io.insert(v.name);
  for (const auto& v : g.outputs) graph_io.insert(v.name);
  std::map<std::string, std::string> half_copy;
  for (const auto& [v, count] : half_readers) {
    const Tensor& t = g.initializers.at(v);
    report.float_bytes += int64_t(t.nbytes());
    report.half_bytes += int64_t(t.nbytes() / 2);
    if (!float_readers.count(v) && !graph_io.count(v) && !outer_reads.count(v)) {
      g.initializers[v] = to_half(t, half_type);
      half_copy[v] = v;
      if (auto ty = g.value_types.find(v); ty != g.value_types.end()) ty->second.elem = half_type;
    } else {
      const std::string c = name(v + "_" + tag);
      g.initializers[c] = to_half(t, half_type);
      half_copy[v] = c;
    }
  }

  // 4. Casts where a value meets a node of the other precision (one per value and direction).
  std::map<std::string, std::string> to_half_cast, to_float_cast;
  std::vector<ir::Node> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    ir::Node& n = g.nodes[i];
    if (!type_agnostic(n))
      for (auto& v : n.inputs) {
        if (v.empty()) continue;
        if (half[i] && half_copy.count(v)) {
          v = half_copy[v];
          continue;
        }
        const bool is_half = home_half.count(v) && home_half[v];
        const bool is_f32 = !is_half && is_float32(g, v);
        if (half[i] && is_f32) {
          auto [it, fresh] = to_half_cast.try_emplace(v, "");
          if (fresh) {
            it->second = name(v + "_to_" + tag);
            // Kernels read their inputs' types at creation: the Cast's output needs one.
            set_type(g, v, it->second, half_type);
            ir::Node c = make_node("Cast", name(v + "_Cast_" + tag), {v}, {it->second}, opset);
            set_int_attr(c, "to", int64_t(half_type));
            out.push_back(std::move(c));
            ++report.casts;
          }
          v = it->second;
        } else if (!half[i] && is_half) {
          auto [it, fresh] = to_float_cast.try_emplace(v, "");
          if (fresh) {
            it->second = name(v + "_to_fp32");
            set_type(g, v, it->second, DType::Float32);
            ir::Node c = make_node("Cast", name(v + "_Cast_fp32"), {v}, {it->second}, opset);
            set_int_attr(c, "to", int64_t(DType::Float32));
            out.push_back(std::move(c));
            ++report.casts;
          }
          v = it->second;
        }
      }
    bool floaty = false;
    for (const auto& v : n.outputs) floaty = floaty || home_half.count(v);
    if (floaty) ++(half[i] ? report.fp16_nodes : report.fp32_nodes);
    out.push_back(std::move(n));
  }
  for (auto& c : tail) out.push_back(std::move(c));
  g.nodes = std::move(out);
  // A half copy may have left its float original unread.
  std::set<std::string> read;
  for (const auto& n : g.nodes) {
    read.insert(n.inputs.begin(), n.inputs.end());
    read.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  }
  for (auto it = g.initializers.begin(); it != g.initializers.end();)
    it = read.count(it->first) || graph_io.count(it->first) ? std::next(it)
                                                            : g.initializers.erase(it);
  g.sort_topologically();
  report.casts_removed = fold_casts(g);
  return report;
}

int fold_casts(ir::Graph& g) {
  const auto elem_of = [&g](const std::string& v) {
    if (auto it = g.initializers.find(v); it != g.initializers.end()) return it->second.dtype();
    const ir::TypeInfo* t = g.type_of(v);
    return t && t->kind == ir::TypeInfo::Kind::Tensor ? t->elem : DType::Undefined;
  };
  const auto cast_to = [](const ir::Node& n) {
    const ir::Attribute* a = n.attr("to");
    return a ? DType(a->i) : DType::Undefined;
  };
  std::set<std::string> pinned;  // graph outputs and values subgraphs read: never renamed
  for (const auto& o : g.outputs) pinned.insert(o.name);
  for (const auto& n : g.nodes) pinned.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  int removed = 0;
  for (bool changed = true; changed;) {
    changed = false;
    std::map<std::string, size_t> producer;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (const auto& v : g.nodes[i].outputs) producer[v] = i;
    for (size_t i = 0; i < g.nodes.size() && !changed; ++i) {
      const ir::Node& c = g.nodes[i];
      if (!c.domain.empty() || c.op_type != "Cast" || c.inputs.size() != 1 ||
          c.outputs.size() != 1 || pinned.count(c.outputs[0]))
        continue;
      const DType to = cast_to(c);
      std::string source;  // what the Cast's readers read instead
      if (to != DType::Undefined && elem_of(c.inputs[0]) == to) {
        source = c.inputs[0];
      } else if (widens_exactly_to_float32(to)) {
        auto p = producer.find(c.inputs[0]);
        if (p == producer.end()) continue;
        const ir::Node& first = g.nodes[p->second];
        if (first.domain.empty() && first.op_type == "Cast" && first.inputs.size() == 1 &&
            cast_to(first) == DType::Float32 && elem_of(first.inputs[0]) == to)
          source = first.inputs[0];
      }
      if (source.empty()) continue;
      const std::string gone = c.outputs[0];
      g.nodes.erase(g.nodes.begin() + std::ptrdiff_t(i));
      for (auto& n : g.nodes)
        for (auto& v : n.inputs)
          if (v == gone) v = source;
      g.value_types.erase(gone);
      ++removed;
      changed = true;
    }
  }
  // Casts the folding left unread (the first of a pair read by nothing else).
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::string> read(pinned);
    for (const auto& n : g.nodes) read.insert(n.inputs.begin(), n.inputs.end());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& c = g.nodes[i];
      if (c.domain.empty() && c.op_type == "Cast" && c.outputs.size() == 1 &&
          !read.count(c.outputs[0])) {
        g.value_types.erase(c.outputs[0]);
        g.nodes.erase(g.nodes.begin() + std::ptrdiff_t(i));
        ++removed;
        changed = true;
        break;
      }
    }
  }
  return removed;
}

}  // namespace polyinfer::quant
