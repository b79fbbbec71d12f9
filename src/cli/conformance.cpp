// `polyinfer conformance DIR...`: runs ONNX backend test folders and compares outputs.
//
// The tests run in a worker process with a time limit per test (cli/isolated_worker.h), so a
// crash or a hang in one test is reported as that test's error instead of ending the run.
#include <regex.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "cli/cli.h"
#include "cli/isolated_worker.h"
#include "core/compare.h"
#include "onnx/tensor_file.h"

namespace polyinfer::cli {

namespace fs = std::filesystem;

namespace {

struct Result {
  std::string suite, name, status, detail;  // status: passed failed errored skipped
};

ir::TypeInfo type_for(const ValueSpec& spec) {
  ir::TypeInfo t;
  if (spec.kind == "sequence") t.kind = ir::TypeInfo::Kind::Sequence;
  else if (spec.kind == "optional")
    t.kind = ir::TypeInfo::Kind::Optional;
  else if (spec.kind == "map")
    t.kind = ir::TypeInfo::Kind::Map;
  t.elem = spec.dtype;
  return t;
}

std::vector<fs::path> sorted_entries(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  // input_10.pb sorts after input_9.pb: order by the number after the prefix.
  auto num = [&](const fs::path& p) {
    const std::string s = p.stem().string().substr(prefix.size());
    return std::atoi(s.c_str());
  };
  std::sort(out.begin(), out.end(), [&](const fs::path& a, const fs::path& b) {
    return num(a) != num(b) ? num(a) < num(b) : a < b;
  });
  return out;
}

// ONNX 1.12's test data stores bfloat16 tensors as uint16 (their bit patterns); read them back
// as the bfloat16 the model declares.
Value as_declared(Value v, const ValueSpec& spec) {
  if (spec.dtype == DType::BFloat16 && v.is_tensor() && v.tensor().dtype() == DType::UInt16) {
    const Tensor& t = v.tensor();
    return Value(Tensor::from_host(DType::BFloat16, t.shape(), t.raw_data(), t.nbytes()));
  }
  return v;
}

// Runs one test folder in this process; returns {status, detail}.
std::pair<std::string, std::string> run_test(const fs::path& dir, const SessionOptions& opts,
                                             const Tolerance& tol) {
  const auto sets = sorted_entries(dir, "test_data_set_");
  if (sets.empty()) return {"skipped", "no test_data_set_* folders"};
  Session session = Session::load((dir / "model.onnx").string(), opts);
  for (const auto& set : sets) {
    const auto in_files = sorted_entries(set, "input_");
    const auto out_files = sorted_entries(set, "output_");
    std::map<std::string, Value> feeds;
    PI_CHECK(in_files.size() <= session.inputs().size(), InvalidArgument, set.string(), " has ",
             in_files.size(), " inputs, the model takes ", session.inputs().size());
    for (size_t i = 0; i < in_files.size(); ++i) {
      const ir::TypeInfo t = type_for(session.inputs()[i]);
      feeds[session.inputs()[i].name] =
          as_declared(read_value_pb(in_files[i].string(), &t), session.inputs()[i]);
    }
    const auto got = session.run(feeds);
    PI_CHECK(out_files.size() <= got.size(), InvalidArgument, set.string(), " has ",
             out_files.size(), " outputs, the model gives ", got.size());
    for (size_t i = 0; i < out_files.size(); ++i) {
      const ir::TypeInfo t = type_for(session.outputs()[i]);
      const Value expected =
          as_declared(read_value_pb(out_files[i].string(), &t), session.outputs()[i]);
      const std::string diff = compare_values(got[i], expected, tol);
      if (!diff.empty())
        return {"failed", set.filename().string() + " output " + std::to_string(i) + " '" +
                              session.outputs()[i].name + "': " + diff};
    }
  }
  return {"passed", ""};
}

// run_test with its exceptions as an "errored" result.
std::pair<std::string, std::string> run_caught(const fs::path& dir, const SessionOptions& opts,
                                               const Tolerance& tol) {
  try {
    return run_test(dir, opts, tol);
  } catch (const Error& e) {
    return {"errored", std::string(error_code_name(e.code())) + ": " + e.what()};
  } catch (const std::exception& e) {
    return {"errored", std::string("exception: ") + e.what()};
  }
}

std::map<std::string, std::string> read_expected(const std::string& path) {
  std::map<std::string, std::string> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  PI_CHECK(in.good(), Io, "cannot read expected-failures list '", path, "'");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto colon = line.find(':');
    const std::string name = line.substr(0, colon);
    out[name] = colon == std::string::npos ? "" : line.substr(colon + 1);
  }
  return out;
}

}  // namespace

