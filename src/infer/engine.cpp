// The walk: every node in order, its rule given a Context, the outputs merged into the graph's
// types; subgraphs walked with their enclosing graph's values in scope.
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "infer/infer.h"

namespace polyinfer::infer {

namespace {

struct RuleRegistry {
  std::mutex mu;
  std::unordered_map<std::string, Rule> rules;  // "domain\0op" -> rule
};

RuleRegistry& registry() {
  static RuleRegistry r;
  return r;
}

std::string key(const std::string& domain, const std::string& op) {
  return (domain == "ai.onnx" ? std::string() : domain) + '\0' + op;
}

// Integer tensors of rank 0 or 1 up to this many elements have their values carried.
constexpr int64_t kMaxCarried = 64;

bool carried_tensor(const Tensor& t) {
  return (t.dtype() == DType::Int64 || t.dtype() == DType::Int32) && t.rank() <= 1 &&
         t.numel() <= kMaxCarried && t.defined();
}

Dims ints_of(const Tensor& t) {
  Dims out;
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i)
    out.push_back(
        Dim::of(t.dtype() == DType::Int64 ? t.data<int64_t>()[i] : int64_t{t.data<int32_t>()[i]}));
  return out;
}

// A type with at least as much information as either: `inferred` where it knows a thing,
// `declared` where only it does.
ir::TypeInfo merged(const ir::TypeInfo& declared, const ir::TypeInfo& inferred) {
  if (declared.kind != inferred.kind)
    return inferred.kind == ir::TypeInfo::Kind::Unknown ? declared : inferred;
  if (inferred.kind != ir::TypeInfo::Kind::Tensor) {
    ir::TypeInfo t = inferred.inner ? inferred : declared;
    if (t.key == DType::Undefined) t.key = inferred.inner ? declared.key : inferred.key;  // a map's
    if (inferred.inner && declared.inner)
      t.inner = std::make_shared<ir::TypeInfo>(merged(*declared.inner, *inferred.inner));
    return t;
  }
  ir::TypeInfo t = inferred;
  if (t.elem == DType::Undefined) t.elem = declared.elem;
  if (!inferred.has_shape) {
    t.has_shape = declared.has_shape;
    t.dims = declared.dims;
    t.dim_params = declared.dim_params;
    return t;
  }
  if (!declared.has_shape || declared.dims.size() != inferred.dims.size()) return t;
  t.dim_params.resize(t.dims.size());
  for (size_t d = 0; d < t.dims.size(); ++d) {
    if (t.dims[d] >= 0) continue;
    const std::string decl_sym = d < declared.dim_params.size() ? declared.dim_params[d] : "";
    if (declared.dims[d] >= 0) {
      t.dims[d] = declared.dims[d];
      t.dim_params[d].clear();
    } else if (t.dim_params[d].empty()) {
      t.dim_params[d] = decl_sym;
    }
  }
  return t;
}

bool same(const ir::TypeInfo& a, const ir::TypeInfo& b) { return a.str() == b.str(); }

}  // namespace

bool register_rule(const char* domain, const char* op_type, Rule rule) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.rules[key(domain, op_type)] = rule;
  return true;
}

Rule find_rule(const std::string& domain, const std::string& op_type) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.rules.find(key(domain, op_type));
  return it == r.rules.end() ? nullptr : it->second;
}

ir::TypeInfo type_of_tensor(const Tensor& t) {
  ir::TypeInfo ti;
  ti.elem = t.dtype();
  ti.has_shape = true;
  ti.dims = t.shape();
  ti.dim_params.assign(ti.dims.size(), "");
  return ti;
}

std::optional<Dims> dims_of(const ir::TypeInfo& t) {
  if (t.kind != ir::TypeInfo::Kind::Tensor || !t.has_shape) return std::nullopt;
  Dims d(t.dims.size());
  for (size_t i = 0; i < d.size(); ++i) {
    if (t.dims[i] >= 0) d[i] = Dim::of(t.dims[i]);
    else if (i < t.dim_params.size() && !t.dim_params[i].empty())
      d[i] = Dim::named(t.dim_params[i]);
  }
  return d;
}

ir::TypeInfo tensor_type(DType elem, const Dims& shape) {
  ir::TypeInfo t;
  t.elem = elem;
  t.has_shape = true;
  for (const Dim& d : shape) {
    const bool number = d.known() && d.value >= 0;
    t.dims.push_back(number ? d.value : -1);
    t.dim_params.push_back(number || d.known() ? "" : d.symbol);
  }
  return t;
}

