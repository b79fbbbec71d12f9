// Telemetry while something else runs: `bench --monitor` samples in a background thread during
// the timed runs and reports min/avg/max of each reading beside the latency.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hw/telemetry.h"

namespace polyinfer::cli {

class MonitorThread {
 public:
  // Starts sampling every `interval_ms` (the first sample one interval after start).
  explicit MonitorThread(int interval_ms);
  ~MonitorThread();
  // Stops at once (not at the next tick) and returns the samples taken.
  std::vector<hw::Sample> stop();

 private:
  void loop();
  int interval_ms_;
  hw::Sampler sampler_;
  std::vector<hw::Sample> samples_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// "cpu 97% (min 90, max 100); 2600 MHz; temp n/a; memory 812-830 MiB; gpu0 ..." lines.
std::string monitor_text(const hw::SampleSummary& s, size_t samples);
// {"samples": N, "cpu_util_pct": {"min":..,"avg":..,"max":..}, ..., "gpus": [...]}.
std::string monitor_json(const hw::SampleSummary& s, size_t samples);

}  // namespace polyinfer::cli
