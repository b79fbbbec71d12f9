// `polyinfer monitor`: CPU utilization per core, frequency, temperature and memory, and per GPU
// utilization, memory, temperature and power, sampled every --interval ms (hw/telemetry.h).
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/monitor.h"
#include "hw/telemetry.h"

namespace polyinfer::cli {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_sigint(int) { g_stop = true; }

double mb(int64_t bytes) { return bytes < 0 ? -1 : static_cast<double>(bytes) / (1 << 20); }

std::string text_line(const hw::Sample& s) {
  char buf[160];
  std::string line;
  std::snprintf(buf, sizeof buf, "%8.1f s  cpu %5.1f%% [", s.t_ms / 1000, s.cpu_util_pct);
  line += buf;
  for (size_t i = 0; i < s.core_util_pct.size(); ++i) {
    if (s.core_util_pct[i] < 0) std::snprintf(buf, sizeof buf, "%s-", i ? " " : "");
    else
      std::snprintf(buf, sizeof buf, "%s%.0f", i ? " " : "", s.core_util_pct[i]);
    line += buf;
  }
  line += "]";
  if (!s.core_mhz.empty()) {
    double sum = 0;
    for (int64_t m : s.core_mhz) sum += static_cast<double>(m);
    std::snprintf(buf, sizeof buf, "  %.0f MHz", sum / static_cast<double>(s.core_mhz.size()));
    line += buf;
  }
  if (s.temperature_c >= 0) std::snprintf(buf, sizeof buf, "  %.0f C", s.temperature_c);
  else
    std::snprintf(buf, sizeof buf, "  temp n/a");
  line += buf;
  std::snprintf(buf, sizeof buf, "  mem %.0f/%.0f MiB", mb(s.memory_used_bytes),
                mb(s.memory_total_bytes));
  line += buf;
  for (const auto& g : s.gpus) {
    std::snprintf(buf, sizeof buf, "  | gpu%d %d%% %.0f/%.0f MiB %d C %.0f W", g.index,
                  g.utilization_pct, mb(g.memory_used_bytes), mb(g.memory_total_bytes),
                  g.temperature_c, g.power_w);
    line += buf;
  }
  return line;
}

std::string json_line(const hw::Sample& s) {
  JsonWriter j;
  j.begin_object()
      .key("t_ms")
      .value(s.t_ms)
      .key("cpu_util_pct")
      .value_or_null(s.cpu_util_pct)
      .key("core_util_pct")
      .begin_array();
  for (double u : s.core_util_pct) j.value_or_null(u);
  j.end_array().key("core_mhz").begin_array();
  for (int64_t m : s.core_mhz) j.value(m);
  j.end_array()
      .key("temperature_c")
      .value_or_null(s.temperature_c)
      .key("memory_used_mb")
      .value_or_null(mb(s.memory_used_bytes))
      .key("memory_total_mb")
      .value_or_null(mb(s.memory_total_bytes))
      .key("gpus")
      .begin_array();
  for (const auto& g : s.gpus)
    j.begin_object()
        .key("index")
        .value(g.index)
        .key("name")
        .value(g.name)
        .key("utilization_pct")
        .value_or_null(g.utilization_pct)
        .key("memory_used_mb")
        .value_or_null(mb(g.memory_used_bytes))
        .key("memory_total_mb")
        .value_or_null(mb(g.memory_total_bytes))
        .key("temperature_c")
        .value_or_null(g.temperature_c)
        .key("power_w")
        .value_or_null(g.power_w)
        .end_object();
  j.end_array().end_object();
  return j.str();
}

void range_json(JsonWriter& j, const std::string& key, const hw::Range& r) {
  j.key(key);
  if (r.count == 0) {
    j.null();
    return;
  }
  j.begin_object()
      .key("min")
      .value(r.min)
      .key("avg")
      .value(r.avg)
      .key("max")
      .value(r.max)
      .end_object();
}

std::string range_text(const hw::Range& r, const char* unit) {
  if (r.count == 0) return "n/a";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.0f%s (min %.0f, max %.0f)", r.avg, unit, r.min, r.max);
  return buf;
}

}  // namespace

