// `polyinfer run MODEL`: run a model once on given or generated inputs and show what came out.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>

#include "cli/cli.h"
#include "core/dispatch.h"
#include "onnx/npy.h"
#include "onnx/tensor_file.h"

namespace polyinfer::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// "1x3x224x224" or "1,3,224,224".
Shape parse_dims(const std::string& text, const std::string& what) {
  Shape s;
  std::string cur;
  for (char c : text + "x") {
    if (c == 'x' || c == ',') {
      char* end = nullptr;
      const long long v = std::strtoll(cur.c_str(), &end, 10);
      PI_CHECK(!cur.empty() && *end == '\0' && v >= 0, InvalidArgument, "bad dimension '", cur,
               "' in ", what, "; write e.g. --shape input=1x3x224x224");
      s.push_back(v);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return s;
}

Tensor random_tensor(const ValueSpec& spec, const Shape& shape, std::mt19937& rng) {
  Tensor t = Tensor::empty(spec.dtype, shape);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 3);
  dispatch(AllTypes{}, spec.dtype, "random input", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, std::string>) p[i] = "s" + std::to_string(small(rng));
      else if constexpr (std::is_same_v<T, bool>) p[i] = small(rng) & 1;
      else if constexpr (std::is_integral_v<T>) p[i] = static_cast<T>(small(rng));
      else p[i] = static_cast<T>(real(rng));
    }
  });
  return t;
}

Value load_input(const std::string& path, const ValueSpec& spec) {
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".npy") return Value(read_npy(path));
  if (ext == ".pb") {
    ir::TypeInfo t;
    if (spec.kind == "sequence") t.kind = ir::TypeInfo::Kind::Sequence;
    if (spec.kind == "optional") t.kind = ir::TypeInfo::Kind::Optional;
    return read_value_pb(path, &t);
  }
  fail(ErrorCode::InvalidArgument, "input file '", path,
       "' must be a .npy (numpy.save) or .pb (ONNX TensorProto) file");
}

// min / max / mean and the first few values of a tensor, for a human.
std::string summarize(const Value& v) {
  if (!v.is_tensor()) return v.describe();
  const Tensor t = v.tensor().to(Device::cpu());
  std::string s = t.describe();
  if (t.numel() == 0 || t.dtype() == DType::String) return s;
  return dispatch(NumericTypes{} + TypeList<bool>{}, t.dtype(), "summary", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double x = static_cast<double>(static_cast<compute_t<T>>(p[i]));
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
    }
    char buf[128];
    std::snprintf(buf, sizeof buf, "  min %.6g  max %.6g  mean %.6g  [", lo, hi, sum / t.numel());
    s += buf;
    for (int64_t i = 0; i < std::min<int64_t>(t.numel(), 5); ++i) {
      std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", static_cast<double>(static_cast<compute_t<T>>(p[i])));
      s += buf;
    }
    return s + (t.numel() > 5 ? ", ...]" : "]");
  });
}

std::string safe_file_name(const std::string& name) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return s.empty() || s[0] == '.' ? "_" + s : s;
}

}  // namespace

