// What `polyinfer bench` (cli/bench.cpp) and its side-by-side mode (cli/bench_compare.cpp)
// share: the measuring options, latency statistics, the progress line and JSON pieces.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "polyinfer/session.h"

namespace polyinfer::cli {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b);

struct BenchOptions {
  int warmup = 1;          // untimed runs before measuring; the first is reported on its own
  int iterations = 0;      // > 0: exactly this many measured runs
  double duration_s = 3;   // else: measure until this much time has passed...
  int min_iterations = 3;  // ...and at least this many runs
  int top = 15;            // nodes listed in the --profile table
  bool json = false, profile = false;
  int monitor_ms = 0;  // > 0: sample telemetry this often during the measured runs
};

// --warmup, --iterations | --duration, --top, --json, --profile, --monitor[-interval]; throws
// UsageError naming a bad one.
BenchOptions bench_options(const Args& args);

struct Stats {
  double min = 0, mean = 0, median = 0, p90 = 0, p99 = 0, max = 0, wall_ms = 0;
};

// Statistics of latency samples (ms); wall_ms is the time the measured runs took in all.
Stats summarize(std::vector<double> samples, double wall_ms);
// Linear interpolation between closest ranks (numpy's default), of sorted `v`.
double percentile(const std::vector<double>& v, double p);

double peak_rss_mb();
// A JSON number; null for NaN and infinities, which JSON cannot spell.
std::string num(double x);
// {"summary": ..., "providers": [{name, nodes, flops_share}], "total_nodes", "fallbacks",
// "device_copies"}.
std::string placement_json(const Placement& pl);

// `bench --compare LIST`: the model on each listed provider side by side (bench_compare.cpp).
int bench_compare(const Args& args, const BenchOptions& bo);

// One line on stderr rewritten in place, only on a terminal and only once the bench has taken
// more than 2 s: short benches stay quiet and logs get no carriage returns.
class Progress {
 public:
  explicit Progress(Clock::time_point start);
  void update(const std::string& text);
  void clear();

 private:
  Clock::time_point start_, last_{};
  bool tty_, shown_ = false;
};

}  // namespace polyinfer::cli
