#include "opt/graph_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/dispatch.h"

namespace polyinfer::opt {

Uses::Uses(const ir::Graph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    for (const auto& o : n.outputs)
      if (!o.empty()) producer_[o] = static_cast<int>(i);
    for (const auto& in : n.inputs)
      if (!in.empty()) readers_[in].push_back(static_cast<int>(i));
    for (const auto& in : n.implicit_inputs) subgraph_reads_.insert(in);
  }
  for (const auto& v : g.outputs) outputs_.insert(v.name);
}

int Uses::producer(const std::string& v) const {
  auto it = producer_.find(v);
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<int>& Uses::readers(const std::string& v) const {
  static const std::vector<int> kNone;
  auto it = readers_.find(v);
  return it == readers_.end() ? kNone : it->second;
}

bool Uses::single_reader(const std::string& v) const {
  return readers(v).size() == 1 && !is_graph_output(v) && !read_by_subgraph(v);
}

bool Uses::unused(const std::string& v) const {
  return readers(v).empty() && !is_graph_output(v) && !read_by_subgraph(v);
}

bool has_op(const ir::Graph& g, std::initializer_list<const char*> ops) {
  for (const auto& n : g.nodes)
    for (const char* op : ops)
      if (n.op_type == op) return true;
  return false;
}

namespace {

thread_local const Scope* current_scope = nullptr;

// Every name `g` uses (values, nodes), and with `nested` those of its subgraphs too.
void collect_names(const ir::Graph& g, bool nested, std::unordered_set<std::string>& out) {
  for (const auto& v : g.inputs) out.insert(v.name);
  for (const auto& v : g.outputs) out.insert(v.name);
  for (const auto& [name, t] : g.initializers) out.insert(name);
  for (const auto& [name, t] : g.value_types) out.insert(name);
  for (const auto& n : g.nodes) {
    out.insert(n.name);
    out.insert(n.outputs.begin(), n.outputs.end());
    out.insert(n.inputs.begin(), n.inputs.end());
    out.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
    if (!nested) continue;
    for (const auto& [key, a] : n.attrs) {
      if (a.g) collect_names(*a.g, true, out);
      for (const auto& sg : a.graphs)
        if (sg) collect_names(*sg, true, out);
    }
  }
}

// The names `g` itself defines: its inputs and its nodes' outputs (initializers aside).
std::unordered_set<std::string> defined_values(const ir::Graph& g) {
  std::unordered_set<std::string> d;
  for (const auto& v : g.inputs) d.insert(v.name);
  for (const auto& n : g.nodes) d.insert(n.outputs.begin(), n.outputs.end());
  return d;
}

}  // namespace

ScopeGuard::ScopeGuard(const Scope* s) : saved_(current_scope) { current_scope = s; }
ScopeGuard::~ScopeGuard() { current_scope = saved_; }

Scope make_scope(const ir::Graph& parent, const Scope* outer, const ir::Graph& body) {
  Scope s;
  s.body = &body;
  s.parent = &parent;
  s.outer = outer;
  for (const auto& [name, t] : parent.initializers) s.constants[name] = &t;
  if (outer) {
    const auto hidden = defined_values(parent);
    for (const auto& [name, t] : outer->constants)
      if (!hidden.count(name) && !parent.initializers.count(name)) s.constants.emplace(name, t);
  }
  for (const auto& name : defined_values(body)) s.constants.erase(name);
  for (const auto& name : body.free_values()) {
    const ir::TypeInfo* t = parent.type_of(name);
    if (!t && outer) {
      auto it = outer->types.find(name);
      if (it != outer->types.end()) t = it->second;
    }
    if (t) s.types[name] = t;
  }
  return s;
}

const ir::TypeInfo* type_of(const ir::Graph& g, const std::string& v) {
  if (const ir::TypeInfo* t = g.type_of(v)) return t;
  if (current_scope && current_scope->body == &g) {
    auto it = current_scope->types.find(v);
    if (it != current_scope->types.end()) return it->second;
  }
  return nullptr;
}

std::vector<std::string> subgraph_reads(const ir::Node& n) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& [key, a] : n.attrs) {
    auto add = [&](const ir::Graph& sub) {
      for (const auto& v : sub.free_values())
        if (seen.insert(v).second) out.push_back(v);
    };
    if (a.g) add(*a.g);
    for (const auto& sg : a.graphs)
      if (sg) add(*sg);
  }
  return out;
}

