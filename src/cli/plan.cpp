// `polyinfer plan MODEL [--target NAME[,NAME…]|this] [--precision P] [--batch N] [--context N]
// [--json]`: will the model fit a chip, how fast could it run there, and what would not run —
// from the graph alone, before anything is bought or flashed. The arithmetic is plan/planner.h;
// the targets are the built-in catalog (plan/catalog.h) or this machine, measured
// (plan/measure.h). docs/plan.md explains every figure.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/cli.h"
#include "cli/json.h"
#include "infer/infer.h"
#include "onnx/import.h"
#include "opt/optimize_model.h"
#include "plan/catalog.h"
#include "plan/measure.h"
#include "plan/op_support.h"
#include "plan/planner.h"
#include "runtime/kernel.h"

namespace polyinfer::cli {

namespace {

const char* kUsage =
    "usage: polyinfer plan MODEL [--target NAME[,NAME...]] [--precision P] [--batch N]\n"
    "                      [--context N] [--shape NAME=DIMS] [--dim SYMBOL=N] [--json]\n"
    "       polyinfer plan --list-targets [--json]\n"
    "  --target T      a catalog id (plan --list-targets), or 'this' to measure this machine\n"
    "                  (default); several, comma-separated or repeated, give a side-by-side table\n"
    "  --precision P   fp32 (default), tf32, fp16, bf16, fp8, int8, int4 (weight-only, 4.5 bits\n"
    "                  per weight with one fp16 scale per 32)\n"
    "  --batch N       the first dimension of every input (default: 1 where it is dynamic)\n"
    "  --context N     decoder models: tokens held in the KV cache (the past-sequence dimension\n"
    "                  of inputs named past*/cache*)\n"
    "  --shape NAME=DIMS, --dim SYMBOL=N   fix other dynamic dimensions (1x128 or 1,128)\n"
    "  --threads N     threads for 'this' (default: physical cores, as a session uses)\n"
    "  --level N       optimizer level the runtime would run at (default 3)\n"
    "  --measure       measure this machine again instead of using the cached figures\n"
    "  --quick-measure rough figures for 'this' in well under a second (tests, CI)\n"
    "  --catalog FILE  read targets from FILE too (the schema is in docs/plan.md)\n"
    "  --top N         slowest nodes to list (default 5)\n";

std::string human_bytes(double b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000 && u < 4) {
    b /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

std::string human_seconds(double s) {
  char buf[32];
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.2f s", s);
  else if (s >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  return buf;
}

std::string human_count(double n, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int p = 0;
  while (n >= 1000 && p < 5) {
    n /= 1000;
    ++p;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%s%s%s", n, (*prefixes[p] || *unit) ? " " : "", prefixes[p],
                unit);
  return buf;
}

Shape parse_dims(const std::string& text, const std::string& what) {
  Shape s;
  std::string cur;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == 'x' || text[i] == ',') {
      char* end = nullptr;
      const long long v = std::strtoll(cur.c_str(), &end, 10);
      if (cur.empty() || *end != '\0' || v < 0)
        throw UsageError(what + ": '" + text + "' is not a shape (write 1x3x224x224)");
      s.push_back(v);
      cur.clear();
    } else {
      cur += text[i];
    }
  }
  return s;
}

std::pair<std::string, std::string> split_assignment(const std::string& s, const std::string& opt) {
  const size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
    throw UsageError(opt + " takes NAME=VALUE, got '" + s + "'");
  return {s.substr(0, eq), s.substr(eq + 1)};
}

bool is_kv_name(const std::string& name) {
  std::string n;
  for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return n.find("past") != std::string::npos || n.find("cache") != std::string::npos;
}

// Every graph input's shape with --shape, --batch, --context and --dim applied; an input left
// with a dynamic dimension is a usage error that says which option fixes it.
std::map<std::string, Shape> resolve_inputs(const ir::Graph& g, const Args& args) {
  std::map<std::string, Shape> explicit_shapes;
  for (const auto& s : args.all("shape")) {
    auto [name, dims] = split_assignment(s, "--shape");
    explicit_shapes[name] = parse_dims(dims, "--shape " + name);
  }
  std::map<std::string, int64_t> dims;
  for (const auto& s : args.all("dim")) {
    auto [name, v] = split_assignment(s, "--dim");
    const Shape d = parse_dims(v, "--dim " + name);
    PI_CHECK(d.size() == 1, InvalidArgument, "--dim ", name, "=", v,
             ": a symbolic dimension takes ", "one number (--dim ", name,
             "=8); give whole input shapes with --shape NAME=DIMS");
    dims[name] = d[0];
  }
  const int batch = args.get_int("batch", 0, 1, 1 << 20);
  const int context = args.get_int("context", 0, 1, 1 << 24);
  std::map<std::string, Shape> out;
  for (const auto& in : g.inputs) {
    if (g.initializers.count(in.name)) continue;
    if (auto it = explicit_shapes.find(in.name); it != explicit_shapes.end()) {
      out[in.name] = it->second;
      continue;
    }
    // Sequences and optionals have no shape to fix: their consumers are priced as unknown.
    if (in.type.kind != ir::TypeInfo::Kind::Tensor) continue;
    if (!in.type.has_shape)
      throw UsageError("input '" + in.name + "' declares no shape; give --shape " + in.name +
                       "=DIMS");
    Shape s = in.type.dims;
    std::vector<std::string> open;
    for (size_t d = 0; d < s.size(); ++d) {
      const std::string sym = d < in.type.dim_params.size() ? in.type.dim_params[d] : "";
      if (d == 0 && batch > 0) s[d] = batch;
      else if (is_kv_name(in.name) && context > 0 && s.size() >= 3 && d == s.size() - 2)
        s[d] = context;
      else if (s[d] < 0 && !sym.empty() && dims.count(sym))
        s[d] = dims[sym];
      else if (s[d] < 0 && d == 0)
        s[d] = 1;  // batch 1 unless --batch says otherwise
      if (s[d] < 0) open.push_back(sym.empty() ? "dim " + std::to_string(d) : sym);
    }
    if (!open.empty()) {
      std::string list;
      for (const auto& o : open) list += (list.empty() ? "" : ", ") + o;
      throw UsageError("input '" + in.name + "' " + in.type.str() + " has dynamic dimensions (" +
                       list + "); fix them with --dim SYMBOL=N, --batch N" +
                       (is_kv_name(in.name) ? ", --context N" : "") + " or --shape " + in.name +
                       "=DIMS");
    }
    out[in.name] = s;
  }
  return out;
}

// An op-support profile by id, or by the id's first part ("tensorrt" → "tensorrt-10").
const plan::OpSupportProfile* find_profile(const std::string& id) {
  const auto& all = plan::builtin_op_support();
  if (const auto* p = plan::find_op_support(all, id)) return p;
  for (const auto& p : all)
    if (p.id.rfind(id + "-", 0) == 0) return &p;
  return nullptr;
}

// The nodes the CPU provider has no kernel for (read from its kernel registry).
std::vector<plan::Rejection> cpu_provider_gaps(const ir::Graph& g) {
  std::vector<plan::Rejection> out;
  for (const auto& n : g.nodes)
    if (find_kernels("cpu", n.domain, n.op_type, n.opset).empty())
      out.push_back({n.label(), n.op_type, "no polyinfer cpu kernel for " + n.op_type, true});
  return out;
}

void print_list_targets(const std::vector<plan::Target>& catalog, bool json) {
  if (json) {
    JsonWriter w;
    w.begin_array();
    for (const auto& t : catalog) {
      w.begin_object().key("id").value(t.id).key("name").value(t.name).key("kind").value(t.kind);
      w.key("peak").begin_object();
      for (const auto& [p, f] : t.peak)
        if (f.known) w.key(plan::precision_name(p)).value(f.value);
      w.end_object();
      w.key("memory_bytes");
      t.memory.known ? w.value(t.memory.value) : w.null();
      w.key("bandwidth_bytes_per_s");
      t.bandwidth.known ? w.value(t.bandwidth.value) : w.null();
      w.key("toolchain").value(t.toolchain).key("op_support").value(t.op_support).end_object();
    }
    w.end_array();
    std::cout << w.str() << "\n";
    return;
  }
  std::printf("%-22s %-34s %-12s %-10s %s\n", "id", "name", "memory", "bandwidth", "peak (dense)");
  for (const auto& t : catalog) {
    std::string peaks;
    for (const auto& [p, f] : t.peak)
      if (f.known)
        peaks += (peaks.empty() ? "" : ", ") + std::string(plan::precision_name(p)) + " " +
                 human_count(f.value, "") + (f.derived ? "*" : "");
    std::printf("%-22s %-34s %-12s %-10s %s\n", t.id.c_str(), t.name.c_str(),
                t.memory.known ? human_bytes(t.memory.value).c_str() : "?",
                t.bandwidth.known ? (human_bytes(t.bandwidth.value) + "/s").c_str() : "?",
                peaks.empty() ? "?" : peaks.c_str());
  }
  std::printf(
      "\n* derived (e.g. a vendor figure given only with sparsity, halved); "
      "sources: polyinfer plan --list-targets --json, data/targets/*.json\n");
}

struct PlannedTarget {
  std::shared_ptr<plan::Target> target;
  const plan::OpSupportProfile* profile = nullptr;
  plan::Prediction prediction;
};

void print_analysis(const std::string& model, const plan::Analysis& a,
                    const std::map<std::string, Shape>& inputs, int level,
                    const std::vector<std::string>& import_notes) {
  // Inputs grouped by shape: a decoder's 64 KV-cache inputs make one entry.
  std::map<std::string, std::vector<std::string>> by_shape;
  for (const auto& [name, s] : inputs) by_shape[shape_str(s)].push_back(name);
  std::string shapes;
  for (const auto& [dims, names] : by_shape)
    shapes += (shapes.empty() ? "" : ", ") +
              (names.size() == 1
                   ? names[0]
                   : std::to_string(names.size()) + " inputs (" + names.front() + ", ...)") +
              " " + dims;
  std::cout << "plan: " << model << " at " << plan::precision_name(a.precision) << " (" << shapes
            << "; optimizer level " << level << ")\n";
  std::cout << "  weights: " << human_count(a.parameters, "") << " parameters, "
            << human_bytes(a.weight_bytes) << " at " << plan::precision_name(a.precision) << "\n";
  std::cout << "  per run: " << human_count(a.flops, "FLOP") << ", " << human_bytes(a.bytes)
            << " moved (" << std::fixed;
  std::cout.precision(1);
  std::cout << (a.bytes > 0 ? a.flops / a.bytes : 0.0) << " FLOP/byte)\n";
  std::cout.unsetf(std::ios::fixed);
  std::cout << "  activations: " << human_bytes(static_cast<double>(a.activations.arena_bytes))
            << " planned arena (peak live "
            << human_bytes(static_cast<double>(a.activations.peak_live_bytes)) << ", "
            << human_bytes(static_cast<double>(a.activations.total_bytes))
            << " without reuse), outputs "
            << human_bytes(static_cast<double>(a.activations.output_bytes)) << "\n";
  if (!a.kv_inputs.empty())
    std::cout << "  KV cache: " << human_bytes(a.kv_cache_bytes) << " in " << a.kv_inputs.size()
              << " inputs (" << a.kv_inputs.front() << ", ...)\n";
  if (!a.unknown_shape_nodes.empty())
    std::cout << "  " << a.unknown_shape_nodes.size()
              << " nodes have unknown shapes and are priced partially (first: "
              << a.unknown_shape_nodes.front() << ")\n";
  for (const auto& n : import_notes) std::cout << "  import: " << n << "\n";
  if (!a.memory_only_ops.empty()) {
    std::string ops;
    for (const auto& o : a.memory_only_ops) ops += (ops.empty() ? "" : ", ") + o;
    std::cout << "  counted as memory-only (no FLOP model): " << ops << "\n";
  }
}

void print_target(const plan::Analysis& a, const PlannedTarget& pt, int top) {
  const plan::Prediction& p = pt.prediction;
  const plan::Target& t = *pt.target;
  std::cout << "\n" << t.name << " [" << t.id << "]\n";
  if (t.kind != "toolchain") {
    std::cout << "  " << (p.fits ? "fits" : "does NOT fit") << ": " << human_bytes(a.weight_bytes)
              << " weights + " << human_bytes(static_cast<double>(a.activations.arena_bytes))
              << " activations";
    if (a.kv_cache_bytes > 0) std::cout << " + " << human_bytes(a.kv_cache_bytes) << " KV cache";
    const double other_outputs =
        static_cast<double>(a.activations.output_bytes) - a.kv_output_bytes;
    if (other_outputs > 0.01 * p.memory_needed)
      std::cout << " + " << human_bytes(other_outputs) << " outputs";
    std::cout << (p.memory_known ? " of " + human_bytes(t.memory.value) : " (capacity unknown)")
              << "\n";
  }
  if (p.peak > 0 || p.bandwidth > 0) {
    std::cout << "  ~" << human_seconds(p.seconds) << " per run, " << p.bound << "-bound";
    if (p.ridge > 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " (model %.1f FLOP/byte, ridge point %.1f)", p.intensity,
                    p.ridge);
      std::cout << buf;
    }
    std::cout << "\n";
    if (!a.kv_inputs.empty() && p.seconds > 0) {
      // The seeds' rule of thumb, next to what this graph really moves: a runtime that appends
      // to its cache in place reads the weights and the cache once per token.
      const double lean = a.weight_bytes + a.kv_cache_bytes;
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "  decode: ~%.1f tokens/s (one token per run) moving %s per token: %s weights "
                    "+ %s KV cache + %s more this graph moves (copies of the cache)\n",
                    1.0 / p.seconds, human_bytes(a.bytes).c_str(),
                    human_bytes(a.weight_bytes).c_str(), human_bytes(a.kv_cache_bytes).c_str(),
                    human_bytes(std::max(0.0, a.bytes - lean)).c_str());
      std::cout << buf;
      if (p.bandwidth > 0) {
        std::snprintf(buf, sizeof buf,
                      "  bandwidth / (weights + KV cache) = %s/s / %s = %.1f tokens/s, the bound "
                      "for a runtime that updates its cache in place\n",
                      human_bytes(p.bandwidth).c_str(), human_bytes(lean).c_str(),
                      p.bandwidth / lean);
        std::cout << buf;
      }
    }
    std::cout << "  by class:";
    for (const auto& c : p.classes) {
      if (c.seconds < p.seconds * 0.01) continue;
      std::cout << " " << op_class_name(c.cls) << " " << human_seconds(c.seconds) << " (" << c.nodes
                << (c.compute_bound * 2 > c.nodes ? ", compute" : ", memory") << ")";
    }
    std::cout << "\n  slowest:";
    for (int i = 0; i < top && i < static_cast<int>(p.top.size()); ++i)
      std::cout << (i ? "; " : " ") << p.top[i].node->label() << " "
                << human_seconds(p.top[i].seconds);
    std::cout << "\n";
  }
  if (!p.op_support.empty() || t.id == "this") {
    const std::string who = t.id == "this" ? "the polyinfer cpu provider" : p.op_support;
    if (p.unsupported.empty()) {
      std::cout << "  runs: every node is supported by " << who << "\n";
    } else {
      size_t certain = 0;
      for (const auto& r : p.unsupported) certain += r.certain ? 1 : 0;
      std::cout << "  " << certain << " node(s) " << who << " would not run (x), "
                << p.unsupported.size() - certain << " to check by hand (?):\n";
      for (size_t i = 0; i < p.unsupported.size() && i < 20; ++i)
        std::cout << "    " << (p.unsupported[i].certain ? "x " : "? ") << p.unsupported[i].node
                  << ": " << p.unsupported[i].reason << "\n";
      if (p.unsupported.size() > 20) std::cout << "    ... (--json lists all)\n";
    }
  } else if (!t.toolchain.empty()) {
    std::cout << "  toolchain: " << t.toolchain << " (no op-support list in polyinfer's data)\n";
  }
  for (const auto& n : p.notes) std::cout << "  note: " << n << "\n";
}

