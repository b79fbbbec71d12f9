#include "cli/cli.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/json_text.h"

namespace polyinfer::cli {

std::string Args::get(const std::string& name, const std::string& def) const {
  auto it = options.find(name);
  return it == options.end() ? def : it->second;
}

std::vector<std::string> Args::all(const std::string& name) const {
  std::vector<std::string> out;
  auto [a, b] = options.equal_range(name);
  for (auto it = a; it != b; ++it) out.push_back(it->second);
  return out;
}

int Args::get_int(const std::string& name, int def, int lo, int hi) const {
  auto it = options.find(name);
  if (it == options.end()) return def;
  char* end = nullptr;
  const long v = std::strtol(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || v < lo || v > hi)
    throw UsageError("--" + name + " takes a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", got '" + it->second + "'");
  return static_cast<int>(v);
}

Args parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
                const std::vector<std::string>& valued, const std::string& command) {
  auto known = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  Args a;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& s = argv[i];
    if (s.size() < 2 || s[0] != '-' || s == "-") {
      a.positional.push_back(s);
      continue;
    }
    std::string name = s.substr(s[1] == '-' ? 2 : 1), value;
    const auto eq = name.find('=');
    const bool has_eq = eq != std::string::npos;
    if (has_eq) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    // Short aliases.
    if (name == "i") name = "input";
    if (name == "o") name = "output";
    if (name == "h") name = "help";
    if (known(flags, name)) {
      if (has_eq) throw UsageError("--" + name + " takes no value");
      a.options.emplace(name, "1");
    } else if (known(valued, name)) {
      if (!has_eq) {
        if (i + 1 >= argv.size()) throw UsageError("--" + name + " needs a value");
        value = argv[++i];
      }
      a.options.emplace(name, value);
    } else {
      std::string list;
      for (const auto& f : flags) list += " --" + f;
      for (const auto& v : valued) list += " --" + v + " X";
      throw UsageError("unknown option '" + s + "' for `polyinfer " + command +
                       "`; its options are:" + list);
    }
  }
  return a;
}

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find(sep, start);
    const std::string part =
        s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!part.empty()) out.push_back(part);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

SessionOptions session_options(const Args& args) {
  SessionOptions o;
  if (args.flag("providers") || args.options.count("providers"))
    o.providers = split_list(args.get("providers"));
  o.threads = args.get_int("threads", 0, 0, 1024);
  o.allow_missing = args.flag("allow-missing");
  o.optimization_level = args.get_int("level", 3, 0, 3);
  o.capture_graph = args.flag("capture-graph");
  o.allow_tf32 = args.flag("tf32");
  if (args.options.count("precision")) {
    const std::string p = args.get("precision");
    if (p != "fp32" && p != "fp16" && p != "bf16")
      throw UsageError("--precision takes fp32, fp16 or bf16, got '" + p + "'");
    o.precision = parse_precision(p);
  }
  return o;
}

std::string json_str(const std::string& s) { return json_quote(s); }

}  // namespace polyinfer::cli
