#include "plan/planner.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace polyinfer::plan {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Decoder KV-cache inputs by the names exporters give them (past_key_values.0.key,
// past_key_3, cache_v, …).
bool is_kv_input(const std::string& name) {
  const std::string n = lower(name);
  return n.find("past") != std::string::npos || n.find("cache") != std::string::npos;
}

double numel(const Shape& s) {
  double n = 1;
  for (int64_t d : s) n *= d < 0 ? 0 : static_cast<double>(d);
  return n;
}

// The peak a precision computes at on `t`, and which precision's figure that is: int4 weights
// are dequantized and computed at fp16 (weight-only quantization); a missing bf16 figure is the
// fp16 one and vice versa (the same tensor units on every chip in the catalog); tf32 falls back
// to fp32. Returns false when none is known.
bool compute_peak(const Target& t, Precision p, double* peak, Precision* used) {
  std::vector<Precision> order;
  switch (p) {
    case Precision::INT4: order = {Precision::FP16, Precision::BF16}; break;
    case Precision::FP16: order = {Precision::FP16, Precision::BF16}; break;
    case Precision::BF16: order = {Precision::BF16, Precision::FP16}; break;
    case Precision::TF32: order = {Precision::TF32, Precision::FP32}; break;
    default: order = {p}; break;
  }
  for (Precision q : order) {
    auto it = t.peak.find(q);
    if (it != t.peak.end() && it->second.known && it->second.value > 0) {
      *peak = it->second.value;
      *used = q;
      return true;
    }
  }
  return false;
}

double efficiency(const Figure& f) { return f.known && f.value > 0 ? f.value : 1.0; }

}  // namespace

double weight_bytes_per_element(Precision p) {
  if (p == Precision::INT4) return 0.5 + 2.0 / kInt4BlockSize;
  return precision_bytes(p);
}

double activation_bytes_per_element(Precision p) {
  switch (p) {
    case Precision::FP32:
    case Precision::TF32: return 4;
    case Precision::FP16:
    case Precision::BF16:
    case Precision::INT4: return 2;
    case Precision::FP8:
    case Precision::INT8: return 1;
  }
  return 4;
}

Analysis analyze(const ir::Graph& graph, const ir::Graph& weights_from, Precision precision) {
  Analysis a;
  a.precision = precision;
  const ElementBytes priced = [precision](DType dt, bool weight) {
    if (!is_float(dt)) return dtype_bits(dt) / 8.0;
    return weight ? weight_bytes_per_element(precision) : activation_bytes_per_element(precision);
  };
  std::set<std::string> memory_only;
  for (const ir::Node& n : graph.nodes) {
    NodeEstimate e{&n, estimate_cost(n, graph, priced)};
    if (!e.cost.known) a.unknown_shape_nodes.push_back(n.label());
    if (e.cost.memory_only)
      memory_only.insert(n.domain.empty() ? n.op_type : n.domain + "." + n.op_type);
    a.flops += e.cost.flops;
    a.bytes += e.cost.bytes();
    a.nodes.push_back(e);
  }
  a.memory_only_ops.assign(memory_only.begin(), memory_only.end());
  for (const auto& [name, t] : weights_from.initializers) {
    const double n = numel(t.shape());
    if (is_float(t.dtype())) a.parameters += n;
    a.weight_bytes += n * priced(t.dtype(), true);
  }
  a.activations = simulate_activation_memory(graph, priced);
  for (const auto& in : graph.inputs) {
    if (!is_kv_input(in.name) || in.type.kind != ir::TypeInfo::Kind::Tensor || !in.type.has_shape)
      continue;
    a.kv_inputs.push_back(in.name);
    a.kv_cache_bytes += numel(in.type.dims) * priced(in.type.elem, false);
  }
  if (!a.kv_inputs.empty())
    for (const auto& out : graph.outputs) {
      const std::string n = lower(out.name);
      if ((n.find("present") == std::string::npos && n.find("cache") == std::string::npos) ||
          out.type.kind != ir::TypeInfo::Kind::Tensor || !out.type.has_shape)
        continue;
      a.kv_output_bytes += numel(out.type.dims) * priced(out.type.elem, false);
    }
  return a;
}