std::optional<Dims> broadcast(const Dims& a, const Dims& b) {
  const size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    const Dim x = i < r - a.size() ? Dim::of(1) : a[i - (r - a.size())];
    const Dim y = i < r - b.size() ? Dim::of(1) : b[i - (r - b.size())];
    if (x.known() && y.known()) {
      if (x.value != y.value && x.value != 1 && y.value != 1) return std::nullopt;
      out[i] = Dim::of(x.value == 1 ? y.value : x.value);
    } else if (x.known()) {
      out[i] = x.value == 1 ? y : x;
    } else if (y.known()) {
      out[i] = y.value == 1 ? x : y;
    } else {
      out[i] = x.symbol == y.symbol ? x : Dim::unknown();
    }
    if (out[i].known() && out[i].value < 0) return std::nullopt;
  }
  return out;
}

// The state of one graph's inference; `outer` is its enclosing graph's.
class Inference {
 public:
  Inference(ir::Graph& g, const Inference* outer, Report& report)
      : g_(g), outer_(outer), report_(report) {
    for (const auto& [name, t] : g_.initializers)
      if (carried_tensor(t)) ints_[name] = ints_of(t);
    for (const auto& n : g_.nodes)
      if (n.op_type == "Constant" && n.domain.empty() && n.outputs.size() == 1)
        if (const ir::Attribute* v = n.attr("value");
            v && v->type == ir::Attribute::Type::Tensor && v->t.defined())
          constants_[n.outputs[0]] = &v->t;
  }

  void run() {
    for (const ir::Node& n : g_.nodes) {
      ++report_.nodes;
      for (auto& [name, a] : n.attrs) {
        if (a.g) Inference(*a.g, this, report_).run();
        for (auto& sg : a.graphs)
          if (sg) Inference(*sg, this, report_).run();
      }
      Rule rule = find_rule(n.domain, n.op_type);
      if (!rule) {
        note_once("no inference rule for " + (n.domain.empty() ? std::string() : n.domain + ".") +
                  n.op_type + ": its outputs' types are learnt when it runs");
      } else {
        Context ctx(*this, n);
        try {
          rule(ctx);
        } catch (const std::exception& e) {
          note_once(n.label() + ": inference left its outputs unknown (" + e.what() + ")");
        }
      }
      for (const auto& o : n.outputs)
        if (!o.empty() && !type_of(o)) ++report_.unknown;
    }
  }

  const ir::TypeInfo* type_of(const std::string& name) const {
    if (const ir::TypeInfo* t = g_.type_of(name)) return t;
    if (auto it = g_.initializers.find(name); it != g_.initializers.end()) {
      auto& cached = initializer_types_[name];
      if (!cached.has_shape) cached = type_of_tensor(it->second);
      return &cached;
    }
    if (auto it = constants_.find(name); it != constants_.end()) {
      auto& cached = initializer_types_[name];
      if (!cached.has_shape) cached = type_of_tensor(*it->second);
      return &cached;
    }
    return defines(name) || !outer_ ? nullptr : outer_->type_of(name);
  }

  const Tensor* constant(const std::string& name) const {
    if (auto it = g_.initializers.find(name); it != g_.initializers.end()) return &it->second;
    if (auto it = constants_.find(name); it != constants_.end()) return it->second;
    return defines(name) || !outer_ ? nullptr : outer_->constant(name);
  }

  std::optional<Dims> ints(const std::string& name) const {
    if (auto it = ints_.find(name); it != ints_.end()) return it->second;
    if (const Tensor* t = constant(name); t && carried_tensor(*t)) return ints_of(*t);
    return defines(name) || !outer_ ? std::nullopt : outer_->ints(name);
  }

  void set_ints(const std::string& name, const Dims& v) {
    if (static_cast<int64_t>(v.size()) <= kMaxCarried) ints_[name] = v;
  }

  void set_type(const std::string& name, const ir::TypeInfo& inferred) {
    for (auto& out : g_.outputs)
      if (out.name == name) {
        const ir::TypeInfo m = merged(out.type, inferred);
        if (!same(m, out.type)) ++report_.inferred;
        out.type = m;
        return;
      }
    auto it = g_.value_types.find(name);
    if (it == g_.value_types.end()) {
      g_.value_types[name] = inferred;
      ++report_.inferred;
      return;
    }
    const ir::TypeInfo m = merged(it->second, inferred);
    if (!same(m, it->second)) ++report_.inferred;
    it->second = m;
  }

