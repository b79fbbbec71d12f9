// `polyinfer bench MODEL --compare cpu,vulkan,cuda`: one model on several providers side by
// side, in one process, on the same inputs: which is fastest here, where each placed the nodes,
// and whether their outputs agree.
//
// Each name X is a session with providers {X, cpu} (just {cpu} for cpu), so nodes X cannot run
// fall back to the CPU and the placement column says how many did: a provider is never credited
// with work it handed back. A provider that is not usable here is a row with the probe's reason,
// not an error, so the one command answers "is the GPU worth it on this box" either way.
// Measured runs alternate between the sessions in rounds (kRounds), as bench/compare_ort.py does
// with ONNX Runtime, so a machine that slows down mid-way slows every column alike.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "cli/bench_util.h"
#include "cli/cli.h"
#include "cli/inputs.h"
#include "core/accuracy.h"
#include "runtime/provider.h"

namespace polyinfer::cli {
namespace {

constexpr int kRounds = 3;

struct Column {
  std::string name;                  // as given: "vulkan", "vulkan:1", "cpu"
  std::unique_ptr<Session> session;  // null when the provider is not usable
  std::string error;                 // why not: the probe's reason or the load error
  double create_ms = 0, first_ms = 0;
  std::vector<double> samples;
  std::vector<Value> outputs;  // of the first run
  double max_abs_diff = -1;    // against the reference column's outputs; -1: not compared
};

std::vector<std::string> provider_list(const std::string& name) {
  // auto ends with cpu already; "cpu:winograd=off" is cpu with options (an A/B column).
  if (name == "auto" || parse_provider_name(name).base == "cpu") return {name};
  return {name, "cpu"};
}

// Largest |a - b| over the tensor outputs the two columns share; -1 when none compares.
double max_abs_diff(const std::vector<Value>& got, const std::vector<Value>& ref) {
  double worst = -1;
  for (size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
    if (!got[i].is_tensor() || !ref[i].is_tensor()) continue;
    ErrorStats e;
    e.add(got[i].tensor(), ref[i].tensor());
    worst = std::max(worst, e.non_finite() ? INFINITY : e.max_abs());
  }
  return worst;
}

std::string column_json(const Column& c, const Stats& st) {
  std::string s = "{\"provider\": " + json_str(c.name) + ", \"providers\": [";
  const auto list = provider_list(c.name);
  for (size_t i = 0; i < list.size(); ++i) s += std::string(i ? ", " : "") + json_str(list[i]);
  s += "], \"usable\": " + std::string(c.session ? "true" : "false");
  if (!c.session) return s + ", \"reason\": " + json_str(c.error) + "}";
  return s + ", \"session_create_ms\": " + num(c.create_ms) +
         ", \"first_run_ms\": " + num(c.first_ms) +
         ", \"iterations\": " + std::to_string(c.samples.size()) +
         ", \"latency_ms\": {\"min\": " + num(st.min) + ", \"mean\": " + num(st.mean) +
         ", \"median\": " + num(st.median) + ", \"p90\": " + num(st.p90) +
         ", \"p99\": " + num(st.p99) + ", \"max\": " + num(st.max) +
         "}, \"placement\": " + placement_json(c.session->placement()) +
         ", \"max_abs_diff\": " + (c.max_abs_diff < 0 ? "null" : num(c.max_abs_diff)) + "}";
}

}  // namespace

int bench_compare(const Args& args, const BenchOptions& bo) {
  if (args.options.count("providers"))
    throw UsageError(
        "--compare and --providers exclude each other: --compare names the "
        "providers, one column each");
  if (bo.profile || bo.monitor_ms > 0)
    throw UsageError(
        "--compare measures latency only; run --profile or --monitor with one "
        "--providers list");
  const std::vector<std::string> names = split_list(args.get("compare"));
  if (names.size() < 2)
    throw UsageError("--compare takes two or more providers, e.g. --compare cpu,vulkan; got '" +
                     args.get("compare") + "'");
  std::set<std::string> seen;
  for (const auto& n : names)
    if (!seen.insert(n).second) throw UsageError("--compare names '" + n + "' twice");

  // Sessions one after another, so each creation time is its own (the first also pays the
  // process's one-time costs: libonnx's schemas, oneDNN's first use).
  std::vector<Column> cols(names.size());
  std::vector<std::string> notes;
  for (size_t i = 0; i < names.size(); ++i) {
    Column& c = cols[i];
    c.name = names[i];
    SessionOptions so = session_options(args);
    so.providers = provider_list(c.name);
    try {
      c.session = std::make_unique<Session>(Session::load(args.positional[0], so));
      c.create_ms = c.session->creation_times().total_ms;
    } catch (const Error& e) {
      // The model itself at fault fails the command; a provider that cannot run here is a row.
      if (e.code() != ErrorCode::ProviderUnavailable && e.code() != ErrorCode::UnsupportedOp) throw;
      c.error = e.what();
    }
  }
  const Column* ref = nullptr;
  for (const auto& c : cols)
    if (c.session && !ref) ref = &c;
  if (!ref) {
    std::string why;
    for (const auto& c : cols) why += "\n  " + c.name + ": " + c.error;
    fail(ErrorCode::ProviderUnavailable,
         "bench --compare: no provider listed is usable here:", why);
  }
  // One input set for all: the same seeded values or files.
  const std::map<std::string, Value> feeds = make_inputs(*ref->session, args, &notes);

  const auto t_start = Clock::now();
  Progress progress(t_start);
  for (auto& c : cols) {
    if (!c.session) continue;
    for (int i = 0; i < bo.warmup; ++i) {
      progress.update(c.name + ": warm-up run " + std::to_string(i + 1));
      const auto t0 = Clock::now();
      std::vector<Value> out = c.session->run(feeds);
      if (i == 0) {
        c.first_ms = ms_between(t0, Clock::now());
        c.outputs = std::move(out);
      }
    }
  }
  for (auto& c : cols)
    if (c.session) c.max_abs_diff = max_abs_diff(c.outputs, ref->outputs);

  // Rounds: each column measures a third of the budget in turn.
  for (int r = 0; r < kRounds; ++r)
    for (auto& c : cols) {
      if (!c.session) continue;
      const auto m0 = Clock::now();
      const int want = bo.iterations > 0 ? (bo.iterations * (r + 1) + kRounds - 1) / kRounds : 0;
      for (int n = 0;; ++n) {
        const double elapsed_s = ms_between(m0, Clock::now()) / 1000;
        if (bo.iterations > 0 ? static_cast<int>(c.samples.size()) >= want
                              : elapsed_s >= bo.duration_s / kRounds &&
                                    n >= (bo.min_iterations + kRounds - 1) / kRounds)
          break;
        char buf[160];
        std::snprintf(buf, sizeof buf, "round %d/%d, %s: %zu runs", r + 1, kRounds, c.name.c_str(),
                      c.samples.size());
        progress.update(buf);
        const auto t0 = Clock::now();
        c.session->run(feeds);
        c.samples.push_back(ms_between(t0, Clock::now()));
      }
    }
  progress.clear();

  std::vector<Stats> stats;
  for (const auto& c : cols) stats.push_back(summarize(c.samples, 0));
  const Stats& ref_st = stats[static_cast<size_t>(ref - cols.data())];

  if (bo.json) {
    std::cout << "{\"model\": " << json_str(args.positional[0])
              << ", \"threads\": " << ref->session->threads() << ", \"warmup\": " << bo.warmup
              << ", \"rounds\": " << kRounds << ", \"reference\": " << json_str(ref->name)
              << ", \"compare\": [";
    for (size_t i = 0; i < cols.size(); ++i)
      std::cout << (i ? ", " : "") << column_json(cols[i], stats[i]);
    std::cout << "], \"notes\": [";
    for (size_t i = 0; i < notes.size(); ++i) std::cout << (i ? ", " : "") << json_str(notes[i]);
    std::cout << "]}\n";
    return kExitOk;
  }

  for (const auto& n : notes) std::cout << "note: " << n << "\n";
  std::printf("model: %s; %d thread%s; %d warm-up run%s, then %d alternating rounds\n",
              args.positional[0].c_str(), ref->session->threads(),
              ref->session->threads() == 1 ? "" : "s", bo.warmup, bo.warmup == 1 ? "" : "s",
              kRounds);
  std::printf("%-12s %10s %10s %6s %10s %10s %8s %12s  %s\n", "provider", "create ms", "first ms",
              "runs", "median ms", "p90 ms", "ratio", "max |diff|", "placement");
  for (size_t i = 0; i < cols.size(); ++i) {
    const Column& c = cols[i];
    if (!c.session) {
      std::printf("%-12s not usable: %s\n", c.name.c_str(), c.error.c_str());
      continue;
    }
    const Stats& st = stats[i];
    std::string placement = c.session->placement().summary();
    if (placement.rfind("placement: ", 0) == 0) placement = placement.substr(11);
    char ratio[32], diff[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx", ref_st.median > 0 ? st.median / ref_st.median : 0);
    std::snprintf(diff, sizeof diff, "%.3g", c.max_abs_diff);
    std::printf("%-12s %10.1f %10.2f %6zu %10.3f %10.3f %8s %12s  %s\n", c.name.c_str(),
                c.create_ms, c.first_ms, c.samples.size(), st.median, st.p90, ratio,
                c.max_abs_diff < 0 ? "-" : diff, placement.c_str());
  }
  std::printf(
      "(ratio: median latency over %s's; max |diff|: outputs of the first run against "
      "%s's)\n",
      ref->name.c_str(), ref->name.c_str());
  return kExitOk;
}

}  // namespace polyinfer::cli
