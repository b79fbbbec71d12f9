#include "polyinfer/session.h"
#include "infer/infer.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <thread>

#include "core/deferred.h"
#include "core/host_recycling.h"
#include "hw/report.h"
#include "onnx/import.h"
#include "opt/optimize_model.h"
#include "quant/fp16.h"
#include "runtime/cost.h"
#include "runtime/executor.h"
#include "runtime/partitioner.h"
#include "runtime/shared_prepack.h"
#include "runtime/weight_release.h"

namespace polyinfer {

struct Session::Impl {
  Model model;
  std::shared_ptr<RuntimeContext> rt;
  std::unique_ptr<Executor> executor;
  std::vector<ValueSpec> inputs, outputs;
  Placement placement;
  std::vector<double> static_flops;  // per node, from the model's static shapes (-1 unknown)
  int level = 0;                     // the optimization level the graph was rewritten at
  Precision precision = Precision::Fp32;
  CreationTimes creation;
  // Runs hold it shared where they may overlap (runtime/executor.h: slots per run, a lock per
  // node), exclusively where they take turns: a device provider's queue is one per session and
  // a graph capture replays one recording. Profiles read the timings exclusively.
  std::shared_mutex run_mu;
  bool concurrent_runs = false;
  std::mutex placement_mu;  // held by every update of placement after creation
};

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

ValueSpec spec_of(const ir::ValueInfo& v) {
  ValueSpec s;
  s.name = v.name;
  s.dtype = v.type.elem;
  s.has_shape = v.type.has_shape;
  s.shape = v.type.dims;
  s.dims = v.type.dim_params;
  switch (v.type.kind) {
    case ir::TypeInfo::Kind::Tensor: s.kind = "tensor"; break;
    case ir::TypeInfo::Kind::Sequence: s.kind = "sequence"; break;
    case ir::TypeInfo::Kind::Optional: s.kind = "optional"; break;
    case ir::TypeInfo::Kind::Map: s.kind = "map"; break;
    case ir::TypeInfo::Kind::Unknown: s.kind = "unknown"; break;
  }
  s.type = v.type.str();
  const ir::TypeInfo* map = v.type.kind == ir::TypeInfo::Kind::Map ? &v.type : v.type.inner.get();
  if (map && map->kind == ir::TypeInfo::Kind::Map) s.key_dtype = map->key;
  return s;
}

int physical_cores() {
  // Threads per core from sysfs; fall back to all logical CPUs.
  const unsigned logical = std::max(1u, std::thread::hardware_concurrency());
  FILE* f = std::fopen("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "r");
  if (!f) return static_cast<int>(logical);
  char buf[64] = {};
  const bool ok = std::fgets(buf, sizeof buf, f) != nullptr;
  std::fclose(f);
  int siblings = 1;
  if (ok)
    for (const char* p = buf; *p; ++p)
      if (*p == ',' || *p == '-') siblings = 2;
  return std::max(1, static_cast<int>(logical) / siblings);
}

// Placement rule 1's `auto`: the usable accelerator providers, best first, then cpu. A GPU
// provider that is not built in, or not usable, is named in the note with the reason (the hw
// probes' text, the same `doctor` prints), so the choice is never silent. Vulkan whose only
// devices are software ones on the CPU (llvmpipe) is usable but not an accelerator: auto leaves
// it out and says so (`--providers vulkan,cpu` still uses it); so is OpenCL whose only devices
// are CPUs (PoCL).
std::vector<std::string> resolve_auto(std::string* note) {
  const std::vector<std::string> built = provider_names();
  auto is_built = [&](const std::string& n) {
    return std::find(built.begin(), built.end(), n) != built.end();
  };
  std::vector<std::string> chosen;
  std::string why;
  auto add_reason = [&](const std::string& text) { why += (why.empty() ? "" : "; ") + text; };
  for (const std::string name : {"cuda", "vulkan", "opencl"}) {
    if (is_built(name)) {
      const ProviderStatus st = create_provider(name)->probe();
      if (!st.usable) {
        add_reason(name + " not usable: " + st.reason);
        continue;
      }
      if (name == "vulkan") {
        const hw::VulkanInfo vk = hw::probe_vulkan(hw::system_loader());
        const bool gpu = std::any_of(vk.devices.begin(), vk.devices.end(),
                                     [](const hw::VulkanDevice& d) { return d.type != "cpu"; });
        if (!gpu) {
          add_reason("vulkan left out: " + hw::check_vulkan_stack(vk).detail);
          continue;
        }
      }
      if (name == "opencl") {
        const hw::OpenClInfo cl = hw::probe_opencl(hw::system_loader());
        const bool accelerator =
            std::any_of(cl.devices.begin(), cl.devices.end(),
                        [](const hw::OpenClDevice& d) { return d.type != "cpu"; });
        if (!accelerator) {
          add_reason("opencl left out: " + hw::check_opencl_stack(cl).detail);
          continue;
        }
      }
      chosen.push_back(name);
      continue;
    }
    const hw::StackCheck stack =
        name == "cuda"
            ? hw::check_cuda_stack(hw::probe_nvidia(hw::system_files(), hw::system_loader()))
        : name == "vulkan" ? hw::check_vulkan_stack(hw::probe_vulkan(hw::system_loader()))
                           : hw::check_opencl_stack(hw::probe_opencl(hw::system_loader()));
    add_reason(name + " not in this build" +
               (stack.usable ? " (" + stack.detail + " is here)" : ""));
  }
  chosen.push_back("cpu");
  std::string list;
  for (const auto& c : chosen) list += (list.empty() ? "" : ",") + c;
  *note = "auto chose " + list + (why.empty() ? "" : " (" + why + ")");
  return chosen;
}

std::shared_ptr<RuntimeContext> make_runtime(const SessionOptions& requested,
                                             Placement* placement) {
  SessionOptions opts = requested;
  if (std::find(opts.providers.begin(), opts.providers.end(), "auto") != opts.providers.end()) {
    PI_CHECK(opts.providers.size() == 1, InvalidArgument,
             "'auto' picks the providers itself and cannot be combined with others; give either "
             "--providers auto or an explicit list");
    opts.providers = resolve_auto(&placement->auto_choice);
  }
  PI_CHECK(!opts.providers.empty(), InvalidArgument,
           "the provider list is empty; give at least one, e.g. --providers cpu");
  PI_CHECK(opts.threads >= 0 && opts.threads <= 1024, InvalidArgument,
           "threads must be 0..1024, got ", opts.threads);
  auto rt = std::make_shared<RuntimeContext>();
  rt->threads = opts.threads > 0 ? opts.threads : default_thread_count();
  rt->allow_tf32 = opts.allow_tf32;
  rt->options = {opts.cpu, opts.cuda};
  rt->prepacks = std::make_shared<SharedPrepacks>();
  std::set<std::string> seen;
  std::vector<std::shared_ptr<Provider>> listed;
  for (const auto& entry : opts.providers) {
    const ProviderName pn = parse_provider_name(entry);
    const std::string name = pn.device_name();
    PI_CHECK(seen.insert(name).second, InvalidArgument, "provider '", name,
             "' is listed twice; list each provider once");
    std::shared_ptr<Provider> p = create_provider(name);
    for (const auto& [key, value] : pn.options) p->set_option(rt->options, key, value);
    listed.push_back(p);
  }
  for (const auto& p : listed) p->check_options(rt->options);
  for (const auto& p : listed) {
    const std::string name = p->name();
    const ProviderStatus st = p->probe();
    if (!st.usable) {
      PI_CHECK(opts.allow_missing, ProviderUnavailable, "provider '", name,
               "' is not usable here: ", st.reason,
               " (pass --allow-missing to skip it, or remove it from the list)");
      placement->skipped.push_back({name, st.reason});
      continue;
    }
    // "vulkan" and "vulkan:0" may name one device: listing both would be listing it twice.
    const std::string base = parse_provider_name(name).base;
    for (const auto& q : rt->providers)
      PI_CHECK(parse_provider_name(q->name()).base != base || q->device() != p->device(),
               InvalidArgument, "providers '", q->name(), "' and '", name,
               "' are the same device (", p->device().str(), "); list it once");
    rt->providers.push_back(p);
    rt->pools.push_back(std::make_shared<MemoryPool>(p->allocator()));
  }
  PI_CHECK(!rt->providers.empty(), ProviderUnavailable,
           "none of the listed providers is usable here; add cpu to the list");
  return rt;
}

// Node counts, fallbacks and FLOP shares per provider. `flops` holds one estimate per node (-1
// unknown); shares are only claimed when every node's estimate is known.
void fill_placement(const Executor& ex, const RuntimeContext& rt, const std::vector<double>& flops,
                    const std::string& basis, Placement* pl) {
  pl->providers.clear();
  pl->fallbacks.clear();
  pl->nodes.clear();
  pl->notes.clear();
  // Advisories in first-seen order, with the nodes each concerns.
  std::vector<std::pair<std::string, std::vector<std::string>>> advised;
  std::vector<int> nodes(rt.providers.size(), 0);
  std::vector<double> per(rt.providers.size(), 0);
  double total = 0;
  bool known = flops.size() == ex.nodes().size();
  for (size_t i = 0; i < ex.nodes().size(); ++i) {
    const auto& p = ex.nodes()[i];
    ++nodes[p.provider];
    pl->nodes.push_back(
        {p.node->name,
         p.node->domain.empty() ? p.node->op_type : p.node->domain + "." + p.node->op_type,
         rt.providers[p.provider]->name(), p.kernel->impl(), p.kernel->choice()});
    if (const std::string a = p.kernel->advisory(); !a.empty()) {
      auto it =
          std::find_if(advised.begin(), advised.end(), [&](const auto& x) { return x.first == a; });
      if (it == advised.end()) it = advised.insert(advised.end(), {a, {}});
      it->second.push_back(p.node->label());
    }
    if (known && flops[i] < 0) known = false;
    if (known) {
      per[p.provider] += flops[i];
      total += flops[i];
    }
    if (!p.declined.empty())
      pl->fallbacks.push_back(
          {p.node->name, p.node->op_type, rt.providers[p.provider]->name(), p.declined});
  }
  known = known && total > 0;
  pl->flops_basis = known ? basis : "";
  pl->total_nodes = static_cast<int>(ex.nodes().size());
  for (size_t i = 0; i < rt.providers.size(); ++i)
    if (nodes[i] > 0)
      pl->providers.push_back({rt.providers[i]->name(), nodes[i], known ? per[i] / total : 0.0});
  for (const auto& [text, labels] : advised) {
    std::string who = std::to_string(labels.size()) + (labels.size() == 1 ? " node (" : " nodes (");
    for (size_t i = 0; i < labels.size() && i < 3; ++i) who += (i ? ", " : "") + labels[i];
    pl->notes.push_back(who + (labels.size() > 3 ? ", ...): " : "): ") + text);
  }
}

// SessionOptions::keep_values: each becomes a graph output (after the model's own).
void keep_values(ir::Graph& g, const std::vector<std::string>& names) {
  std::set<std::string> outputs, produced;
  for (const auto& o : g.outputs) outputs.insert(o.name);
  for (const auto& n : g.nodes) produced.insert(n.outputs.begin(), n.outputs.end());
  for (const auto& name : names) {
    PI_CHECK(produced.count(name), InvalidArgument, "keep_values: no node of the model produces '",
             name, "'");
    if (!outputs.insert(name).second) continue;
    ir::ValueInfo v;
    v.name = name;
    if (const ir::TypeInfo* t = g.type_of(name)) v.type = *t;
    else
      v.type.kind = ir::TypeInfo::Kind::Unknown;
    g.outputs.push_back(v);
  }
}

// A session's creation after the import, step by step (docs/design.md "A node's life").
// `started`: when Session::load began; `import_ms`: the import's share of the time since.
std::shared_ptr<Session::Impl> build(Model model, const SessionOptions& opts,
                                     Clock::time_point started, double import_ms) {
  PI_CHECK(opts.optimization_level >= 0 && opts.optimization_level <= 3, InvalidArgument,
           "optimization level must be 0..3, got ", opts.optimization_level);
  // Prepacked weights reuse the memory of the originals freed before them (core/host_recycling.h).
  const HostRecycling recycling;
  auto impl = std::make_shared<Session::Impl>();
  impl->model = std::move(model);
  // 1. Providers: the listed ones, usable here, with their options.
  impl->rt = make_runtime(opts, &impl->placement);
  omp_set_num_threads(impl->rt->threads);
  keep_values(*impl->model.graph, opts.keep_values);
  // 2. Optimize: rewrite the graph before placement (docs/optimizer.md); level 0 runs it as
  //    imported.
  // Level 3 only adds the channels-last layout (and fusions of its operators), whose Nhwc*
  // operators exist for the CPU's oneDNN kernels alone: with another device first (vulkan) it
  // would push every convolution back to the CPU behind a Transpose, so such sessions stop at
  // level 2.
  int level = opts.optimization_level;
  if (!impl->rt->providers.empty() && impl->rt->providers.front()->device().kind != DeviceKind::CPU)
    level = std::min(level, 2);
  const auto optimize_start = Clock::now();
  opt::optimize_model(impl->model, level);
  impl->level = level;
  // 3. Precision: after the optimizer, whose fusions match float32 patterns; the fused
  //    products convert as a whole (one rounding per output, not one per fused step).
  if (opts.precision != Precision::Fp32) {
    quant::Fp16Options fo;
    fo.fused = true;
    fo.type = opts.precision == Precision::Bf16 ? DType::BFloat16 : DType::Float16;
    quant::convert_fp16(*impl->model.graph, fo);
  }
  impl->precision = opts.precision;
  impl->creation.optimize_ms = ms_since(optimize_start);
  // FLOP estimates read the weights' shapes, so they come before the weights are freed.
  std::vector<double> flops;
  for (const auto& n : impl->model.graph->nodes)
    flops.push_back(estimate_flops(n, *impl->model.graph));
  const auto kernels_start = Clock::now();
  // 4. Partition: each node to the first listed provider that can run it, its kernel created
  //    there. Weights the kernels hold in their own (prepacked) form are not kept twice: each
  //    original is freed as soon as its last reader has prepacked it.
  ir::Graph& graph = *impl->model.graph;
  WeightRelease weights(graph,
                        [&graph](const std::string& name) { graph.initializers.erase(name); });
  std::vector<PlacedNode> placed =
      partition(impl->model.graph, impl->rt, weights, impl->rt->threads);
  // 5. Plan the run: value lifetimes, weights copied to the devices that read them.
  impl->executor =
      std::make_unique<Executor>(impl->model.graph, impl->rt, std::move(placed), weights);
  // Weights still in the model file (those no kernel prepacked) get memory of their own: the
  // session never reads the file again (core/deferred.h).
  if (impl->model.deferred) {
    impl->model.deferred->materialize_all();
    impl->model.deferred.reset();
  }
  impl->creation.kernels_ms = ms_since(kernels_start);
  for (const auto& v : impl->model.graph->inputs) impl->inputs.push_back(spec_of(v));
  for (const auto& v : impl->model.graph->outputs) impl->outputs.push_back(spec_of(v));
  fill_placement(*impl->executor, *impl->rt, flops, "static shapes", &impl->placement);
  impl->static_flops = std::move(flops);
  impl->executor->set_profiling(opts.profile);
  impl->executor->set_capture(opts.capture_graph);
  impl->placement.capture = impl->executor->capture_status();
  impl->concurrent_runs =
      !opts.capture_graph && std::all_of(impl->rt->providers.begin(), impl->rt->providers.end(),
                                         [](const std::shared_ptr<Provider>& p) {
                                           return p->device().kind == DeviceKind::CPU;
                                         });
  impl->creation.import_ms = import_ms;
  impl->creation.total_ms = ms_since(started);
  return impl;
}

std::string list_inputs(const std::vector<ValueSpec>& specs) {
  std::string s;
  for (const auto& v : specs) s += (s.empty() ? "" : ", ") + v.name + " (" + v.type + ")";
  return s;
}

void check_input(const ValueSpec& spec, const Value& v) {
  if (spec.kind == "map") {
    PI_CHECK(v.is_map(), InvalidArgument, "input '", spec.name, "' must be a map (", spec.type,
             "), got ", v.describe());
    PI_CHECK((spec.key_dtype == DType::Undefined || v.key_type() == spec.key_dtype) &&
                 (spec.dtype == DType::Undefined || v.elem_type() == spec.dtype),
             InvalidArgument, "input '", spec.name, "' is a ", v.describe(),
             " but the model expects ", spec.type);
    return;
  }
  if (spec.kind != "tensor") return;
  PI_CHECK(v.is_tensor(), InvalidArgument, "input '", spec.name, "' must be a tensor (", spec.type,
           "), got ", v.describe());
  const Tensor& t = v.tensor();
  PI_CHECK(spec.dtype == DType::Undefined || t.dtype() == spec.dtype, InvalidArgument, "input '",
           spec.name, "' has dtype ", dtype_name(t.dtype()), " but the model expects ",
           dtype_name(spec.dtype), " (", spec.type, "); convert the data to ",
           dtype_name(spec.dtype));
  if (!spec.has_shape) return;
  bool ok = static_cast<size_t>(t.rank()) == spec.shape.size();
  for (size_t i = 0; ok && i < spec.shape.size(); ++i)
    ok = spec.shape[i] < 0 || spec.shape[i] == t.shape()[i];
  PI_CHECK(ok, ShapeMismatch, "input '", spec.name, "' has shape ", shape_str(t.shape()),
           " but the model expects ", spec.type, " (named dimensions may take any size)");
}

}  // namespace

int default_thread_count() {
  static const int n = physical_cores();
  return n;
}

Session Session::load(const std::string& path, const SessionOptions& options) {
  const auto start = Clock::now();
  ImportOptions io;
  io.defer_weights = true;  // read by the kernels straight from the file (core/deferred.h)
  Model model = import_onnx_file(path, io);
  infer::infer_types(model);
  return Session(build(std::move(model), options, start, ms_since(start)));
}

Session Session::load_bytes(const void* data, size_t size, const SessionOptions& options,
                            const std::string& base_dir) {
  const auto start = Clock::now();
  Model model = import_onnx_bytes(data, size, base_dir);
  infer::infer_types(model);
  return Session(build(std::move(model), options, start, ms_since(start)));
}

const std::vector<ValueSpec>& Session::inputs() const { return impl_->inputs; }
const std::vector<ValueSpec>& Session::outputs() const { return impl_->outputs; }
const Placement& Session::placement() const { return impl_->placement; }
const CreationTimes& Session::creation_times() const { return impl_->creation; }

size_t Session::memory_arena_bytes() const {
  size_t total = 0;
  for (const auto& p : impl_->rt->pools) total += p->stats().arena;
  return total;
}

size_t Session::host_weight_bytes() const {
  size_t total = 0;
  for (const auto& [name, t] : impl_->model.graph->initializers) total += t.nbytes();
  return total;
}

size_t Session::peak_memory_bytes() const {
  size_t peak = 0;
  for (const auto& p : impl_->rt->pools) peak += p->stats().peak_in_use;
  return peak;
}

int Session::threads() const { return impl_->rt->threads; }

int Session::optimization_level() const { return impl_->level; }
Precision Session::precision() const { return impl_->precision; }

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Fp32: return "fp32";
    case Precision::Fp16: return "fp16";
    case Precision::Bf16: return "bf16";
  }
  return "?";
}

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "fp16") return Precision::Fp16;
  if (name == "bf16") return Precision::Bf16;
  fail(ErrorCode::InvalidArgument, "unknown precision '", name, "' (choose fp32, fp16 or bf16)");
}

