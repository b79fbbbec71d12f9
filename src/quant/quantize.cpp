#include "quant/quantize.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include "core/accuracy.h"
#include "infer/infer.h"
#include "onnx/export.h"

namespace polyinfer::quant {

AccuracyTarget parse_target(const std::string& text) {
  const auto eq = text.find('=');
  AccuracyTarget t;
  if (eq != std::string::npos) {
    t.metric = text.substr(0, eq);
    char* end = nullptr;
    const std::string v = text.substr(eq + 1);
    t.value = std::strtod(v.c_str(), &end);
    if (!v.empty() && *end == '\0' && std::isfinite(t.value) &&
        ((t.metric == "top1" && t.value > 0 && t.value <= 1) ||
         (t.metric == "cosine" && t.value > -1 && t.value <= 1) || t.metric == "snr"))
      return t;
  }
  PI_CHECK(false, InvalidArgument, "--target-accuracy '", text,
           "': write top1=F (0 < F <= 1, "
           "share of top-1 agreement with float), cosine=F (F <= 1) or snr=DB");
  return t;
}

namespace {

using Feeds = std::vector<std::map<std::string, Value>>;

Model copy_model(const Model& m) {
  Model c = m;
  c.graph = std::make_shared<ir::Graph>(*m.graph);
  return c;
}

Session open(const Model& m, int threads, int level, const std::vector<std::string>& keep) {
  SessionOptions o;
  o.threads = threads;
  o.optimization_level = level;
  o.keep_values = keep;
  const std::string bytes = export_onnx_bytes(m);
  return Session::load_bytes(bytes.data(), bytes.size(), o);
}

double median_ms(Session& s, const std::map<std::string, Value>& feed, int runs) {
  s.run(feed);
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    s.run(feed);
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The model's outputs and the kept values of each validation run, by name.
using Values = std::vector<std::map<std::string, Tensor>>;

Values run_all(Session& s, const Feeds& feeds, const StaticOptions& o) {
  Values all;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const std::vector<Value> out = s.run(feeds[i]);
    std::map<std::string, Tensor> byname;
    for (size_t k = 0; k < out.size(); ++k)
      if (out[k].is_tensor()) byname[s.outputs()[k].name] = out[k].tensor();
    all.push_back(std::move(byname));
    if (o.progress) o.progress("evaluating", int(i + 1), int(feeds.size()));
  }
  return all;
}

double metric_of(const ErrorStats& e, const std::string& metric) {
  if (metric == "top1") return e.top1();
  if (metric == "cosine") return e.cosine();
  return e.snr_db();
}

// The worst metric over the model's outputs, and the relative RMS error of every kept value.
struct Evaluation {
  double metric = 0;
  std::map<std::string, double> error;
};

Evaluation evaluate(const Values& ref, const Values& got, const std::vector<std::string>& outputs,
                    const AccuracyTarget& t) {
  std::map<std::string, ErrorStats> stats;
  for (size_t i = 0; i < ref.size(); ++i)
    for (const auto& [name, r] : ref[i]) {
      auto g = got[i].find(name);
      if (g != got[i].end()) stats[name].add(g->second, r);
    }
  Evaluation e;
  e.metric = std::numeric_limits<double>::infinity();
  for (const auto& name : outputs) {
    const double m = metric_of(stats[name], t.metric);
    PI_CHECK(t.metric != "top1" || m >= 0, InvalidArgument, "--target-accuracy top1: output '",
             name, "' is not shaped like classifier scores ([N, C]); use cosine or snr");
    e.metric = std::min(e.metric, m);
  }
  for (const auto& [name, s] : stats) e.error[name] = s.relative_rms();
  return e;
}

// The quantized node adding the most error: its output's relative error less the largest
// error among its inputs (what it inherited). Ties go to the later node (nearer the output).
std::string most_sensitive(const ir::Graph& g, const QdqPlan& plan, const Evaluation& e) {
  std::set<std::string> in_plan(plan.nodes.begin(), plan.nodes.end());
  std::string best;
  double best_added = -std::numeric_limits<double>::infinity();
  auto error = [&](const std::string& v) {
    auto it = e.error.find(v);
    return it == e.error.end() ? 0.0 : it->second;
  };
  for (const auto& n : g.nodes) {
    if (!in_plan.count(n.name)) continue;
    double inherited = 0;
    for (const auto& v : n.inputs) inherited = std::max(inherited, error(v));
    const double added = error(n.outputs[0]) - inherited;
    if (added >= best_added) {
      best_added = added;
      best = n.name;
    }
  }
  return best;
}

// Values to compare layer by layer: the float tensors around each quantized node, which keep
// their names in the QDQ model (graph inputs never differ; graph outputs come anyway).
std::vector<std::string> layer_values(const ir::Graph& g, const QdqPlan& plan) {
  std::set<std::string> skip, seen;
  for (const auto& v : g.inputs) skip.insert(v.name);
  for (const auto& v : g.outputs) skip.insert(v.name);
  std::set<std::string> in_plan(plan.nodes.begin(), plan.nodes.end());
  std::vector<std::string> keep;
  auto add = [&](const std::string& v) {
    if (!v.empty() && !skip.count(v) && !g.initializers.count(v) && seen.insert(v).second)
      keep.push_back(v);
  };
  for (const auto& n : g.nodes)
    if (in_plan.count(n.name)) {
      for (const auto& v : n.inputs) add(v);
      add(n.outputs[0]);
    }
  return keep;
}

}  // namespace

StaticReport quantize_static(Model& model, const Feeds& feeds, const StaticOptions& o,
                             const Feeds& validation) {
  PI_CHECK(!feeds.empty(), InvalidArgument, "quantize: no calibration samples");
  infer::infer_types(model);  // the rewrites read value types
  StaticReport r;
  // Level 1 keeps the model standard ONNX (ONNX Runtime must run the result) and folds what
  // quantization should not see: BatchNormalization into Conv weights, Identity, constants.
  r.simplified = opt::optimize(*model.graph, 1);
  for (const auto& x : o.qdq.exclude) {
    bool found = false;
    for (const auto& n : model.graph->nodes) found = found || n.name == x || n.op_type == x;
    PI_CHECK(found, InvalidArgument, "--exclude ", x,
             ": no node of that name or op type in the "
             "model (after simplification: BatchNormalization and Identity nodes are folded)");
  }
  const QdqPlan full = plan_qdq(*model.graph, o.qdq);
  PI_CHECK(!full.nodes.empty(), InvalidArgument,
           "quantize: the model has no float32 Conv, MatMul or Gemm left to quantize");

  // Calibrate every activation of the full plan once: excluding layers later only drops some.
  Calibrator cal(model, full.activations, o.threads);
  const int n = static_cast<int>(feeds.size());
  for (int i = 0; i < n; ++i) {
    cal.observe_range(feeds[size_t(i)]);
    if (o.progress) o.progress("calibrating", i + 1, n);
  }
  if (needs_histograms(o.method))
    for (int i = 0; i < n; ++i) {
      cal.observe_histogram(feeds[size_t(i)]);
      if (o.progress) o.progress(method_name(o.method), i + 1, n);
    }
  r.samples = n;
  const std::map<std::string, Range> ranges = cal.ranges(o.method, o.percentile);

  auto finish = [&](Model& m, const QdqPlan& plan, QdqReport rep) {
    r.plan = plan;
    r.qdq = std::move(rep);
    r.quantized_ops.clear();
    for (const auto& name : plan.nodes)
      for (const auto& node : model.graph->nodes)
        if (node.name == name) ++r.quantized_ops[node.op_type];
    model = std::move(m);
  };

  if (o.target.metric.empty()) {
    Model m = copy_model(model);
    QdqReport rep = apply_qdq(*m.graph, full, ranges, o.qdq);
    finish(m, full, std::move(rep));
    return r;
  }

  // Mixed precision: evaluate, return the layer adding the most error to float, again.
  const Feeds& val = validation.empty() ? feeds : validation;
  std::vector<std::string> outputs;
  for (const auto& v : model.graph->outputs) outputs.push_back(v.name);
  const std::vector<std::string> keep = layer_values(*model.graph, full);
  Session fp32 = open(model, o.threads, 0, keep);
  const Values ref = run_all(fp32, val, o);

  QdqOptions qo = o.qdq;
  std::string last_excluded, last_op;
  for (;;) {
    Model m = copy_model(model);
    const QdqPlan plan = plan_qdq(*m.graph, qo);
    QdqReport rep = apply_qdq(*m.graph, plan, ranges, qo);
    std::vector<std::string> kept;
    for (const auto& v : keep)
      for (const auto& node : m.graph->nodes)
        if (std::find(node.outputs.begin(), node.outputs.end(), v) != node.outputs.end()) {
          kept.push_back(v);
          break;
        }
    Session s = open(m, o.threads, 0, kept);
    const Evaluation e = evaluate(ref, run_all(s, val, o), outputs, o.target);
    r.search.push_back({last_excluded, last_op, e.metric});
    r.target_met = e.metric >= o.target.value;
    const int excluded = static_cast<int>(r.search.size()) - 1;
    const bool stop =
        r.target_met || plan.nodes.empty() || (o.max_excluded > 0 && excluded >= o.max_excluded);
    if (r.search.size() == 1 || stop) {
      Session timed = open(m, o.threads, 3, {});
      (r.search.size() == 1 ? r.all_int8_ms : r.written_ms) = median_ms(timed, val.front(), 10);
    }
    if (stop) {
      if (r.search.size() == 1) r.written_ms = r.all_int8_ms;
      finish(m, plan, std::move(rep));
      return r;
    }
    last_excluded = most_sensitive(*model.graph, plan, e);
    for (const auto& node : model.graph->nodes)
      if (node.name == last_excluded) last_op = node.op_type;
    qo.exclude.insert(last_excluded);
  }
}

}  // namespace polyinfer::quant