MonitorThread::MonitorThread(int interval_ms) : interval_ms_(interval_ms) {
  thread_ = std::thread([this] { loop(); });
}

MonitorThread::~MonitorThread() { stop(); }

void MonitorThread::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stop_; })) {
    lock.unlock();
    hw::Sample s = sampler_.sample();
    lock.lock();
    samples_.push_back(std::move(s));
  }
}

std::vector<hw::Sample> MonitorThread::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
    // Runs shorter than one interval still get a reading, covering the whole window.
    if (samples_.empty()) samples_.push_back(sampler_.sample());
  }
  return samples_;
}

std::string monitor_text(const hw::SampleSummary& s, size_t samples) {
  std::string t = "monitor (" + std::to_string(samples) + " samples): cpu " +
                  range_text(s.cpu_util_pct, "%") + "; " + range_text(s.cpu_mhz, " MHz") +
                  "; temperature " + range_text(s.temperature_c, " C") + "; memory used " +
                  range_text(s.memory_used_mb, " MiB");
  for (size_t g = 0; g < s.gpu_util_pct.size(); ++g)
    t += "\n  gpu" + std::to_string(g) + ": " + range_text(s.gpu_util_pct[g], "%") +
         " busy; memory " + range_text(s.gpu_memory_used_mb[g], " MiB") + "; " +
         range_text(s.gpu_temperature_c[g], " C") + "; " + range_text(s.gpu_power_w[g], " W");
  return t;
}

std::string monitor_json(const hw::SampleSummary& s, size_t samples) {
  JsonWriter j;
  j.begin_object().key("samples").value(static_cast<int64_t>(samples));
  range_json(j, "cpu_util_pct", s.cpu_util_pct);
  range_json(j, "cpu_mhz", s.cpu_mhz);
  range_json(j, "temperature_c", s.temperature_c);
  range_json(j, "memory_used_mb", s.memory_used_mb);
  j.key("gpus").begin_array();
  for (size_t g = 0; g < s.gpu_util_pct.size(); ++g) {
    j.begin_object().key("index").value(static_cast<int>(g));
    range_json(j, "utilization_pct", s.gpu_util_pct[g]);
    range_json(j, "memory_used_mb", s.gpu_memory_used_mb[g]);
    range_json(j, "temperature_c", s.gpu_temperature_c[g]);
    range_json(j, "power_w", s.gpu_power_w[g]);
    j.end_object();
  }
  j.end_array().end_object();
  return j.str();
}

int cmd_monitor(const std::vector<std::string>& argv) {
  const Args args = parse_args(argv, {"json", "help"}, {"interval", "count"}, "monitor");
  if (args.flag("help")) {
    std::cout
        << "usage: polyinfer monitor [--interval MS] [--count N] [--json]\n"
           "  samples CPU utilization per core, frequency, temperature and memory, and each\n"
           "  NVIDIA GPU's utilization, memory, temperature and power, every MS milliseconds\n"
           "  (default 1000) for N samples (default: until Ctrl-C); --json prints one object\n"
           "  per line\n";
    return kExitOk;
  }
  const int interval = args.get_int("interval", 1000, 50, 60000);
  const int count = args.get_int("count", 0, 1, 1000000);
  const bool json = args.flag("json");
  g_stop = false;
  auto previous = std::signal(SIGINT, on_sigint);
  hw::Sampler sampler;
  auto next = std::chrono::steady_clock::now();
  for (int n = 0; (count == 0 || n < count) && !g_stop; ++n) {
    // Sleep to the next tick in short steps so Ctrl-C ends the loop at once.
    next += std::chrono::milliseconds(interval);
    while (!g_stop && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(20), next - std::chrono::steady_clock::now()));
    if (g_stop) break;
    const hw::Sample s = sampler.sample();
    std::cout << (json ? json_line(s) : text_line(s)) << std::endl;
  }
  std::signal(SIGINT, previous);
  return kExitOk;
}

}  // namespace polyinfer::cli
