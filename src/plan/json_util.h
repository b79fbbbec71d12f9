// Reading plan's JSON data files with errors that say where: every message names the file (or
// the caller's origin), the entry ("target 'h100-sxm'", "profile 'qnn-ep' op 'Gather'") and the
// field at fault, so a typo in a catalog is one line to fix, not a hunt.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <vector>

#include "polyinfer/status.h"

namespace polyinfer::plan {

struct Where {
  std::string origin;  // file or caller-given name
  std::string entry;   // "targets[2]", "target 'l4'"; empty at the document's root
  std::string path;    // dotted field path inside the entry: "peak.fp16"

  Where index(const std::string& array, size_t i) const {
    return {origin,
            entry.empty() ? array + "[" + std::to_string(i) + "]"
                          : entry + " " + array + "[" + std::to_string(i) + "]",
            ""};
  }
  // The entry, once its id is known: "target 'l4'".
  Where named(const std::string& kind, const std::string& id) const {
    return {origin, kind + " '" + id + "'", ""};
  }
  Where field(const std::string& key) const {
    return {origin, entry, path.empty() ? key : path + "." + key};
  }
  std::string prefix() const {
    std::string s = origin;
    if (!entry.empty()) s += ": " + entry;
    if (!path.empty()) s += ": field '" + path + "'";
    return s;
  }
  template <class... Args> void require(bool cond, Args&&... args) const {
    if (!cond) fail(ErrorCode::InvalidArgument, prefix(), " ", std::forward<Args>(args)...);
  }
  // Unknown keys are errors: a misspelt "bandwith" would otherwise silently read as unknown.
  void check_keys(const nlohmann::json& o, std::initializer_list<const char*> allowed) const {
    for (const auto& item : o.items()) {
      bool ok = false;
      for (const char* a : allowed) ok = ok || item.key() == a;
      field(item.key()).require(ok, "is not a known field");
    }
  }
};

inline nlohmann::json parse_json(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(ErrorCode::InvalidArgument, origin, ": not valid JSON: ", e.what());
  }
}

inline std::string req_string(const nlohmann::json& o, const char* key, const Where& at) {
  auto it = o.find(key);
  at.field(key).require(it != o.end(), "is missing");
  at.field(key).require(it->is_string(), "must be a string");
  return it->get<std::string>();
}

inline std::string opt_string(const nlohmann::json& o, const char* key, const Where& at) {
  auto it = o.find(key);
  if (it == o.end()) return "";
  at.field(key).require(it->is_string(), "must be a string");
  return it->get<std::string>();
}

inline bool opt_bool(const nlohmann::json& o, const char* key, bool def, const Where& at) {
  auto it = o.find(key);
  if (it == o.end()) return def;
  at.field(key).require(it->is_boolean(), "must be true or false");
  return it->get<bool>();
}

inline std::vector<std::string> opt_strings(const nlohmann::json& o, const char* key,
                                            const Where& at) {
  std::vector<std::string> out;
  auto it = o.find(key);
  if (it == o.end()) return out;
  at.field(key).require(it->is_array(), "must be an array of strings");
  for (const auto& s : *it) {
    at.field(key).require(s.is_string(), "must be an array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace polyinfer::plan