const Tensor* constant(const ir::Graph& g, const std::string& v) {
  auto it = g.initializers.find(v);
  if (it != g.initializers.end()) return &it->second;
  if (current_scope && current_scope->body == &g) {
    auto c = current_scope->constants.find(v);
    if (c != current_scope->constants.end()) return c->second;
  }
  return nullptr;
}

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  dispatch(NumericTypes{} + TypeList<bool>{}, t.dtype(), "optimizer", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(compute_t<T>(p[i]));
  });
  return out;
}

std::optional<double> scalar_constant(const ir::Graph& g, const std::string& v) {
  const Tensor* t = constant(g, v);
  if (!t || t->numel() != 1 || t->dtype() == DType::String) return std::nullopt;
  try {
    return to_doubles(*t)[0];
  } catch (const Error&) {
    return std::nullopt;  // a dtype the dispatch does not cover
  }
}

std::optional<std::pair<float, float>> clip_bounds(const ir::Graph& g, const ir::Node& n) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (n.opset < 11) {
    if (n.inputs.size() != 1) return std::nullopt;
    return std::pair{attr_float(n, "min", -inf), attr_float(n, "max", inf)};
  }
  if (n.inputs.size() > 3) return std::nullopt;
  float bound[2] = {-inf, inf};
  for (size_t k = 1; k < n.inputs.size(); ++k) {
    if (n.inputs[k].empty()) continue;
    const auto v = scalar_constant(g, n.inputs[k]);
    if (!v) return std::nullopt;
    bound[k - 1] = to_float(*v);
  }
  return std::pair{bound[0], bound[1]};
}

bool is_scalar(const ir::Graph& g, const std::string& v, double want, double tol) {
  const auto s = scalar_constant(g, v);
  return s && std::fabs(*s - want) <= std::max(1e-6, tol * std::fabs(want));
}

