// Shared pieces of the command-line tool: argument parsing and the subcommands' entry points.
// Each subcommand lives in its own file (src/cli/<name>.cpp) and exposes one function.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "polyinfer/session.h"

namespace polyinfer::cli {

// Exit statuses (also printed by `polyinfer --help`).
constexpr int kExitOk = 0;
constexpr int kExitUsage = 1;  // bad command line
constexpr int kExitCheck = 2;  // a check failed (conformance below its floor, compare mismatch)
// polyinfer::Error → exit_code(code) = 10 + code (11 InvalidModel ... 18 Internal).

// A bad command line (unknown option, missing value): exit status kExitUsage, not an Error code.
struct UsageError : Error {
  explicit UsageError(const std::string& message) : Error(ErrorCode::InvalidArgument, message) {}
};

// A parsed command line: positional arguments, and options as written (--name value or
// --name=value; flags map to "1"). Options named in `multi` may repeat.
struct Args {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> options;

  bool flag(const std::string& name) const { return options.count(name) > 0; }
  std::string get(const std::string& name, const std::string& def = "") const;
  std::vector<std::string> all(const std::string& name) const;
  // A whole-number option in [lo, hi], or `def` when absent; anything else is a UsageError
  // naming the option and the range (exit 1).
  int get_int(const std::string& name, int def, int lo = -1000000, int hi = 1000000) const;
};

// Parses `argv`; `flags` lists options that take no value, `valued` those that take one. An
// unknown option throws UsageError naming it and the subcommand's options.
Args parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
                const std::vector<std::string>& valued, const std::string& command);

// "cpu,vulkan" → {"cpu", "vulkan"}.
std::vector<std::string> split_list(const std::string& s, char sep = ',');
// Session options from --providers, --threads, --allow-missing, --level, --precision.
SessionOptions session_options(const Args& args);
// JSON string literal with escapes.
std::string json_str(const std::string& s);

int cmd_info(const std::vector<std::string>& argv);
int cmd_run(const std::vector<std::string>& argv);
int cmd_conformance(const std::vector<std::string>& argv);
int cmd_providers(const std::vector<std::string>& argv);
int cmd_optimize(const std::vector<std::string>& argv);
int cmd_bench(const std::vector<std::string>& argv);
int cmd_doctor(const std::vector<std::string>& argv);
int cmd_monitor(const std::vector<std::string>& argv);
int cmd_plan(const std::vector<std::string>& argv);
int cmd_compare(const std::vector<std::string>& argv);
int cmd_quantize(const std::vector<std::string>& argv);
int cmd_serve(const std::vector<std::string>& argv);

}  // namespace polyinfer::cli
