// Reads target catalogs (schema: docs/plan.md, "Catalog and op-support files").
#include "plan/catalog.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

#include "plan/embedded.h"
#include "plan/json_util.h"
#include "polyinfer/status.h"

namespace polyinfer::plan {

namespace {

using nlohmann::json;

constexpr Precision kPrecisions[] = {Precision::FP32, Precision::TF32, Precision::FP16,
                                     Precision::BF16, Precision::FP8,  Precision::INT8,
                                     Precision::INT4};

// A figure: absent or {"known": false} means unknown; a value needs its source, and a derived
// value needs a note that says how it was derived (the report repeats it).
Figure parse_figure(const json& parent, const std::string& key, const Where& at) {
  Figure f;
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return f;
  Where here = at.field(key);
  here.require(it->is_object(), "must be an object like {\"value\": 1e12, \"source\": \"...\"}");
  const json& o = *it;
  here.check_keys(o, {"value", "known", "derived", "source", "note"});
  f.note = opt_string(o, "note", here);
  f.source = opt_string(o, "source", here);
  f.derived = opt_bool(o, "derived", false, here);
  bool known = opt_bool(o, "known", o.contains("value"), here);
  if (!known) {
    here.require(!o.contains("value"), "has a value but says \"known\": false");
    return f;
  }
  here.require(o.contains("value"), "is known but has no \"value\"");
  here.field("value").require(o["value"].is_number(), "must be a number");
  f.value = o["value"].get<double>();
  here.field("value").require(f.value >= 0, "must not be negative");
  here.require(!f.source.empty(),
               "has a value but no \"source\": every figure says where it is from");
  here.require(!f.derived || !f.note.empty(),
               "is derived but has no \"note\" saying how (e.g. \"vendor states X with sparsity; "
               "dense = X/2\")");
  f.known = true;
  return f;
}

Target parse_target(const json& t, const Where& at) {
  at.require(t.is_object(), "must be an object");
  at.check_keys(t,
                {"id", "name", "kind", "peak", "memory", "bandwidth", "power", "node_overhead",
                 "compute_efficiency", "bandwidth_efficiency", "toolchain", "op_support", "notes"});
  Target out;
  out.id = req_string(t, "id", at);
  Where here = at.named("target", out.id);
  out.name = req_string(t, "name", here);
  out.kind = req_string(t, "kind", here);
  if (auto it = t.find("peak"); it != t.end()) {
    here.field("peak").require(it->is_object(),
                               "must be an object keyed by precision (\"fp16\", …)");
    for (const auto& [name, fig] : it->items()) {
      Precision p;
      here.field("peak").require(parse_precision(name, &p), "has unknown precision '", name,
                                 "' (known: fp32, tf32, fp16, bf16, fp8, int8, int4)");
      Figure f = parse_figure(*it, name, here.field("peak"));
      if (f.known) out.peak[p] = f;
    }
  }
  out.memory = parse_figure(t, "memory", here);
  out.bandwidth = parse_figure(t, "bandwidth", here);
  out.power = parse_figure(t, "power", here);
  out.node_overhead = parse_figure(t, "node_overhead", here);
  out.compute_efficiency = parse_figure(t, "compute_efficiency", here);
  out.bandwidth_efficiency = parse_figure(t, "bandwidth_efficiency", here);
  out.toolchain = opt_string(t, "toolchain", here);
  out.op_support = opt_string(t, "op_support", here);
  out.notes = opt_strings(t, "notes", here);
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::TF32: return "tf32";
    case Precision::FP16: return "fp16";
    case Precision::BF16: return "bf16";
    case Precision::FP8: return "fp8";
    case Precision::INT8: return "int8";
    case Precision::INT4: return "int4";
  }
  return "?";
}

bool parse_precision(const std::string& s, Precision* out) {
  for (Precision p : kPrecisions) {
    if (s == precision_name(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

double precision_bytes(Precision p) {
  switch (p) {
    case Precision::FP32:
    case Precision::TF32: return 4;  // tf32 is an fp32 storage format computed at lower precision
    case Precision::FP16:
    case Precision::BF16: return 2;
    case Precision::FP8:
    case Precision::INT8: return 1;
    case Precision::INT4: return 0.5;
  }
  return 4;
}

std::vector<Target> parse_catalog(const std::string& json_text, const std::string& origin) {
  json doc = parse_json(json_text, origin);
  Where at{origin, "", ""};
  at.require(doc.is_object() && doc.contains("targets") && doc["targets"].is_array(),
             "must be an object with a \"targets\" array");
  std::vector<Target> out;
  const json& targets = doc["targets"];
  for (size_t i = 0; i < targets.size(); ++i) {
    out.push_back(parse_target(targets[i], at.index("targets", i)));
    for (size_t j = 0; j + 1 < out.size(); ++j) {
      at.require(lower(out[j].id) != lower(out.back().id), "lists target '", out.back().id,
                 "' twice");
    }
  }
  return out;
}

const std::vector<Target>& builtin_catalog() {
  static const std::vector<Target> catalog = [] {
    std::vector<Target> all;
    for (const EmbeddedFile& f : embedded_files()) {
      if (f.path.rfind("targets/", 0) != 0) continue;
      std::string origin = "data/" + std::string(f.path);
      for (Target& t : parse_catalog(std::string(f.text), origin)) {
        PI_CHECK(find_target(all, t.id) == nullptr, Internal, origin, ": target '", t.id,
                 "' is also defined in another data/targets file");
        all.push_back(std::move(t));
      }
    }
    return all;
  }();
  return catalog;
}

const Target* find_target(const std::vector<Target>& catalog, const std::string& id) {
  std::string want = lower(id);
  for (const Target& t : catalog) {
    if (lower(t.id) == want) return &t;
  }
  for (const Target& t : catalog) {
    if (lower(t.name) == want) return &t;
  }
  return nullptr;
}

}  // namespace polyinfer::plan