int cmd_conformance(const std::vector<std::string>& argv) {
  const Args args =
      parse_args(argv, {"json", "allow-missing", "no-fork", "quiet", "help"},
                 {"providers", "threads", "filter", "expect", "min-passed", "timeout", "level"},
                 "conformance");
  if (args.flag("help") || args.positional.empty()) {
    std::cout
        << "usage: polyinfer conformance DIR... [--providers LIST] [--filter REGEX] [--json]\n"
           "         [--expect FILE] [--min-passed N] [--timeout S] [--quiet] [--no-fork]\n"
           "Runs ONNX backend test folders (DIR/test_*/model.onnx + test_data_set_*) and\n"
           "compares outputs (floats: rtol 1e-3, atol 1e-5; other types exactly).\n"
           "--expect FILE: 'test_name: reason' lines; any other failure fails the run.\n"
           "--min-passed N: fail the run when fewer tests pass. Exit 2 when a check fails.\n"
           "The tests run in a worker process: a crash or a test over --timeout S (default\n"
           "300) errors that test and a new worker takes the rest. --no-fork runs them in\n"
           "this process instead.\n";
    return args.flag("help") ? kExitOk : kExitUsage;
  }
  SessionOptions opts = session_options(args);
  if (!args.options.count("threads")) opts.threads = 1;
  const Tolerance tol;
  const int timeout = args.get_int("timeout", 300);
  const bool json = args.flag("json"), quiet = args.flag("quiet");
  // POSIX extended regex: std::regex trips a GCC 12 -Wmaybe-uninitialized false positive under
  // the sanitizer build.
  regex_t filter;
  const std::string pattern = args.get("filter", ".*");
  PI_CHECK(regcomp(&filter, pattern.c_str(), REG_EXTENDED | REG_NOSUB) == 0, InvalidArgument,
           "--filter '", pattern, "' is not a valid regular expression");
  struct FreeRegex {
    regex_t* r;
    ~FreeRegex() { regfree(r); }
  } free_filter{&filter};
  const bool has_expect = args.options.count("expect") > 0;
  const auto expected = read_expected(args.get("expect"));

  std::vector<std::pair<std::string, fs::path>> tests;
  for (const auto& d : args.positional) {
    const fs::path dir(d);
    PI_CHECK(fs::is_directory(dir), Io, "conformance folder '", d, "' does not exist");
    if (fs::exists(dir / "model.onnx")) {
      tests.push_back({dir.parent_path().filename().string(), dir});
      continue;
    }
    for (const auto& t : sorted_entries(dir, "test_"))
      if (fs::exists(t / "model.onnx")) tests.push_back({dir.filename().string(), t});
  }
  std::vector<Result> results;
  std::map<std::string, int> count;
  // The worker replies "status\ndetail".
  IsolatedWorker worker([&](size_t i) {
    const auto r = run_caught(tests[i].second, opts, tol);
    return r.first + "\n" + r.second;
  });
  for (size_t i = 0; i < tests.size(); ++i) {
    const auto& [suite, dir] = tests[i];
    const std::string name = dir.filename().string();
    if (regexec(&filter, name.c_str(), 0, nullptr, 0) != 0) continue;
    std::pair<std::string, std::string> r;
    if (args.flag("no-fork")) {
      r = run_caught(dir, opts, tol);
    } else if (const auto reply = worker.run(i, timeout); !reply.ok) {
      r = {"errored", reply.text};
    } else {
      const auto nl = reply.text.find('\n');
      r = {reply.text.substr(0, nl), nl == std::string::npos ? "" : reply.text.substr(nl + 1)};
    }
    ++count[r.first];
    results.push_back({suite, name, r.first, r.second});
    if (!json && !(quiet && r.first == "passed")) {
      std::string tag = r.first == "passed"    ? "PASS "
                        : r.first == "failed"  ? "FAIL "
                        : r.first == "errored" ? "ERROR"
                                               : "SKIP ";
      std::cout << tag << " " << name << (r.second.empty() ? "" : ": " + r.second) << "\n";
    }
  }
  // Failures not on the expected list, and listed tests that now pass.
  std::vector<std::string> unexpected, fixed;
  std::set<std::string> ran;
  for (const auto& r : results) {
    ran.insert(r.name);
    const bool bad = r.status == "failed" || r.status == "errored";
    if (bad && has_expect && !expected.count(r.name)) unexpected.push_back(r.name);
    if (!bad && r.status == "passed" && expected.count(r.name)) fixed.push_back(r.name);
  }
  const int total = static_cast<int>(results.size());
  const int min_passed = args.get_int("min-passed", 0);
  const bool ok = count["passed"] >= min_passed && unexpected.empty();
  if (json) {
    std::cout << "{\"total\": " << total << ", \"passed\": " << count["passed"]
              << ", \"failed\": " << count["failed"] << ", \"errored\": " << count["errored"]
              << ", \"skipped\": " << count["skipped"] << ", \"tests\": [";
    for (size_t i = 0; i < results.size(); ++i)
      std::cout << (i ? ", " : "") << "{\"name\": " << json_str(results[i].name)
                << ", \"suite\": " << json_str(results[i].suite)
                << ", \"status\": " << json_str(results[i].status)
                << ", \"detail\": " << json_str(results[i].detail) << "}";
    std::cout << "]}\n";
  } else {
    for (const auto& n : fixed)
      std::cout << "NOW PASSING (remove from the expected-failures list): " << n << "\n";
    for (const auto& n : unexpected) std::cout << "UNEXPECTED FAILURE: " << n << "\n";
    std::cout << "conformance: " << total << " tests, " << count["passed"] << " passed, "
              << count["failed"] << " failed, " << count["errored"] << " errored, "
              << count["skipped"] << " skipped";
    if (min_passed > 0) std::cout << " (floor " << min_passed << ")";
    std::cout << "\n";
  }
  return ok ? kExitOk : kExitCheck;
}

}  // namespace polyinfer::cli
