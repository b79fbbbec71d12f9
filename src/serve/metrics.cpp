#include "serve/metrics.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace polyinfer::serve {
namespace {

// Seconds: 0.5 ms to 10 s, for runs from a tiny classifier's to a detector's at batch size.
const std::vector<double> kSeconds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                      0.1,    0.25,  0.5,    1,     2.5,  5,     10};
// Batch sizes: powers of two.
const std::vector<double> kBatchSizes = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

// A label value with \, " and newlines escaped, as the text format wants.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Resident bytes and CPU seconds of this process (/proc/self), 0 where unreadable.
std::pair<double, double> process_usage() {
  double rss = 0, cpu = 0;
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  if (statm >> pages_total >> pages_resident)
    rss = static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (std::getline(stat, line)) {
    // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
    const size_t close = line.rfind(')');
    if (close != std::string::npos) {
      std::istringstream rest(line.substr(close + 2));
      std::string field;
      double utime = 0, stime = 0;
      for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14) utime = std::stod(field);
        if (i == 15) stime = std::stod(field);
      }
      cpu = (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
  }
  return {rss, cpu};
}

}  // namespace

void Metrics::Histogram::observe(double v, const std::vector<double>& bounds) {
  if (buckets.empty()) buckets.assign(bounds.size(), 0);
  for (size_t i = 0; i < bounds.size(); ++i)
    if (v <= bounds[i]) {
      ++buckets[i];
      break;
    }
  ++count;
  sum += v;
}

Metrics::Series& Metrics::series(const std::string& model, const std::string& version) {
  return series_[{model, version}];
}

void Metrics::request(const std::string& model, const std::string& version, bool ok, int64_t items,
                      double queue_s, double compute_s, double total_s) {
  std::lock_guard<std::mutex> lock(mu_);
  Series& s = series(model, version);
  if (ok) {
    ++s.success;
    s.inferences += static_cast<uint64_t>(items);
    s.queue.observe(queue_s, kSeconds);
    s.compute.observe(compute_s, kSeconds);
  } else {
    ++s.failure;
  }
  s.total.observe(total_s, kSeconds);
}

void Metrics::batch(const std::string& model, const std::string& version, int64_t items) {
  std::lock_guard<std::mutex> lock(mu_);
  series(model, version).batch.observe(static_cast<double>(items), kBatchSizes);
}

void Metrics::watch_pending(std::shared_ptr<const std::atomic<int64_t>> pending) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_ = std::move(pending);
}

void Metrics::in_flight(const std::string& model, const std::string& version, int delta) {
  std::lock_guard<std::mutex> lock(mu_);
  series(model, version).in_flight += delta;
}