Prediction predict(const Analysis& a, const Target& t, const ir::Graph& original,
                   const OpSupportProfile* profile) {
  Prediction p;
  p.target = &t;
  const bool peak_known = compute_peak(t, a.precision, &p.peak, &p.peak_precision);
  const bool chip = t.kind != "toolchain";  // a toolchain target has no figures to miss
  if (!peak_known && chip) {
    p.notes.push_back(std::string("no ") + precision_name(a.precision) + " peak is known for " +
                      t.name + ": compute time is not predicted (memory time only)");
  } else if (p.peak_precision != a.precision) {
    p.notes.push_back(std::string(precision_name(a.precision)) + " computes at the " +
                      precision_name(p.peak_precision) + " peak" +
                      (a.precision == Precision::INT4 ? " (weight-only int4: weights are "
                                                        "dequantized, arithmetic is fp16)"
                                                      : ""));
  }
  const double ce = efficiency(t.compute_efficiency), be = efficiency(t.bandwidth_efficiency);
  const double peak = p.peak * ce;
  if (t.bandwidth.known) p.bandwidth = t.bandwidth.value * be;
  else if (chip)
    p.notes.push_back("the bandwidth of " + t.name + " is unknown: memory time is not predicted");
  const double overhead = t.node_overhead.known ? t.node_overhead.value : 0;
  // A node whose bytes fit a measured cache level streams at that level's rate.
  auto bandwidth_for = [&](double bytes) {
    for (const auto& [size, rate] : t.bandwidth_tiers)
      if (bytes <= size) return rate * be;
    return p.bandwidth;
  };

  std::map<OpClass, ClassTotals> classes;
  std::vector<TimedNode> timed;
  double compute_part = 0, memory_part = 0;
  for (const NodeEstimate& e : a.nodes) {
    if (e.cost.cls == OpClass::View) continue;  // views run no kernel of their own
    const double bw = bandwidth_for(e.cost.bytes());
    const double tc = peak > 0 ? e.cost.flops / peak : 0;
    const double tm = bw > 0 ? e.cost.bytes() / bw : 0;
    TimedNode tn{e.node, e.cost.flops, e.cost.bytes(), std::max(tc, tm) + overhead, tc > tm};
    (tc > tm ? compute_part : memory_part) += std::max(tc, tm);
    p.compute_seconds += tc;
    p.memory_seconds += tm;
    p.overhead_seconds += overhead;
    p.seconds += tn.seconds;
    ClassTotals& c = classes[e.cost.cls];
    c.cls = e.cost.cls;
    c.nodes += 1;
    c.flops += tn.flops;
    c.bytes += tn.bytes;
    c.seconds += tn.seconds;
    c.compute_bound += tn.compute_bound ? 1 : 0;
    timed.push_back(tn);
  }
  for (auto& [cls, c] : classes) p.classes.push_back(c);
  std::sort(p.classes.begin(), p.classes.end(),
            [](const ClassTotals& x, const ClassTotals& y) { return x.seconds > y.seconds; });
  std::stable_sort(timed.begin(), timed.end(),
                   [](const TimedNode& x, const TimedNode& y) { return x.seconds > y.seconds; });
  timed.resize(std::min<size_t>(timed.size(), 10));
  p.top = std::move(timed);

  // The bound is where the time goes: nodes limited by their compute, by their bytes, or the
  // fixed cost per node when there are many small ones.
  p.bound = compute_part >= memory_part ? "compute" : "memory";
  if (compute_part == 0 && memory_part == 0) p.bound = "unknown";
  if (p.overhead_seconds > std::max(compute_part, memory_part)) p.bound = "overhead";
  p.intensity = a.bytes > 0 ? a.flops / a.bytes : 0;
  if (peak > 0 && p.bandwidth > 0) p.ridge = peak / p.bandwidth;

  p.memory_needed =
      a.weight_bytes + static_cast<double>(a.activations.arena_bytes) +
      std::max(0.0, static_cast<double>(a.activations.output_bytes) - a.kv_output_bytes) +
      a.kv_cache_bytes;
  p.memory_known = t.memory.known;
  p.fits = !t.memory.known || p.memory_needed <= t.memory.value;
  if (!t.memory.known && chip)
    p.notes.push_back("the memory capacity of " + t.name + " is unknown");

  if (profile) {
    p.op_support = profile->toolchain + " " + profile->version;
    p.unsupported = check_graph(*profile, original);
  }
  for (const auto& n : t.notes) p.notes.push_back(n);
  return p;
}

}  // namespace polyinfer::plan