// "3 (+2)": nodes certainly refused, and those whose constraint must be checked by hand.
std::string refused(const plan::Prediction& p) {
  size_t certain = 0;
  for (const auto& r : p.unsupported) certain += r.certain ? 1 : 0;
  const size_t open = p.unsupported.size() - certain;
  return std::to_string(certain) + (open ? " (+" + std::to_string(open) + ")" : "");
}

void print_table(const std::vector<PlannedTarget>& targets) {
  std::printf("\n%-22s %-10s %-12s %-12s %-9s %s\n", "target", "fits", "needs", "latency", "bound",
              "would not run (+ to check)");
  for (const auto& pt : targets) {
    const auto& p = pt.prediction;
    std::printf("%-22s %-10s %-12s %-12s %-9s %s\n", pt.target->id.c_str(),
                !p.memory_known ? "?"
                : p.fits        ? "yes"
                                : "NO",
                human_bytes(p.memory_needed).c_str(),
                p.seconds > 0 ? human_seconds(p.seconds).c_str() : "?", p.bound.c_str(),
                p.op_support.empty() && pt.target->id != "this" ? "(no list)" : refused(p).c_str());
  }
}

void write_json(const std::string& model, const plan::Analysis& a,
                const std::vector<PlannedTarget>& targets) {
  JsonWriter w;
  w.begin_object().key("model").value(model);
  w.key("precision").value(plan::precision_name(a.precision));
  w.key("parameters").value(a.parameters).key("weight_bytes").value(a.weight_bytes);
  w.key("flops").value(a.flops).key("bytes").value(a.bytes);
  w.key("activation_arena_bytes").value(static_cast<double>(a.activations.arena_bytes));
  w.key("activation_peak_live_bytes").value(static_cast<double>(a.activations.peak_live_bytes));
  w.key("output_bytes").value(static_cast<double>(a.activations.output_bytes));
  w.key("kv_cache_bytes").value(a.kv_cache_bytes);
  w.key("memory_only_ops").begin_array();
  for (const auto& o : a.memory_only_ops) w.value(o);
  w.end_array().key("unknown_shape_nodes").value(static_cast<int>(a.unknown_shape_nodes.size()));
  w.key("targets").begin_array();
  for (const auto& pt : targets) {
    const auto& p = pt.prediction;
    w.begin_object().key("id").value(pt.target->id).key("name").value(pt.target->name);
    w.key("fits");
    p.memory_known ? w.value(p.fits) : w.null();
    w.key("memory_needed_bytes").value(p.memory_needed);
    w.key("memory_bytes");
    pt.target->memory.known ? w.value(pt.target->memory.value) : w.null();
    w.key("seconds").value(p.seconds).key("compute_seconds").value(p.compute_seconds);
    w.key("memory_seconds")
        .value(p.memory_seconds)
        .key("overhead_seconds")
        .value(p.overhead_seconds);
    w.key("bound").value(p.bound).key("intensity").value(p.intensity).key("ridge").value(p.ridge);
    w.key("peak_used")
        .value(p.peak)
        .key("peak_precision")
        .value(plan::precision_name(p.peak_precision));
    w.key("bandwidth_used").value(p.bandwidth);
    if (!a.kv_inputs.empty() && p.seconds > 0) {
      w.key("tokens_per_s").value(1.0 / p.seconds);
      if (p.bandwidth > 0)
        w.key("tokens_per_s_weights_and_cache")
            .value(p.bandwidth / (a.weight_bytes + a.kv_cache_bytes));
    }
    w.key("classes").begin_array();
    for (const auto& c : p.classes)
      w.begin_object()
          .key("class")
          .value(op_class_name(c.cls))
          .key("nodes")
          .value(c.nodes)
          .key("flops")
          .value(c.flops)
          .key("bytes")
          .value(c.bytes)
          .key("seconds")
          .value(c.seconds)
          .key("compute_bound_nodes")
          .value(c.compute_bound)
          .end_object();
    w.end_array().key("top").begin_array();
    for (const auto& n : p.top)
      w.begin_object()
          .key("node")
          .value(n.node->label())
          .key("seconds")
          .value(n.seconds)
          .key("flops")
          .value(n.flops)
          .key("bytes")
          .value(n.bytes)
          .key("compute_bound")
          .value(n.compute_bound)
          .end_object();
    w.end_array().key("op_support").value(p.op_support).key("unsupported").begin_array();
    for (const auto& r : p.unsupported)
      w.begin_object()
          .key("node")
          .value(r.node)
          .key("op")
          .value(r.op)
          .key("reason")
          .value(r.reason)
          .key("certain")
          .value(r.certain)
          .end_object();
    w.end_array().key("notes").begin_array();
    for (const auto& n : p.notes) w.value(n);
    w.end_array().end_object();
  }
  w.end_array().end_object();
  std::cout << w.str() << "\n";
}

}  // namespace

