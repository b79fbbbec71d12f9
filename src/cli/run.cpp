// `polyinfer run MODEL`: run a model once on given or generated inputs and show what came out.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "cli/cli.h"
#include "cli/inputs.h"
#include "core/dispatch.h"
#include "core/low_precision.h"
#include "onnx/npy.h"
#include "onnx/tensor_file.h"

namespace polyinfer::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Element i of a host tensor as text.
std::string element_text(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::String) return "'" + t.data<std::string>()[i] + "'";
  return dispatch(NumericTypes{} + TypeList<bool>{}, t.dtype(), "summary", [&](auto tag) {
    using T = typename decltype(tag)::type;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g",
                  static_cast<double>(static_cast<compute_t<T>>(t.data<T>()[i])));
    return std::string(buf);
  });
}

// "{0: 0.25, 1: 0.75}", the first `most` entries of a map.
std::string map_entries(const Value& m, int64_t most) {
  const Tensor &k = m.map_keys(), &v = m.map_values();
  std::string s = "{";
  for (int64_t i = 0; i < std::min(k.numel(), most); ++i)
    s += (i ? ", " : "") + element_text(k, i) + ": " + element_text(v, i);
  return s + (k.numel() > most ? ", ...}" : "}");
}

// min / max / mean and the first few values of a tensor, the first entries of a map or of the
// first maps of a sequence, for a human.
std::string summarize(const Value& v) {
  if (v.is_map()) return v.describe() + "  " + map_entries(v, 5);
  if (v.holds_maps()) {
    std::string s = v.describe() + "  [";
    const auto& maps = v.maps();
    for (size_t i = 0; i < std::min<size_t>(maps.size(), 2); ++i)
      s += (i ? ", " : "") + map_entries(maps[i], 4);
    return s + (maps.size() > 2 ? ", ...]" : "]");
  }
  if (!v.is_tensor()) return v.describe();
  const Tensor t = v.tensor().to(Device::cpu());
  std::string s = t.describe();
  if (t.numel() == 0 || t.dtype() == DType::String) return s;
  if (is_low_precision_float(t.dtype()) || is_low_precision_integer(t.dtype())) {
    // No C++ element type: summarize the values, as float64.
    std::vector<double> d(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < d.size(); ++i)
      d[i] = lowp::get_value(t.dtype(), t.raw_data(), int64_t(i));
    const Tensor f = Tensor::from_vector<double>(t.shape(), d);
    return s + summarize(Value(f)).substr(f.describe().size());
  }
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
      std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "",
                    static_cast<double>(static_cast<compute_t<T>>(p[i])));
      s += buf;
    }
    return s + (t.numel() > 5 ? ", ...]" : "]");
  });
}

std::string safe_file_name(const std::string& name) {
  std::string s;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return s.empty() || s[0] == '.' ? "_" + s : s;
}

}  // namespace

int cmd_run(const std::vector<std::string>& argv) {
  const Args args = parse_args(
      argv, {"json", "allow-missing", "tf32", "help"},
      {"input", "output", "providers", "threads", "shape", "seed", "level", "precision"}, "run");
  if (args.flag("help") || args.positional.size() != 1) {
    std::cout
        << "usage: polyinfer run MODEL [-i NAME=FILE]... [-o DIR] [--providers LIST]\n"
           "         [--threads N] [--level N] [--precision fp32|fp16|bf16] [--tf32]\n"
           "         [--shape NAME=DIMS]... [--seed N] [--allow-missing] [--json]\n"
           "Inputs come from .npy or ONNX .pb files (TensorProto; SequenceProto, MapProto for\n"
           "sequence and map inputs); tensor inputs not given are filled with seeded random\n"
           "data (dynamic dimensions from --shape, else 1).\n"
           "Outputs are saved as DIR/NAME.npy when -o is given (sequences and maps, which\n"
           ".npy cannot hold, as ONNX SequenceProto / MapProto files DIR/NAME.pb).\n"
           "--providers lists providers in order of preference; an entry may carry options\n"
           "as NAME:KEY=VALUE, e.g. cpu:winograd=off (`polyinfer providers` lists them).\n"
           "--precision fp16 / bf16 computes the safe ops in float16 / bfloat16 (inputs and\n"
           "outputs stay float32; docs/vulkan.md \"Precision\").\n"
           "--tf32 lets float32 products and convolutions use TF32 Tensor Core math where\n"
           "a provider has it (cuda from Ampere on: faster, ~1e-3 relative error; the\n"
           "nodes say \"+tf32\" in the placement).\n";
    return args.flag("help") ? kExitOk : kExitUsage;
  }
  const auto t0 = Clock::now();
  Session session = Session::load(args.positional[0], session_options(args));
  const double create_ms = ms_since(t0);

  std::vector<std::string> notes;
  const std::map<std::string, Value> feeds = make_inputs(session, args, &notes);

  const auto t1 = Clock::now();
  const auto outputs = session.run(feeds);
  const double run_ms = ms_since(t1);

  std::string out_dir = args.get("output");
  if (!out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    PI_CHECK(!ec, Io, "cannot create output folder '", out_dir, "': ", ec.message());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string& name = session.outputs()[i].name;
      const fs::path base = fs::path(out_dir) / safe_file_name(name);
      if (outputs[i].is_tensor()) {
        write_npy(base.string() + ".npy", outputs[i].tensor());
      } else if (outputs[i].is_none()) {
        notes.push_back("output '" + name + "' is none and was not saved");
      } else {
        // .npy holds tensors only: sequences and maps go to ONNX's own files, which -i reads.
        write_value_pb(base.string() + ".pb", outputs[i], name);
        notes.push_back("output '" + name + "' is a " + outputs[i].describe() + ", saved as " +
                        base.string() + ".pb (an ONNX " +
                        (outputs[i].is_map() ? "MapProto" : "SequenceProto") + ")");
      }
    }
  }

  const Placement& pl = session.placement();
  if (args.flag("json")) {
    std::cout << "{\"model\": " << json_str(args.positional[0])
              << ", \"session_create_ms\": " << create_ms << ", \"run_ms\": " << run_ms
              << ", \"precision\": " << json_str(precision_name(session.precision()))
              << ", \"outputs\": [";
    for (size_t i = 0; i < outputs.size(); ++i)
      std::cout << (i ? ", " : "") << "{\"name\": " << json_str(session.outputs()[i].name)
                << ", \"value\": " << json_str(outputs[i].describe())
                << ", \"summary\": " << json_str(summarize(outputs[i])) << "}";
    std::cout << "], \"placement\": " << pl.to_json() << "}\n";
    return kExitOk;
  }
  for (const auto& n : notes) std::cout << "note: " << n << "\n";
  for (size_t i = 0; i < outputs.size(); ++i)
    std::cout << session.outputs()[i].name << ": " << summarize(outputs[i]) << "\n";
  char buf[96];
  std::snprintf(buf, sizeof buf, "latency: session %.1f ms, run %.2f ms", create_ms, run_ms);
  std::cout << buf << "\n" << pl.summary() << "\n";
  if (!pl.auto_choice.empty()) std::cout << "  providers: " << pl.auto_choice << "\n";
  for (const auto& n : pl.notes) std::cout << "  note: " << n << "\n";
  for (const auto& f : pl.fallbacks)
    std::cout << "  fallback: " << f.op << " '" << f.node << "' ran on " << f.provider << " ("
              << f.reason << ")\n";
  return kExitOk;
}

}  // namespace polyinfer::cli