namespace {

// The profile rows of `ex`'s nodes, appended to `out`. `where` names the body they sit in ("" at
// the top level: "If_0.then_branch", nested "If_0.then_branch > Loop_2.body"), added to their
// names. A node that runs subgraphs (If, Loop, Scan) is followed by its bodies' rows and keeps
// only the time outside them (the bodies' executors, copies, its own work): the rows add up to
// the kernels' time of a run, as they do without subgraphs.
void profile_rows(const Executor& ex, const RuntimeContext& rt,
                  const std::vector<double>& static_flops, const std::string& where,
                  std::vector<NodeProfile>& out) {
  // FLOPs from the shapes actually run when known; else from the model's static shapes.
  const std::vector<double> measured = ex.first_run_flops();
  for (size_t i = 0; i < ex.nodes().size(); ++i) {
    const PlacedNode& p = ex.nodes()[i];
    NodeProfile r;
    r.node = where.empty() ? p.node->name : p.node->name + " (in " + where + ")";
    r.op = p.node->domain.empty() ? p.node->op_type : p.node->domain + "." + p.node->op_type;
    r.provider = rt.providers[p.provider]->name();
    r.impl = p.kernel->impl();
    r.origin = p.node->origin;
    r.choice = p.kernel->choice();
    r.create_ms = p.create_ms;
    if (i < ex.timings().size()) {
      r.calls = ex.timings()[i].calls;
      r.total_ms = static_cast<double>(ex.timings()[i].total_ns) * 1e-6;
    }
    r.flops = i < measured.size() ? measured[i] : i < static_flops.size() ? static_flops[i] : -1;
    const size_t at = out.size();
    out.push_back(std::move(r));
    for (const CompiledSubgraph& sub : p.subgraphs) {
      const size_t first = out.size();
      const std::string inner =
          (where.empty() ? "" : where + " > ") + p.node->name + "." + sub.attr;
      profile_rows(*sub.executor, rt, {}, inner, out);
      for (size_t k = first; k < out.size(); ++k) {
        // Nested rows are already net of their own bodies: together they are the body's time.
        out[at].total_ms = std::max(0.0, out[at].total_ms - out[k].total_ms);
        out[at].create_ms = std::max(0.0, out[at].create_ms - out[k].create_ms);
      }
    }
  }
}

}  // namespace

