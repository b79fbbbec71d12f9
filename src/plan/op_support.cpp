// Op-support profiles: reading them (schema: docs/plan.md) and checking a graph against one.
#include "plan/op_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "opt/graph_util.h"
#include "plan/embedded.h"
#include "plan/json_util.h"
#include "polyinfer/status.h"

namespace polyinfer::plan {

namespace {

using nlohmann::json;

const std::set<std::string> kKinds = {"attr_in",      "input_const",     "const_input_max",
                                      "static_shape", "zero_point_zero", "positive_const",
                                      "text"};

// attr_in values may be written as JSON strings or integers; both compare as decimal strings.
std::string scalar_string(const json& v, const Where& at) {
  if (v.is_string()) return v.get<std::string>();
  at.require(v.is_number_integer(), "must be a string or an integer");
  return std::to_string(v.get<int64_t>());
}

Constraint parse_constraint(const json& c, const Where& at) {
  at.require(c.is_object(), "must be an object with a \"kind\"");
  at.check_keys(c, {"kind", "name", "values", "default_value", "index", "max", "text"});
  Constraint out;
  out.kind = req_string(c, "kind", at);
  at.field("kind").require(kKinds.count(out.kind) > 0, "has unknown kind '", out.kind,
                           "' (known: attr_in, input_const, const_input_max, static_shape, "
                           "zero_point_zero, positive_const, text)");
  out.text = opt_string(c, "text", at);
  out.name = opt_string(c, "name", at);
  if (auto it = c.find("default_value"); it != c.end()) {
    out.default_value = scalar_string(*it, at.field("default_value"));
  }
  if (auto it = c.find("values"); it != c.end()) {
    at.field("values").require(it->is_array() && !it->empty(), "must be a non-empty array");
    for (const json& v : *it) out.values.push_back(scalar_string(v, at.field("values")));
  }
  if (auto it = c.find("index"); it != c.end()) {
    at.field("index").require(it->is_number_integer() && it->get<int64_t>() >= 0,
                              "must be an input index >= 0");
    out.index = static_cast<int>(it->get<int64_t>());
  }
  if (auto it = c.find("max"); it != c.end()) {
    at.field("max").require(it->is_number(), "must be a number");
    out.max = it->get<double>();
  }
  if (out.kind == "attr_in") {
    at.require(!out.name.empty() && !out.values.empty(), "(attr_in) needs \"name\" and \"values\"");
  } else if (out.kind == "input_const" || out.kind == "positive_const") {
    at.require(out.index >= 0, "(", out.kind, ") needs \"index\"");
  } else if (out.kind == "const_input_max") {
    at.require(out.index >= 0 && c.contains("max"),
               "(const_input_max) needs \"index\" and \"max\"");
  } else if (out.kind == "text") {
    at.require(!out.text.empty(), "(text) needs \"text\": the source's own words");
  }
  return out;
}

OpRule parse_rule(const std::string& op, const json& r, const Where& at) {
  OpRule rule;
  rule.op = op;
  if (r.is_boolean()) {
    rule.supported = r.get<bool>();
    return rule;
  }
  at.require(r.is_object(), "must be true, false or {\"supported\": …, \"constraints\": [...]}");
  at.check_keys(r, {"supported", "constraints"});
  rule.supported = opt_bool(r, "supported", true, at);
  if (auto it = r.find("constraints"); it != r.end()) {
    at.field("constraints").require(it->is_array(), "must be an array");
    for (size_t i = 0; i < it->size(); ++i) {
      rule.constraints.push_back(
          parse_constraint((*it)[i], at.field("constraints[" + std::to_string(i) + "]")));
    }
  }
  return rule;
}

OpSupportProfile parse_profile(const json& p, const Where& at) {
  at.require(p.is_object(), "must be an object");
  at.check_keys(p, {"id", "toolchain", "version", "source", "max_opset", "static_shapes_only",
                    "notes", "inherits", "ops"});
  OpSupportProfile out;
  out.id = req_string(p, "id", at);
  Where here = at.named("profile", out.id);
  out.toolchain = req_string(p, "toolchain", here);
  out.version = req_string(p, "version", here);
  out.source = req_string(p, "source", here);
  if (auto it = p.find("max_opset"); it != p.end()) {
    here.field("max_opset").require(it->is_number_integer(), "must be an integer");
    out.max_opset = static_cast<int>(it->get<int64_t>());
  }
  out.static_shapes_only = opt_bool(p, "static_shapes_only", false, here);
  out.notes = opt_strings(p, "notes", here);
  if (auto it = p.find("inherits"); it != p.end()) {
    here.field("inherits")
        .require(it->is_string() && !it->get<std::string>().empty(), "must be a profile id");
    out.inherits = it->get<std::string>();
  }
  auto ops = p.find("ops");
  if (ops == p.end() && !out.inherits.empty()) return out;
  here.field("ops").require(ops != p.end() && ops->is_object(),
                            "must be an object keyed by operator name");
  for (const auto& [op, rule] : ops->items()) {
    out.ops[op] = parse_rule(op, rule, here.field("ops." + op));
  }
  return out;
}

// ---- checking a graph ----

// A constant's elements: an initializer, or the `value` of a Constant node.
struct Constants {
  std::map<std::string, const Tensor*> by_name;
  explicit Constants(const ir::Graph& g) {
    for (const auto& [name, t] : g.initializers) by_name[name] = &t;
    for (const ir::Node& n : g.nodes) {
      const ir::Attribute* v = n.attr("value");
      if (n.op_type == "Constant" && n.domain.empty() && v &&
          v->type == ir::Attribute::Type::Tensor && !n.outputs.empty()) {
        by_name[n.outputs[0]] = &v->t;
      }
    }
  }
  const Tensor* find(const std::string& name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  }
};

struct Verdict {
  bool ok = true;
  bool certain = true;
  std::string reason;
};
Verdict pass() { return {}; }
Verdict reject(std::string why) { return {false, true, std::move(why)}; }
Verdict unsure(std::string why) { return {false, false, std::move(why)}; }

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string fmt(double v) {
  std::string s = std::to_string(v);
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::optional<std::string> attr_as_string(const ir::Attribute& a) {
  if (a.type == ir::Attribute::Type::String) return a.s;
  if (a.type == ir::Attribute::Type::Int) return std::to_string(a.i);
  return std::nullopt;
}

// Shapes every input and output of `n` as far as the graph knows them.
Verdict check_static(const ir::Graph& g, const ir::Node& n) {
  std::vector<std::string> values = n.inputs;
  values.insert(values.end(), n.outputs.begin(), n.outputs.end());
  for (const std::string& v : values) {
    if (v.empty()) continue;
    if (opt::static_shape(g, v)) continue;
    const ir::TypeInfo* t = g.type_of(v);
    if (t == nullptr || !t->has_shape) return unsure("shape of '" + v + "' is not known");
    return reject("'" + v + "' has a dynamic shape " + t->str());
  }
  return pass();
}

Verdict check(const Constraint& c, const ir::Graph& g, const Constants& k, const ir::Node& n) {
  if (c.kind == "text") return unsure("check by hand: " + c.text);
  if (c.kind == "static_shape") return check_static(g, n);
  if (c.kind == "attr_in") {
    const ir::Attribute* a = n.attr(c.name);
    std::optional<std::string> got =
        a ? attr_as_string(*a) : std::optional<std::string>(c.default_value);
    if (!got || got->empty())
      return unsure(c.name + " cannot be read; allowed: " + join(c.values, ", "));
    if (std::find(c.values.begin(), c.values.end(), *got) != c.values.end()) return pass();
    return reject(c.name + "=" + *got + " not in {" + join(c.values, ", ") + "}");
  }
  // The remaining kinds look at one input (zero_point_zero: input 2 of Q/DQ).
  int index = c.kind == "zero_point_zero" ? 2 : c.index;
  if (index >= static_cast<int>(n.inputs.size()) || n.inputs[index].empty()) {
    // An omitted optional input takes its ONNX default (a zero point of 0, axes from an
    // attribute in older opsets), which is constant and within every bound the lists state.
    return pass();
  }
  const std::string& name = n.inputs[index];
  const Tensor* t = k.find(name);
  std::string what = "input " + std::to_string(index) + " '" + name + "'";
  if (t == nullptr) {
    if (c.kind == "input_const") return reject(what + " is not a constant");
    return unsure(what + " is not a constant, so its values cannot be checked");
  }
  if (c.kind == "input_const") return pass();
  std::vector<double> xs = opt::to_doubles(*t);
  for (double x : xs) {
    if (c.kind == "const_input_max" && x > c.max) {
      return reject(what + " = " + fmt(x) + " > " + fmt(c.max));
    }
    if (c.kind == "positive_const" && x < 0) return reject(what + " has negative value " + fmt(x));
    if (c.kind == "zero_point_zero" && x != 0)
      return reject("zero point " + what + " is " + fmt(x) + ", not 0");
  }
  return pass();
}

std::string op_key(const ir::Node& n) {
  if (n.domain.empty() || n.domain == "ai.onnx") return n.op_type;
  return n.domain + ":" + n.op_type;
}

}  // namespace

// Fills each inheriting profile's operator list from its base (one level: a base may not
// inherit itself), keeping the profile's own entries.
static void resolve_inherits(std::vector<OpSupportProfile>& profiles, const std::string& origin) {
  for (OpSupportProfile& p : profiles) {
    if (p.inherits.empty()) continue;
    const OpSupportProfile* base = find_op_support(profiles, p.inherits);
    PI_CHECK(base && base != &p, InvalidArgument, origin, ": profile '", p.id, "' inherits '",
             p.inherits, "', which is not defined");
    PI_CHECK(base->inherits.empty(), InvalidArgument, origin, ": profile '", p.id, "' inherits '",
             p.inherits, "', which inherits in turn (one level only)");
    for (const auto& [op, rule] : base->ops) p.ops.emplace(op, rule);
  }
}

std::vector<OpSupportProfile> parse_op_support(const std::string& json_text,
                                               const std::string& origin) {
  json doc = parse_json(json_text, origin);
  Where at{origin, "", ""};
  at.require(doc.is_object() && doc.contains("profiles") && doc["profiles"].is_array(),
             "must be an object with a \"profiles\" array");
  std::vector<OpSupportProfile> out;
  for (size_t i = 0; i < doc["profiles"].size(); ++i) {
    out.push_back(parse_profile(doc["profiles"][i], at.index("profiles", i)));
  }
  return out;
}

const std::vector<OpSupportProfile>& builtin_op_support() {
  static const std::vector<OpSupportProfile> profiles = [] {
    std::vector<OpSupportProfile> all;
    for (const EmbeddedFile& f : embedded_files()) {
      if (f.path.rfind("op_support/", 0) != 0) continue;
      std::string origin = "data/" + std::string(f.path);
      for (OpSupportProfile& p : parse_op_support(std::string(f.text), origin)) {
        PI_CHECK(find_op_support(all, p.id) == nullptr, Internal, origin, ": profile '", p.id,
                 "' is also defined in another data/op_support file");
        all.push_back(std::move(p));
      }
    }
    resolve_inherits(all, "data/op_support");
    return all;
  }();
  return profiles;
}

const OpSupportProfile* find_op_support(const std::vector<OpSupportProfile>& profiles,
                                        const std::string& id) {
  for (const OpSupportProfile& p : profiles) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

std::vector<Rejection> check_graph(const OpSupportProfile& profile, const ir::Graph& graph) {
  std::string who = profile.toolchain + " " + profile.version;
  Constants constants(graph);
  std::vector<Rejection> out;
  for (const ir::Node& n : graph.nodes) {
    // Constant nodes become initializers in every toolchain's import, whatever its list says.
    if (n.op_type == "Constant" && n.domain.empty()) continue;
    Rejection r{n.label(), op_key(n), "", true};
    auto it = profile.ops.find(r.op);
    if (it == profile.ops.end()) {
      r.reason = "not in " + who + "'s list";
      r.certain = false;
      out.push_back(r);
      continue;
    }
    const OpRule& rule = it->second;
    if (!rule.supported) {
      r.reason = "not supported by " + who;
      for (const Constraint& c : rule.constraints) r.reason += " (" + c.text + ")";
      out.push_back(r);
      continue;
    }
    // The first certain failure wins; otherwise every doubt is listed for the user to check.
    std::vector<std::string> doubts;
    bool rejected = false;
    std::vector<Constraint> all = rule.constraints;
    if (profile.static_shapes_only) {
      all.push_back({"static_shape", "", {}, "", -1, 0, who + " takes static shapes only"});
    }
    for (const Constraint& c : all) {
      Verdict v = check(c, graph, constants, n);
      if (v.ok) continue;
      std::string why = v.reason;
      if (c.kind != "text" && !c.text.empty()) why += " (" + who + ": " + c.text + ")";
      if (v.certain) {
        r.reason = why;
        rejected = true;
        break;
      }
      doubts.push_back(why);
    }
    if (!rejected && doubts.empty()) continue;
    if (!rejected) {
      r.reason = join(doubts, "; ");
      r.certain = false;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace polyinfer::plan