 private:
  // Whether this graph itself defines `name` (so an enclosing graph's value of that name is
  // hidden from it).
  bool defines(const std::string& name) const {
    if (g_.initializers.count(name)) return true;
    for (const auto& v : g_.inputs)
      if (v.name == name) return true;
    if (defined_.empty())
      for (const auto& n : g_.nodes)
        for (const auto& o : n.outputs) defined_.insert(o);
    return defined_.count(name) > 0;
  }
  void note_once(const std::string& text) {
    if (noted_.insert(text).second) report_.notes.push_back(text);
  }

  ir::Graph& g_;
  const Inference* outer_;
  Report& report_;
  std::map<std::string, const Tensor*> constants_;  // Constant nodes' values
  std::map<std::string, Dims> ints_;                // carried integer values
  mutable std::map<std::string, ir::TypeInfo> initializer_types_;
  mutable std::set<std::string> defined_;
  std::set<std::string> noted_;
};

// ---- Context ----

const ir::TypeInfo* Context::type(size_t i) const {
  return has_input(i) ? inf_.type_of(node_.inputs[i]) : nullptr;
}

DType Context::elem(size_t i) const {
  const ir::TypeInfo* t = type(i);
  return t && t->kind == ir::TypeInfo::Kind::Tensor ? t->elem : DType::Undefined;
}

std::optional<Dims> Context::shape(size_t i) const {
  const ir::TypeInfo* t = type(i);
  return t ? dims_of(*t) : std::nullopt;
}

int Context::rank(size_t i) const {
  const auto s = shape(i);
  return s ? static_cast<int>(s->size()) : -1;
}

std::optional<Dims> Context::ints(size_t i) const {
  return has_input(i) ? inf_.ints(node_.inputs[i]) : std::nullopt;
}

std::optional<std::vector<int64_t>> Context::known_ints(size_t i) const {
  const auto v = ints(i);
  if (!v) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : *v) {
    if (!d.known()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

const Tensor* Context::constant(size_t i) const {
  return has_input(i) ? inf_.constant(node_.inputs[i]) : nullptr;
}

int64_t Context::attr_int(const std::string& name, int64_t def) const {
  const ir::Attribute* a = node_.attr(name);
  return a && a->type == ir::Attribute::Type::Int ? a->i : def;
}

float Context::attr_float(const std::string& name, float def) const {
  const ir::Attribute* a = node_.attr(name);
  return a && a->type == ir::Attribute::Type::Float ? a->f : def;
}

std::string Context::attr_string(const std::string& name, const std::string& def) const {
  const ir::Attribute* a = node_.attr(name);
  return a && a->type == ir::Attribute::Type::String ? a->s : def;
}

std::optional<std::vector<int64_t>> Context::attr_ints(const std::string& name) const {
  const ir::Attribute* a = node_.attr(name);
  if (!a || a->type != ir::Attribute::Type::Ints) return std::nullopt;
  return a->ints;
}

void Context::set(size_t o, DType elem, const Dims& shape) {
  if (has_output(o)) inf_.set_type(node_.outputs[o], tensor_type(elem, shape));
}

void Context::set_rank(size_t o, DType elem, int rank) {
  if (rank < 0) return set_elem(o, elem);
  set(o, elem, Dims(static_cast<size_t>(rank)));
}

void Context::set_elem(size_t o, DType elem) {
  if (!has_output(o) || elem == DType::Undefined) return;
  ir::TypeInfo t;
  t.elem = elem;
  inf_.set_type(node_.outputs[o], t);
}

void Context::set_type(size_t o, const ir::TypeInfo& t) {
  if (has_output(o)) inf_.set_type(node_.outputs[o], t);
}

void Context::set_like(size_t o, size_t i) {
  if (const ir::TypeInfo* t = type(i)) set_type(o, *t);
}

void Context::set_ints(size_t o, const Dims& values) {
  if (has_output(o)) inf_.set_ints(node_.outputs[o], values);
}

Report infer_types(ir::Graph& graph) {
  Report report;
  Inference(graph, nullptr, report).run();
  return report;
}

Report infer_types(Model& model) {
  Report r = infer_types(*model.graph);
  model.notes.insert(model.notes.end(), r.notes.begin(), r.notes.end());
  return r;
}

}  // namespace polyinfer::infer