std::string Metrics::prometheus() const {
  std::ostringstream out;
  std::lock_guard<std::mutex> lock(mu_);
  const auto labels = [](const std::pair<std::string, std::string>& k) {
    return "model=\"" + escape(k.first) + "\",version=\"" + escape(k.second) + "\"";
  };
  const auto counter = [&](const char* name, const char* help, auto get) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " counter\n";
    for (const auto& [k, s] : series_) out << name << "{" << labels(k) << "} " << get(s) << "\n";
  };
  counter("polyinfer_request_success_total", "Inference requests that succeeded.",
          [](const Series& s) { return s.success; });
  counter("polyinfer_request_failure_total", "Inference requests that failed.",
          [](const Series& s) { return s.failure; });
  counter("polyinfer_inference_total", "Inferences run (a batched request counts each item).",
          [](const Series& s) { return s.inferences; });
  out << "# HELP polyinfer_requests_in_flight Requests running or waiting for their turn.\n"
         "# TYPE polyinfer_requests_in_flight gauge\n";
  for (const auto& [k, s] : series_)
    out << "polyinfer_requests_in_flight{" << labels(k) << "} " << s.in_flight << "\n";
  const auto histogram = [&](const char* name, const char* help, auto get,
                             const std::vector<double>& bounds = kSeconds) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " histogram\n";
    for (const auto& [k, s] : series_) {
      const Histogram& h = get(s);
      uint64_t cumulative = 0;
      for (size_t i = 0; i < bounds.size(); ++i) {
        cumulative += h.buckets.empty() ? 0 : h.buckets[i];
        out << name << "_bucket{" << labels(k) << ",le=\"" << num(bounds[i]) << "\"} " << cumulative
            << "\n";
      }
      out << name << "_bucket{" << labels(k) << ",le=\"+Inf\"} " << h.count << "\n";
      out << name << "_sum{" << labels(k) << "} " << num(h.sum) << "\n";
      out << name << "_count{" << labels(k) << "} " << h.count << "\n";
    }
  };
  histogram(
      "polyinfer_batch_size", "Inferences per run: a dynamic batch's, or one request's.",
      [](const Series& s) -> const Histogram& { return s.batch; }, kBatchSizes);
  histogram("polyinfer_queue_duration_seconds",
            "Time a request waited for its model version's turn or its batch.",
            [](const Series& s) -> const Histogram& { return s.queue; });
  histogram("polyinfer_compute_duration_seconds", "Time a request's run took.",
            [](const Series& s) -> const Histogram& { return s.compute; });
  histogram("polyinfer_request_duration_seconds",
            "Time from a request's receipt to its reply, parsing and checks included.",
            [](const Series& s) -> const Histogram& { return s.total; });
  if (pending_)
    out << "# HELP polyinfer_http_pending_connections Accepted connections waiting for a "
           "thread (--max-pending-connections bounds them).\n"
           "# TYPE polyinfer_http_pending_connections gauge\n"
        << "polyinfer_http_pending_connections " << pending_->load() << "\n";
  const hw::Sample m = sampler_.sample();
  const auto gauge = [&](const char* name, const char* help, double v) {
    if (v < 0) return;  // not exposed by this machine
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " gauge\n"
        << name << " " << num(v) << "\n";
  };
  gauge("polyinfer_cpu_utilization_ratio", "All CPUs' utilization since the previous scrape.",
        m.cpu_util_pct < 0 ? -1 : m.cpu_util_pct / 100);
  gauge("polyinfer_cpu_temperature_celsius", "The hottest CPU sensor.", m.temperature_c);
  gauge("polyinfer_memory_used_bytes", "The machine's memory in use (total - available).",
        static_cast<double>(m.memory_used_bytes));
  gauge("polyinfer_memory_total_bytes", "The machine's memory.",
        static_cast<double>(m.memory_total_bytes));
  const auto gpu_gauge = [&](const char* name, const char* help, auto get) {
    bool header = false;
    for (const auto& g : m.gpus) {
      const double v = get(g);
      if (v < 0) continue;
      if (!header) out << "# HELP " << name << " " << help << "\n# TYPE " << name << " gauge\n";
      header = true;
      out << name << "{gpu=\"" << g.index << "\",name=\"" << escape(g.name) << "\"} " << num(v)
          << "\n";
    }
  };
  gpu_gauge("polyinfer_gpu_utilization_ratio", "GPU utilization (NVML).",
            [](const hw::GpuSample& g) {
              return g.utilization_pct < 0 ? -1.0 : g.utilization_pct / 100.0;
            });
  gpu_gauge("polyinfer_gpu_memory_used_bytes", "GPU memory in use.",
            [](const hw::GpuSample& g) { return static_cast<double>(g.memory_used_bytes); });
  gpu_gauge("polyinfer_gpu_memory_total_bytes", "GPU memory.",
            [](const hw::GpuSample& g) { return static_cast<double>(g.memory_total_bytes); });
  gpu_gauge("polyinfer_gpu_temperature_celsius", "GPU temperature.",
            [](const hw::GpuSample& g) { return static_cast<double>(g.temperature_c); });
  gpu_gauge("polyinfer_gpu_power_watts", "GPU power draw.",
            [](const hw::GpuSample& g) { return g.power_w; });
  const auto [rss, cpu] = process_usage();
  out << "# HELP process_resident_memory_bytes Resident memory of the server process.\n"
         "# TYPE process_resident_memory_bytes gauge\n"
      << "process_resident_memory_bytes " << num(rss) << "\n"
      << "# HELP process_cpu_seconds_total CPU time of the server process.\n"
         "# TYPE process_cpu_seconds_total counter\n"
      << "process_cpu_seconds_total " << num(cpu) << "\n";
  return out.str();
}

}  // namespace polyinfer::serve
