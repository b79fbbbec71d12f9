// Live readings for `monitor` and `bench --monitor`, through hw/system.h like every probe.
#include "hw/telemetry.h"

#include "hw/nvml.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>

namespace polyinfer::hw {

namespace {

constexpr size_t kMaxCpus = 4096;

// One /proc/stat line's counters: busy and total jiffies.
struct Ticks {
  uint64_t busy = 0, total = 0;
};

// "cpu" → the aggregate; "cpuN" → per CPU, indexed by N.
struct StatSnapshot {
  Ticks all;
  std::map<int, Ticks> cpus;
  bool ok = false;
};

StatSnapshot read_stat(const FileSystem& fs) {
  StatSnapshot s;
  const auto text = fs.read("/proc/stat");
  if (!text) return s;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t end = text->find('\n', pos);
    if (end == std::string::npos) end = text->size();
    const auto fields = split_ws(text->substr(pos, end - pos));
    pos = end + 1;
    if (fields.size() < 5 || fields[0].compare(0, 3, "cpu") != 0) continue;
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    uint64_t v[8] = {};
    for (size_t i = 1; i < fields.size() && i <= 8; ++i)
      v[i - 1] = std::strtoull(fields[i].c_str(), nullptr, 10);
    Ticks t;
    for (uint64_t x : v) t.total += x;
    t.busy = t.total - v[3] - v[4];
    if (fields[0] == "cpu") {
      s.all = t;
      s.ok = true;
    } else {
      char* e = nullptr;
      const long n = std::strtol(fields[0].c_str() + 3, &e, 10);
      if (e != fields[0].c_str() + 3 && n >= 0 && static_cast<size_t>(n) < kMaxCpus)
        s.cpus[static_cast<int>(n)] = t;
    }
  }
  return s;
}

// -1 when no tick passed (intervals under the kernel's 10 ms accounting): not a measured 0%.
double util(const Ticks& now, const Ticks& before) {
  if (now.total <= before.total) return -1;
  const double busy = static_cast<double>(now.busy - std::min(now.busy, before.busy));
  return std::clamp(100.0 * busy / static_cast<double>(now.total - before.total), 0.0, 100.0);
}

std::vector<int64_t> core_mhz(const FileSystem& fs, size_t cpus) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < cpus; ++i) {
    const auto khz = fs.read_int("/sys/devices/system/cpu/cpu" + std::to_string(i) +
                                 "/cpufreq/scaling_cur_freq");
    if (!khz) break;
    out.push_back(*khz / 1000);
  }
  if (out.size() == cpus && cpus > 0) return out;
  // No cpufreq (virtual machines): the kernel's per-processor "cpu MHz" lines.
  out.clear();
  const auto text = fs.read("/proc/cpuinfo");
  if (!text) return out;
  size_t pos = 0;
  while ((pos = text->find("cpu MHz", pos)) != std::string::npos) {
    const size_t colon = text->find(':', pos);
    if (colon == std::string::npos) break;
    out.push_back(static_cast<int64_t>(std::strtod(text->c_str() + colon + 1, nullptr) + 0.5));
    pos = colon;
    if (out.size() >= kMaxCpus) break;
  }
  return out;
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// Hottest CPU sensor in °C: hwmon drivers of CPU packages first, else thermal zones of CPU type.
double cpu_temperature(const FileSystem& fs) {
  double best = -1;
  for (const auto& h : fs.list("/sys/class/hwmon")) {
    const std::string dir = "/sys/class/hwmon/" + h;
    const auto name = fs.read_line(dir + "/name").value_or("");
    if (name != "coretemp" && name != "k10temp" && name != "zenpower" && name != "cpu_thermal" &&
        name != "soc_thermal")
      continue;
    for (const auto& f : fs.list(dir)) {
      if (!starts_with(f, "temp") || f.size() < 11 || f.compare(f.size() - 6, 6, "_input") != 0)
        continue;
      if (auto v = fs.read_int(dir + "/" + f))
        best = std::max(best, static_cast<double>(*v) / 1000.0);
    }
  }
  if (best >= 0) return best;
  for (const auto& z : fs.list("/sys/class/thermal")) {
    if (!starts_with(z, "thermal_zone")) continue;
    const std::string dir = "/sys/class/thermal/" + z;
    const auto type = fs.read_line(dir + "/type").value_or("");
    if (type != "x86_pkg_temp" && type != "acpitz" && !starts_with(type, "cpu") &&
        !starts_with(type, "soc"))
      continue;
    if (auto v = fs.read_int(dir + "/temp"))
      best = std::max(best, static_cast<double>(*v) / 1000.0);
  }
  return best;
}

