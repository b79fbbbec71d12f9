#include "cli/bench_util.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace polyinfer::cli {

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

BenchOptions bench_options(const Args& args) {
  BenchOptions o;
  // With --capture-graph the second run is the recording: both stay out of the measured runs.
  o.warmup = args.get_int("warmup", args.flag("capture-graph") ? 2 : 1, 1, 100000);
  o.top = args.get_int("top", 15, 1, 100000);
  o.json = args.flag("json");
  o.profile = args.flag("profile");
  if (args.flag("monitor") || args.options.count("monitor-interval"))
    o.monitor_ms = args.get_int("monitor-interval", 100, 10, 60000);
  const bool has_iter = args.options.count("iterations") > 0;
  const bool has_dur = args.options.count("duration") > 0;
  if (has_iter && has_dur)
    throw UsageError("--iterations and --duration exclude each other; give one");
  if (has_iter) o.iterations = args.get_int("iterations", 0, 1, 10000000);
  if (has_dur) {
    const std::string v = args.get("duration");
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(d > 0) || d > 86400)
      throw UsageError("--duration takes seconds, a number above 0 (e.g. 2.5), got '" + v + "'");
    o.duration_s = d;
    o.min_iterations = 1;  // an explicit duration is a time budget
  }
  return o;
}

double percentile(const std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const double pos = p * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

std::string num(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

Stats summarize(std::vector<double> samples, double wall_ms) {
  Stats s;
  s.wall_ms = wall_ms;
  std::sort(samples.begin(), samples.end());
  if (samples.empty()) return s;
  s.min = samples.front();
  s.max = samples.back();
  double sum = 0;
  for (double x : samples) sum += x;
  s.mean = sum / static_cast<double>(samples.size());
  s.median = percentile(samples, 0.5);
  s.p90 = percentile(samples, 0.9);
  s.p99 = percentile(samples, 0.99);
  return s;
}

std::string placement_json(const Placement& pl) {
  std::string s = "{\"summary\": " + json_str(pl.summary()) + ", \"providers\": [";
  for (size_t i = 0; i < pl.providers.size(); ++i)
    s += std::string(i ? ", " : "") + "{\"name\": " + json_str(pl.providers[i].provider) +
         ", \"nodes\": " + std::to_string(pl.providers[i].nodes) +
         ", \"flops_share\": " + num(pl.providers[i].flops_share) + "}";
  return s + "], \"total_nodes\": " + std::to_string(pl.total_nodes) +
         ", \"fallbacks\": " + std::to_string(pl.fallbacks.size()) +
         ", \"device_copies\": " + std::to_string(pl.device_copies) +
         (pl.capture.empty() ? "" : ", \"graph_capture\": " + json_str(pl.capture)) + "}";
}

Progress::Progress(Clock::time_point start) : start_(start), tty_(isatty(2) != 0) {}

void Progress::update(const std::string& text) {
  const auto now = Clock::now();
  if (!tty_ || ms_between(start_, now) < 2000 || ms_between(last_, now) < 200) return;
  last_ = now;
  std::fprintf(stderr, "\r\033[Kbench: %s", text.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
  shown_ = false;
}

}  // namespace polyinfer::cli