int cmd_run(const std::vector<std::string>& argv) {
  const Args args = parse_args(argv, {"json", "allow-missing", "help"},
                               {"input", "output", "providers", "threads", "shape", "seed", "level"},
                               "run");
  if (args.flag("help") || args.positional.size() != 1) {
    std::cout << "usage: polyinfer run MODEL [-i NAME=FILE]... [-o DIR] [--providers LIST]\n"
                 "         [--threads N] [--shape NAME=DIMS]... [--seed N] [--allow-missing] [--json]\n"
                 "Inputs come from .npy or ONNX TensorProto .pb files; inputs not given are filled\n"
                 "with seeded random data (dynamic dimensions from --shape, else 1).\n"
                 "Outputs are saved as DIR/NAME.npy when -o is given.\n";
    return args.flag("help") ? kExitOk : kExitUsage;
  }
  const auto t0 = Clock::now();
  Session session = Session::load(args.positional[0], session_options(args));
  const double create_ms = ms_since(t0);

  std::map<std::string, std::string> files, shapes;
  auto split_kv = [](const std::string& kv, const char* opt) {
    const auto eq = kv.find('=');
    PI_CHECK(eq != std::string::npos && eq > 0, InvalidArgument, "--", opt, " takes NAME=VALUE, got '",
             kv, "'");
    return std::make_pair(kv.substr(0, eq), kv.substr(eq + 1));
  };
  for (const auto& kv : args.all("input")) files.insert(split_kv(kv, "input"));
  for (const auto& kv : args.all("shape")) shapes.insert(split_kv(kv, "shape"));
  auto known = [&](const std::string& name) {
    for (const auto& s : session.inputs()) if (s.name == name) return true;
    return false;
  };
  for (const auto& [n, f] : files)
    PI_CHECK(known(n), InvalidArgument, "-i ", n, "=...: the model has no input named '", n, "'");
  for (const auto& [n, f] : shapes)
    PI_CHECK(known(n), InvalidArgument, "--shape ", n, "=...: the model has no input named '", n, "'");

  std::mt19937 rng(static_cast<unsigned>(args.get_int("seed", 0)));
  std::map<std::string, Value> feeds;
  std::vector<std::string> notes;
  for (const auto& spec : session.inputs()) {
    if (auto f = files.find(spec.name); f != files.end()) {
      feeds[spec.name] = load_input(f->second, spec);
      continue;
    }
    PI_CHECK(spec.kind == "tensor", InvalidArgument, "input '", spec.name, "' is a ", spec.kind,
             "; give it with -i ", spec.name, "=FILE.pb");
    Shape shape;
    if (auto s = shapes.find(spec.name); s != shapes.end()) {
      shape = parse_dims(s->second, "--shape " + spec.name);
    } else {
      PI_CHECK(spec.has_shape, InvalidArgument, "input '", spec.name,
               "' has no declared shape; give one with --shape ", spec.name, "=DIMS");
      shape = spec.shape;
      for (auto& d : shape) d = d < 0 ? 1 : d;
      if (std::find(spec.shape.begin(), spec.shape.end(), -1) != spec.shape.end())
        notes.push_back("input '" + spec.name + "': dynamic dimensions set to 1 (use --shape)");
    }
    feeds[spec.name] = Value(random_tensor(spec, shape, rng));
  }

  const auto t1 = Clock::now();
  const auto outputs = session.run(feeds);
  const double run_ms = ms_since(t1);

  std::string out_dir = args.get("output");
  if (!out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    PI_CHECK(!ec, Io, "cannot create output folder '", out_dir, "': ", ec.message());
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].is_tensor())
        write_npy((fs::path(out_dir) / (safe_file_name(session.outputs()[i].name) + ".npy")).string(),
                  outputs[i].tensor());
      else
        notes.push_back("output '" + session.outputs()[i].name + "' is a " +
                        outputs[i].describe() + " and was not saved");
  }

  const Placement& pl = session.placement();
  if (args.flag("json")) {
    std::cout << "{\"model\": " << json_str(args.positional[0]) << ", \"session_create_ms\": "
              << create_ms << ", \"run_ms\": " << run_ms << ", \"outputs\": [";
    for (size_t i = 0; i < outputs.size(); ++i)
      std::cout << (i ? ", " : "") << "{\"name\": " << json_str(session.outputs()[i].name)
                << ", \"value\": " << json_str(outputs[i].describe())
                << ", \"summary\": " << json_str(summarize(outputs[i])) << "}";
    std::cout << "], \"placement\": {\"summary\": " << json_str(pl.summary()) << ", \"providers\": [";
    for (size_t i = 0; i < pl.providers.size(); ++i)
      std::cout << (i ? ", " : "") << "{\"name\": " << json_str(pl.providers[i].provider)
                << ", \"nodes\": " << pl.providers[i].nodes
                << ", \"flops_share\": " << pl.providers[i].flops_share << "}";
    std::cout << "], \"fallbacks\": " << pl.fallbacks.size()
              << ", \"device_copies\": " << pl.device_copies << "}}\n";
    return kExitOk;
  }
  for (const auto& n : notes) std::cout << "note: " << n << "\n";
  for (size_t i = 0; i < outputs.size(); ++i)
    std::cout << session.outputs()[i].name << ": " << summarize(outputs[i]) << "\n";
  char buf[96];
  std::snprintf(buf, sizeof buf, "latency: session %.1f ms, run %.2f ms", create_ms, run_ms);
  std::cout << buf << "\n" << pl.summary() << "\n";
  for (const auto& f : pl.fallbacks)
    std::cout << "  fallback: " << f.op << " '" << f.node << "' ran on " << f.provider << " ("
              << f.reason << ")\n";
  return kExitOk;
}

}  // namespace polyinfer::cli