int64_t meminfo_kb(const std::string& text, const std::string& key) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    if (text.compare(pos, key.size() + 1, key + ":") == 0)
      return std::strtoll(text.c_str() + pos + key.size() + 1, nullptr, 10);
    pos = end + 1;
  }
  return -1;
}

}  // namespace

struct Sampler::State {
  FileSystem fs;  // a copy (it is only a root path): callers may pass a temporary
  Nvml nvml;      // loaded and initialized once, not per sample
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  StatSnapshot prev;
  State(const FileSystem& f, const LibraryLoader& libs) : fs(f), nvml(libs) {}
};

Sampler::Sampler(const FileSystem& fs, const LibraryLoader& libs)
    : state_(std::make_unique<State>(fs, libs)) {
  state_->prev = read_stat(fs);  // the priming snapshot: the first sample() is a delta too
}

Sampler::~Sampler() = default;

Sample Sampler::sample() {
  State& s = *state_;
  Sample out;
  out.t_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s.start).count();
  const StatSnapshot now = read_stat(s.fs);
  if (now.ok) {
    out.cpu_util_pct = util(now.all, s.prev.all);
    for (const auto& [n, t] : now.cpus) {
      auto it = s.prev.cpus.find(n);
      out.core_util_pct.push_back(it == s.prev.cpus.end() ? -1 : util(t, it->second));
    }
    s.prev = now;
  }
  out.core_mhz = core_mhz(s.fs, now.cpus.size());
  out.temperature_c = cpu_temperature(s.fs);
  if (const auto mem = s.fs.read("/proc/meminfo")) {
    const int64_t total = meminfo_kb(*mem, "MemTotal"), avail = meminfo_kb(*mem, "MemAvailable");
    if (total > 0) out.memory_total_bytes = total * 1024;
    if (total > 0 && avail >= 0) out.memory_used_bytes = (total - avail) * 1024;
  }
  out.gpus = sample_nvidia_gpus(s.nvml);
  return out;
}

namespace {
void add(Range* r, double v) {
  if (v < 0) return;
  if (r->count == 0) r->min = r->max = v, r->avg = 0;
  r->min = std::min(r->min, v);
  r->max = std::max(r->max, v);
  r->avg = (r->avg * r->count + v) / (r->count + 1);
  ++r->count;
}
}  // namespace

SampleSummary summarize(const std::vector<Sample>& samples) {
  SampleSummary s;
  for (const auto& x : samples) {
    add(&s.cpu_util_pct, x.cpu_util_pct);
    if (!x.core_mhz.empty()) {
      double sum = 0;
      for (int64_t m : x.core_mhz) sum += static_cast<double>(m);
      add(&s.cpu_mhz, sum / static_cast<double>(x.core_mhz.size()));
    }
    add(&s.temperature_c, x.temperature_c);
    add(&s.memory_used_mb,
        x.memory_used_bytes < 0 ? -1 : static_cast<double>(x.memory_used_bytes) / (1 << 20));
    for (size_t g = 0; g < x.gpus.size(); ++g) {
      if (s.gpu_util_pct.size() <= g) {
        s.gpu_util_pct.resize(g + 1);
        s.gpu_memory_used_mb.resize(g + 1);
        s.gpu_temperature_c.resize(g + 1);
        s.gpu_power_w.resize(g + 1);
      }
      const GpuSample& gs = x.gpus[g];
      add(&s.gpu_util_pct[g], gs.utilization_pct);
      add(&s.gpu_memory_used_mb[g],
          gs.memory_used_bytes < 0 ? -1 : static_cast<double>(gs.memory_used_bytes) / (1 << 20));
      add(&s.gpu_temperature_c[g], gs.temperature_c);
      add(&s.gpu_power_w[g], gs.power_w);
    }
  }
  return s;
}

}  // namespace polyinfer::hw