int cmd_plan(const std::vector<std::string>& argv) {
  const Args args = parse_args(argv, {"help", "json", "list-targets", "measure", "quick-measure"},
                               {"target", "precision", "batch", "context", "shape", "dim",
                                "threads", "level", "catalog", "top"},
                               "plan");
  if (args.flag("help")) {
    std::cout << kUsage;
    return kExitOk;
  }
  std::vector<plan::Target> catalog = plan::builtin_catalog();
  if (args.flag("catalog")) {
    const std::string path = args.get("catalog");
    std::ifstream f(path);
    PI_CHECK(f.good(), Io, "cannot read catalog file '", path, "'");
    std::stringstream ss;
    ss << f.rdbuf();
    for (auto& t : plan::parse_catalog(ss.str(), path)) catalog.push_back(std::move(t));
  }
  if (args.flag("list-targets")) {
    print_list_targets(catalog, args.flag("json"));
    return kExitOk;
  }
  if (args.positional.size() != 1) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  plan::Precision precision = plan::Precision::FP32;
  if (args.flag("precision") && !plan::parse_precision(args.get("precision"), &precision))
    throw UsageError("--precision: unknown precision '" + args.get("precision") +
                     "' (fp32, tf32, fp16, bf16, fp8, int8, int4)");
  const int level = args.get_int("level", 3, 0, 3);
  const int top = args.get_int("top", 5, 0, 1000);
  std::vector<std::string> ids;
  for (const auto& t : args.all("target"))
    for (const auto& id : split_list(t)) ids.push_back(id);
  if (ids.empty()) ids.push_back("this");

  // Targets first: a misspelt name is a usage error before a large model is read.
  std::vector<PlannedTarget> targets;
  for (const auto& id : ids) {
    PlannedTarget pt;
    if (id == "this") continue;  // measured below, after the model is known to load
    const plan::Target* t = plan::find_target(catalog, id);
    if (t) {
      pt.target = std::make_shared<plan::Target>(*t);
      if (!t->op_support.empty())
        pt.profile = plan::find_op_support(plan::builtin_op_support(), t->op_support);
    } else if (const plan::OpSupportProfile* prof = find_profile(id)) {
      // A toolchain rather than a chip (--target tensorrt): what it would run, no figures.
      pt.target = std::make_shared<plan::Target>();
      pt.target->id = prof->id;
      pt.target->name = prof->toolchain + " " + prof->version;
      pt.target->kind = "toolchain";
      pt.target->toolchain = pt.target->name;
      pt.target->op_support = prof->id;
      pt.target->notes.push_back(
          "a toolchain, not a chip: op support only (name a chip for "
          "memory and speed)");
      pt.profile = prof;
    } else {
      std::string known;
      for (const auto& c : catalog) known += (known.empty() ? "" : ", ") + c.id;
      for (const auto& p : plan::builtin_op_support()) known += ", " + p.id;
      throw UsageError("--target: unknown target '" + id + "' (this, " + known + ")");
    }
    targets.push_back(pt);
  }

  const std::string path = args.positional[0];
  ImportOptions probe;
  probe.read_external_data = false;
  const Model declared = import_onnx_file(path, probe);
  ImportOptions opts = probe;
  opts.input_shapes = resolve_inputs(*declared.graph, args);
  Model m = import_onnx_file(path, opts);
  infer::infer_types(m);
  const ir::Graph original = *m.graph;
  // Folding, then inference again where shapes were unknown (opt/optimize_model.h).
  opt::optimize_model(m, level);
  const plan::Analysis a = plan::analyze(*m.graph, original, precision);

  if (std::find(ids.begin(), ids.end(), "this") != ids.end()) {
    const int threads = args.get_int("threads", default_thread_count(), 1, 4096);
    std::string cache;
    const plan::MachineMeasurement mm = plan::cached_measurement(
        threads, args.flag("measure"), &cache, plan::MeasureOptions{args.flag("quick-measure")});
    PlannedTarget pt;
    pt.target = std::make_shared<plan::Target>(plan::this_machine_target(mm));
    pt.target->notes.push_back("measured " + mm.measured_at + " (cache: " + cache +
                               "; --measure measures again)");
    targets.insert(targets.begin() + (std::find(ids.begin(), ids.end(), "this") - ids.begin()), pt);
  }
  for (auto& pt : targets) {
    pt.prediction = plan::predict(a, *pt.target, original, pt.profile);
    if (pt.target->id == "this") pt.prediction.unsupported = cpu_provider_gaps(*m.graph);
  }

  if (args.flag("json")) {
    write_json(path, a, targets);
    return kExitOk;
  }
  print_analysis(path, a, opts.input_shapes, level, m.notes);
  for (const auto& pt : targets) print_target(a, pt, top);
  if (targets.size() > 1) print_table(targets);
  return kExitOk;
}

}  // namespace polyinfer::cli