std::vector<NodeProfile> Session::profile() const {
  std::unique_lock<std::shared_mutex> lock(impl_->run_mu);
  std::vector<NodeProfile> out;
  out.reserve(impl_->executor->nodes().size());
  profile_rows(*impl_->executor, *impl_->rt, impl_->static_flops, "", out);
  return out;
}

void Session::reset_profile() {
  std::unique_lock<std::shared_mutex> lock(impl_->run_mu);
  impl_->executor->reset_timings();
}

std::vector<Value> Session::run(const std::map<std::string, Value>& inputs) {
  // A misspelled name first: it is why the right one looks missing.
  std::set<std::string> known;
  for (const auto& spec : impl_->inputs) known.insert(spec.name);
  for (const auto& [name, v] : inputs)
    PI_CHECK(known.count(name), InvalidArgument, "the model has no input named '", name,
             "'; its inputs are: ", list_inputs(impl_->inputs));
  std::vector<Value> ordered;
  for (const auto& spec : impl_->inputs) {
    auto it = inputs.find(spec.name);
    if (it == inputs.end()) {
      PI_CHECK(spec.kind == "optional", InvalidArgument, "input '", spec.name, "' (", spec.type,
               ") is missing; the model needs: ", list_inputs(impl_->inputs));
      ordered.emplace_back();
      continue;
    }
    check_input(spec, it->second);
    ordered.push_back(it->second);
  }
  std::shared_lock<std::shared_mutex> shared(impl_->run_mu, std::defer_lock);
  std::unique_lock<std::shared_mutex> exclusive(impl_->run_mu, std::defer_lock);
  if (impl_->concurrent_runs) shared.lock();
  else
    exclusive.lock();
  omp_set_num_threads(impl_->rt->threads);
  const bool first = !impl_->executor->measured();
  // The pools record the first run's allocations and replay them from a planned arena after.
  struct RunBracket {
    const std::vector<std::shared_ptr<MemoryPool>>& pools;
    explicit RunBracket(const std::vector<std::shared_ptr<MemoryPool>>& p) : pools(p) {
      for (const auto& pool : pools) pool->begin_run();
    }
    ~RunBracket() {
      for (const auto& pool : pools) pool->end_run();
    }
  };
  std::vector<Value> out;
  {
    RunBracket bracket(impl_->rt->pools);
    out = impl_->executor->run(ordered, {});
    // Providers that queue work (cuda, vulkan) have finished it when run() returns, so a run's
    // time (bench) is its work and not only its queueing.
    for (const auto& p : impl_->rt->providers) p->synchronize();
  }
  {
    std::lock_guard<std::mutex> placement_lock(impl_->placement_mu);
    if (impl_->placement.device_copies != impl_->executor->last_copies())
      impl_->placement.device_copies = impl_->executor->last_copies();
    if (exclusive.owns_lock()) impl_->placement.capture = impl_->executor->capture_status();
  }
  if (!first) return out;
  // The first runs complete the placement: FLOP shares from their shapes, and the kernels that
  // plan per input shape know their implementation once they have run. Kernels are read while
  // none runs.
  if (shared.owns_lock()) shared.unlock();
  if (!exclusive.owns_lock()) exclusive.lock();
  std::lock_guard<std::mutex> placement_lock(impl_->placement_mu);
  if (impl_->placement.flops_basis.empty() && impl_->executor->measured())
    fill_placement(*impl_->executor, *impl_->rt, impl_->executor->first_run_flops(), "first run",
                   &impl_->placement);
  for (size_t i = 0; i < impl_->placement.nodes.size(); ++i)
    impl_->placement.nodes[i].impl = impl_->executor->nodes()[i].kernel->impl();
  return out;
}

