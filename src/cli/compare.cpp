// `polyinfer compare MODEL_A MODEL_B [--data PATH | -i NAME=FILE... | --samples N] [--json]`:
// both models on the same inputs, and per output how far B is from A (the reference): max and
// mean absolute error, cosine similarity, SNR, and top-1 / top-5 agreement for classifier scores.
// The question behind it: did this conversion (optimization, fp16, INT8) keep the model's answers?
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "cli/cli.h"
#include "cli/compare_report.h"
#include "cli/inputs.h"
#include "cli/json.h"
#include "core/accuracy.h"
#include "infer/infer.h"
#include "onnx/import.h"
#include "polyinfer/io.h"

namespace polyinfer::cli {

namespace {

// Median latency in ms of `n` runs of `s` on `feed`, after one warm-up run.
double median_ms(Session& s, const std::map<std::string, Value>& feed, int n) {
  s.run(feed);
  std::vector<double> t;
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    s.run(feed);
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

const char* kUsage =
    "usage: polyinfer compare MODEL_A MODEL_B [--data PATH] [-i NAME=FILE]... [--samples N]\n"
    "                         [--seed N] [--shape NAME=DIMS] [--providers LIST] [--threads N]\n"
    "                         [--json]\n"
    "  MODEL_A is the reference; MODEL_B is judged against it on the same inputs.\n"
    "  --data PATH   a folder of .npy files (one sample each, in name order) or one .npy; a file\n"
    "                whose first dimension is larger than the input's batch of 1 is split into\n"
    "                samples. Single-input models only (use -i for several inputs).\n"
    "  --samples N   without --data: N seeded random inputs (default 1), seeds --seed, +1, ...\n"
    "  --per-layer   also compare every intermediate value both models produce (matched by name;\n"
    "                both run unoptimized so each value exists as in its file), rank the nodes\n"
    "                by how much error they add, and name the ones to keep in float\n"
    "  --top N       layers to list with --per-layer (default 10)\n"
    "  --html FILE   also write a static HTML report (inline SVG chart of the per-layer error)\n"
    "  --time        also time both models on the first sample (median of --iterations, default\n"
    "                20, after one warm-up run each), side by side in one run\n";

// A value both models produce, and the node that produces it in the reference.
struct Layer {
  std::string value, node, op;
  std::vector<std::string> inputs;  // the node's inputs (to find the error it inherits)
};

// Float (or untyped) tensor values produced by a node in both models, in the reference's order.
std::vector<Layer> shared_layers(const std::string& path_a, const std::string& path_b) {
  ImportOptions o;
  o.read_external_data = false;
  Model a = import_onnx_file(path_a, o), b = import_onnx_file(path_b, o);
  infer::infer_types(a);
  infer::infer_types(b);
  std::set<std::string> in_b;
  for (const auto& n : b.graph->nodes) in_b.insert(n.outputs.begin(), n.outputs.end());
  std::set<std::string> outputs;
  for (const auto& v : a.graph->outputs) outputs.insert(v.name);
  std::vector<Layer> layers;
  for (const auto& n : a.graph->nodes)
    for (const auto& v : n.outputs) {
      if (v.empty() || !in_b.count(v) || outputs.count(v)) continue;
      const ir::TypeInfo* t = a.graph->type_of(v);
      if (t && (t->kind != ir::TypeInfo::Kind::Tensor || !is_float(t->elem))) continue;
      layers.push_back({v, n.name, n.op_type, n.inputs});
    }
  return layers;
}

std::string fixed(double v, int digits) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string sci(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

int cmd_compare(const std::vector<std::string>& argv) {
  const Args args = parse_args(argv, {"help", "json", "allow-missing", "per-layer", "time"},
                               {"data", "input", "samples", "seed", "shape", "providers", "threads",
                                "level", "top", "html", "iterations"},
                               "compare");
  if (args.flag("help")) {
    std::cout << kUsage;
    return kExitOk;
  }
  if (args.positional.size() != 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  SessionOptions opts = session_options(args);
  const bool per_layer = args.flag("per-layer");
  const int top = args.get_int("top", 10, 1, 100000);
  std::vector<Layer> layers;
  if (per_layer) {
    layers = shared_layers(args.positional[0], args.positional[1]);
    opts.optimization_level = 0;
    for (const auto& l : layers) opts.keep_values.push_back(l.value);
  }
  Session a = Session::load(args.positional[0], opts);
  Session b = Session::load(args.positional[1], opts);
  std::vector<std::string> notes;
  // The kernels' caveats on this machine (int8 products that may saturate, say) explain errors.
  for (const Session* s : {&a, &b})
    for (const auto& n : s->placement().notes)
      notes.push_back((s == &a ? args.positional[0] : args.positional[1]) + ": " + n);

  // The samples, as input maps, fed to both models.
  std::vector<std::map<std::string, Value>> samples;
  if (args.flag("data")) {
    PI_CHECK(a.inputs().size() == 1, InvalidArgument, "--data feeds single-input models; ",
             args.positional[0], " takes ", a.inputs().size(),
             " inputs: give -i NAME=FILE for each");
    for (auto& d :
         read_samples("--data", args.get("data"), a.inputs()[0], SplitRows::WhenBatchIsOne))
      samples.push_back({{a.inputs()[0].name, Value(d.tensor)}});
  } else {
    const int n = args.get_int("samples", 1, 1, 1000000);
    const int seed = args.get_int("seed", 0, 0, 1 << 30);
    std::vector<std::string> later;  // the same notes again for every further sample
    for (int k = 0; k < n; ++k) {
      Args with_seed = args;
      with_seed.options.erase("seed");
      with_seed.options.emplace("seed", std::to_string(seed + k));
      samples.push_back(make_inputs(a, with_seed, k == 0 ? &notes : &later));
    }
  }
  for (const auto& in : b.inputs())
    PI_CHECK(samples.front().count(in.name), InvalidArgument, args.positional[1], " takes input '",
             in.name, "', which ", args.positional[0], " does not: the models must share inputs");

  // Outputs are matched by name.
  // Outputs, then kept layers, matched by name.
  std::set<std::string> kept(opts.keep_values.begin(), opts.keep_values.end());
  std::vector<std::string> names;
  std::vector<size_t> ia, ib;
  auto match = [&](bool layer) {
    for (size_t i = 0; i < a.outputs().size(); ++i)
      for (size_t j = 0; j < b.outputs().size(); ++j)
        if (a.outputs()[i].name == b.outputs()[j].name &&
            kept.count(a.outputs()[i].name) == layer) {
          names.push_back(a.outputs()[i].name);
          ia.push_back(i);
          ib.push_back(j);
        }
  };
  match(false);
  const size_t model_outputs = names.size();
  match(true);
  PI_CHECK(model_outputs > 0, InvalidArgument,
           "the models share no output name: nothing to compare");
  std::vector<ErrorStats> stats(names.size());
  for (const auto& feed : samples) {
    std::map<std::string, Value> feed_b;
    for (const auto& in : b.inputs()) feed_b[in.name] = feed.at(in.name);
    const std::vector<Value> ra = a.run(feed), rb = b.run(feed_b);
    for (size_t k = 0; k < names.size(); ++k) {
      PI_CHECK(ra[ia[k]].is_tensor() && rb[ib[k]].is_tensor(), UnsupportedOp, "compare: output '",
               names[k], "' is not a tensor");
      stats[k].add(rb[ib[k]].tensor(), ra[ia[k]].tensor());
    }
  }

  // Timing, alternating the models so that a busy moment of the machine hits both alike.
  double ms_a = 0, ms_b = 0;
  if (args.flag("time")) {
    const int n = args.get_int("iterations", 20, 1, 100000);
    std::map<std::string, Value> feed_b;
    for (const auto& in : b.inputs()) feed_b[in.name] = samples.front().at(in.name);
    std::vector<double> ta, tb;
    for (int round = 0; round < 3; ++round) {
      ta.push_back(median_ms(a, samples.front(), (n + 2) / 3));
      tb.push_back(median_ms(b, feed_b, (n + 2) / 3));
    }
    std::sort(ta.begin(), ta.end());
    std::sort(tb.begin(), tb.end());
    ms_a = ta[1];
    ms_b = tb[1];
  }

  // Per layer: the relative error each value carries, and what its node adds to the largest
  // error among its inputs (the "growth") — the nodes with the largest growth are where precision
  // is lost, the ones to keep in float.
  struct LayerError {
    const Layer* layer;
    const ErrorStats* stats;
    double rel = 0, growth = 0;
  };
  std::vector<LayerError> per;
  if (per_layer) {
    std::map<std::string, double> rel_of;
    std::map<std::string, const ErrorStats*> stats_of;
    for (size_t k = model_outputs; k < names.size(); ++k) stats_of[names[k]] = &stats[k];
    for (const auto& l : layers) {
      auto it = stats_of.find(l.value);
      if (it == stats_of.end()) continue;
      double inherited = 0;
      for (const auto& in : l.inputs)
        if (auto r = rel_of.find(in); r != rel_of.end()) inherited = std::max(inherited, r->second);
      const double rel = it->second->relative_rms();
      rel_of[l.value] = rel;
      per.push_back({&l, it->second, rel, rel - inherited});
    }
  }
  std::vector<const LayerError*> ranked;
  for (const auto& e : per) ranked.push_back(&e);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const LayerError* x, const LayerError* y) { return x->growth > y->growth; });
  if (ranked.size() > static_cast<size_t>(top)) ranked.resize(static_cast<size_t>(top));

  if (args.flag("html")) {
    CompareReport r{args.positional[0],
                    args.positional[1],
                    static_cast<int>(samples.size()),
                    ms_a,
                    ms_b,
                    {},
                    {}};
    for (size_t k = 0; k < model_outputs; ++k) {
      const ErrorStats& s = stats[k];
      r.outputs.push_back(
          {names[k], s.max_abs(), s.mean_abs(), s.cosine(), s.snr_db(), s.top1(), s.top5()});
    }
    std::set<const LayerError*> keep;
    for (const auto* e : ranked)
      if (e->growth > 0) keep.insert(e);
    for (const auto& e : per)
      r.layers.push_back({e.layer->node, e.layer->op, e.rel, e.growth, keep.count(&e) > 0});
    const std::string path = args.get("html");
    std::ofstream f(path);
    PI_CHECK(f.good(), Io, "--html: cannot write '", path, "': check the folder exists");
    f << compare_html(r);
    PI_CHECK(f.good(), Io, "--html: writing '", path, "' failed (disk full?)");
  }

  if (args.flag("json")) {
    JsonWriter w;
    w.begin_object()
        .key("reference")
        .value(args.positional[0])
        .key("compared")
        .value(args.positional[1])
        .key("samples")
        .value(static_cast<int>(samples.size()));
    w.key("outputs").begin_array();
    for (size_t k = 0; k < model_outputs; ++k) {
      const ErrorStats& s = stats[k];
      w.begin_object()
          .key("name")
          .value(names[k])
          .key("max_abs")
          .value(s.max_abs())
          .key("mean_abs")
          .value(s.mean_abs())
          .key("cosine")
          .value(s.cosine());
      w.key("snr_db");
      std::isinf(s.snr_db()) ? w.null() : w.value(s.snr_db());
      w.key("top1");
      s.top1() < 0 ? w.null() : w.value(s.top1());
      w.key("top5");
      s.top5() < 0 ? w.null() : w.value(s.top5());
      w.key("non_finite").value(s.non_finite()).end_object();
    }
    w.end_array();
    if (ms_a > 0) {
      w.key("latency_ms")
          .begin_object()
          .key("reference")
          .value(ms_a)
          .key("compared")
          .value(ms_b)
          .end_object();
    }
    if (per_layer) {
      w.key("layers").begin_array();
      for (const auto& e : per) {
        w.begin_object()
            .key("value")
            .value(e.layer->value)
            .key("node")
            .value(e.layer->node)
            .key("op")
            .value(e.layer->op)
            .key("relative_rms");
        std::isinf(e.rel) ? w.null() : w.value(e.rel);
        w.key("growth");
        std::isinf(e.growth) ? w.null() : w.value(e.growth);
        w.key("cosine").value(e.stats->cosine()).key("max_abs").value(e.stats->max_abs());
        w.end_object();
      }
      w.end_array().key("keep_in_float").begin_array();
      for (const auto* e : ranked)
        if (e->growth > 0) w.value(e->layer->node);
      w.end_array();
    }
    w.end_object();
    std::cout << w.str() << "\n";
    return kExitOk;
  }
  std::cout << "compare: " << args.positional[1] << " against " << args.positional[0] << " on "
            << samples.size() << " sample" << (samples.size() == 1 ? "" : "s") << "\n";
  for (const auto& n : notes) std::cout << "  note: " << n << "\n";
  std::printf("%-24s %10s %10s %10s %9s %7s %7s\n", "output", "max abs", "mean abs", "cosine",
              "SNR dB", "top-1", "top-5");
  for (size_t k = 0; k < model_outputs; ++k) {
    const ErrorStats& s = stats[k];
    std::printf("%-24s %10s %10s %10s %9s %7s %7s\n", names[k].c_str(), sci(s.max_abs()).c_str(),
                sci(s.mean_abs()).c_str(), fixed(s.cosine(), 6).c_str(),
                fixed(s.snr_db(), 1).c_str(), s.top1() < 0 ? "-" : fixed(s.top1(), 3).c_str(),
                s.top5() < 0 ? "-" : fixed(s.top5(), 3).c_str());
    if (s.non_finite())
      std::printf("  %lld values are NaN or infinite where the reference is finite\n",
                  static_cast<long long>(s.non_finite()));
  }
  if (ms_a > 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "latency (median, %s runs): reference %.3f ms, compared %.3f ms (%.2fx)\n",
                  args.get("iterations", "20").c_str(), ms_a, ms_b, ms_b / ms_a);
    std::cout << buf;
  }
  if (per_layer) {
    std::cout << "\nper layer: " << per.size() << " values both models produce (unoptimized runs); "
              << "largest error added by a node first:\n";
    std::printf("%-32s %-18s %12s %12s %10s\n", "node", "op", "rel. error", "added", "cosine");
    std::string keep;
    for (const auto* e : ranked) {
      std::printf("%-32s %-18s %12s %12s %10s\n", e->layer->node.c_str(), e->layer->op.c_str(),
                  sci(e->rel).c_str(), sci(e->growth).c_str(),
                  fixed(e->stats->cosine(), 6).c_str());
      if (e->growth > 0) keep += (keep.empty() ? "" : ", ") + e->layer->node;
    }
    std::cout << (keep.empty() ? "no node adds error: nothing to keep in float\n"
                               : "keep in float first: " + keep + "\n");
  }
  return kExitOk;
}

}  // namespace polyinfer::cli