float to_float(double v) {
  // A double beyond float's range converts to infinity, as float arithmetic would have given;
  // a plain cast would be undefined behaviour.
  constexpr double kMax = std::numeric_limits<float>::max();
  if (v > kMax) return std::numeric_limits<float>::infinity();
  if (v < -kMax) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

Tensor float_tensor(const Shape& shape, const std::vector<double>& values) {
  std::vector<float> f(values.size());
  for (size_t i = 0; i < f.size(); ++i) f[i] = to_float(values[i]);
  return Tensor::from_vector<float>(shape, f);
}

std::optional<Shape> static_shape(const ir::Graph& g, const std::string& v) {
  if (const Tensor* t = constant(g, v)) return t->shape();
  const ir::TypeInfo* t = type_of(g, v);
  if (!t || t->kind != ir::TypeInfo::Kind::Tensor || !t->has_shape) return std::nullopt;
  for (size_t i = 0; i < t->dims.size(); ++i)
    if (t->dims[i] < 0) return std::nullopt;
  return t->dims;
}

int known_rank(const ir::Graph& g, const std::string& v) {
  if (const Tensor* t = constant(g, v)) return t->rank();
  const ir::TypeInfo* t = type_of(g, v);
  if (!t || t->kind != ir::TypeInfo::Kind::Tensor || !t->has_shape) return -1;
  return static_cast<int>(t->dims.size());
}

DType elem_type(const ir::Graph& g, const std::string& v) {
  if (const Tensor* t = constant(g, v)) return t->dtype();
  const ir::TypeInfo* t = type_of(g, v);
  if (!t || t->kind != ir::TypeInfo::Kind::Tensor) return DType::Undefined;
  return t->elem;
}

bool same_shape(const ir::Graph& g, const std::string& a, const std::string& b) {
  const ir::TypeInfo* ta = type_of(g, a);
  const ir::TypeInfo* tb = type_of(g, b);
  if (!ta || !tb || !ta->has_shape || !tb->has_shape || ta->dims.size() != tb->dims.size())
    return false;
  for (size_t i = 0; i < ta->dims.size(); ++i) {
    const std::string pa = i < ta->dim_params.size() ? ta->dim_params[i] : "";
    const std::string pb = i < tb->dim_params.size() ? tb->dim_params[i] : "";
    if (ta->dims[i] >= 0 && ta->dims[i] == tb->dims[i]) continue;
    if (!pa.empty() && pa == pb) continue;
    return false;
  }
  return true;
}

// A present attribute of another type is a malformed model: say so now rather than rewrite
// with the default (the kernels would reject the same node at load, KernelInfo::attr_*).
static const ir::Attribute* typed_attr(const ir::Node& n, const std::string& key,
                                       ir::Attribute::Type type, const char* type_name) {
  const ir::Attribute* a = n.attr(key);
  PI_CHECK(!a || a->type == type, InvalidModel, n.label(), ": attribute '", key, "' must be ",
           type_name);
  return a;
}

int64_t attr_int(const ir::Node& n, const std::string& key, int64_t def) {
  const ir::Attribute* a = typed_attr(n, key, ir::Attribute::Type::Int, "an int");
  return a ? a->i : def;
}

float attr_float(const ir::Node& n, const std::string& key, float def) {
  const ir::Attribute* a = typed_attr(n, key, ir::Attribute::Type::Float, "a float");
  return a ? a->f : def;
}

std::string attr_string(const ir::Node& n, const std::string& key, const std::string& def) {
  const ir::Attribute* a = n.attr(key);
  return a && a->type == ir::Attribute::Type::String ? a->s : def;
}

std::vector<int64_t> attr_ints(const ir::Node& n, const std::string& key) {
  const ir::Attribute* a = n.attr(key);
  return a && a->type == ir::Attribute::Type::Ints ? a->ints : std::vector<int64_t>{};
}

ir::Attribute make_int(int64_t v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::Int;
  a.i = v;
  return a;
}

ir::Attribute make_float(float v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::Float;
  a.f = v;
  return a;
}

ir::Attribute make_string(const std::string& v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::String;
  a.s = v;
  return a;
}

ir::Attribute make_floats(const std::vector<float>& v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::Floats;
  a.floats = v;
  return a;
}

ir::Attribute make_ints(const std::vector<int64_t>& v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::Ints;
  a.ints = v;
  return a;
}

bool has_subgraph(const ir::Node& n) {
  if (!n.implicit_inputs.empty()) return true;
  for (const auto& [k, a] : n.attrs)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

bool is_random_op(const ir::Node& n) {
  static const std::set<std::string> kRandom = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
      "Multinomial",  "Bernoulli",     "Dropout"};
  return (n.domain.empty() || n.domain == "ai.onnx") && kRandom.count(n.op_type) > 0;
}

std::string other_input(const ir::Node& n, const std::string& v) {
  if (n.inputs.size() != 2) return "";
  return n.inputs[0] == v ? n.inputs[1] : n.inputs[0];
}

std::string NameGen::fresh(const std::string& base) {
  if (!gathered_) {
    gathered_ = true;
    // Subgraphs' names too, and the enclosing graphs': ONNX wants a name defined once across
    // nested scopes, so that a body never hides a value of its enclosing graph.
    collect_names(g_, true, used_);
    if (current_scope && current_scope->body == &g_)
      for (const Scope* s = current_scope; s; s = s->outer) collect_names(*s->parent, false, used_);
  }
  std::string name = base;
  for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
  used_.insert(name);
  return name;
}

void use_poly_domain(ir::Graph& g) { g.opsets[kPolyDomain] = kPolyOpset; }

ir::Node poly_node(ir::Graph& g, const std::string& op, const std::string& name) {
  use_poly_domain(g);
  ir::Node n;
  n.op_type = op;
  n.domain = kPolyDomain;
  n.opset = kPolyOpset;
  n.name = name;
  return n;
}

void erase_dead(ir::Graph& g, const std::vector<bool>& dead) {
  std::vector<ir::Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (i >= dead.size() || !dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

}  // namespace polyinfer::opt

namespace polyinfer::opt {

bool is_topological(const ir::Graph& g) {
  std::set<std::string> later;  // outputs of nodes not yet reached
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs)
      if (!o.empty()) later.insert(o);
  for (const auto& n : g.nodes) {
    for (const auto& i : n.inputs)
      if (!i.empty() && later.count(i)) return false;
    for (const auto& i : n.implicit_inputs)
      if (later.count(i)) return false;
    for (const auto& o : n.outputs) later.erase(o);
  }
  return true;
}

void prune_unused(ir::Graph& g) {
  std::set<std::string> live;
  for (const auto& v : g.inputs) live.insert(v.name);
  for (const auto& v : g.outputs) live.insert(v.name);
  for (const auto& n : g.nodes) {
    live.insert(n.inputs.begin(), n.inputs.end());
    live.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
    live.insert(n.outputs.begin(), n.outputs.end());
  }
  for (auto it = g.initializers.begin(); it != g.initializers.end();)
    it = live.count(it->first) ? std::next(it) : g.initializers.erase(it);
  for (auto it = g.value_types.begin(); it != g.value_types.end();)
    it = live.count(it->first) ? std::next(it) : g.value_types.erase(it);
}

}  // namespace polyinfer::opt