std::vector<Value> Session::run(const std::map<std::string, Value>& inputs,
                                const std::vector<std::string>& output_names) {
  std::vector<Value> all = run(inputs);
  std::vector<Value> out;
  for (const auto& name : output_names) {
    size_t i = 0;
    while (i < impl_->outputs.size() && impl_->outputs[i].name != name) ++i;
    PI_CHECK(i < impl_->outputs.size(), InvalidArgument, "the model has no output named '", name,
             "'; its outputs are: ", list_inputs(impl_->outputs));
    out.push_back(all[i]);
  }
  return out;
}

std::string Placement::summary() const {
  std::string s = "placement:";
  char buf[64];
  for (size_t i = 0; i < providers.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.0f%%", providers[i].flops_share * 100);
    s += (i ? ", " : " ") + providers[i].provider + " " + std::to_string(providers[i].nodes) + "/" +
         std::to_string(total_nodes) + " nodes";
    if (!flops_basis.empty()) s += std::string(" (") + buf + " of FLOPs)";
  }
  if (flops_basis.empty()) s += " (FLOP shares known after the first run)";
  s += "; " + std::to_string(fallbacks.size()) + " fell back; " + std::to_string(device_copies) +
       " device copies";
  for (const auto& sk : skipped) s += "; skipped " + sk.provider + " (" + sk.reason + ")";
  if (!capture.empty()) s += "; graph capture " + capture;
  return s;
}

std::vector<ProviderInfo> available_providers() {
  std::vector<ProviderInfo> out;
  for (const auto& name : provider_names()) {
    auto p = create_provider(name);
    const ProviderStatus st = p->probe();
    out.push_back({name, p->device().str(), st.usable, st.reason,
                   static_cast<int>(p->kernels().size()), p->describe(), p->option_list()});
  }
  return out;
}

size_t release_cached_device_memory() {
  size_t freed = 0;
  for (const auto& name : provider_names()) freed += create_provider(name)->release_memory();
  return freed;
}

const char* version() { return "0.1.0"; }

}  // namespace polyinfer
