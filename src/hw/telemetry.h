// Live readings for `polyinfer monitor` and `bench --monitor`: per-core CPU utilization and
// frequency, temperature, memory, and per-GPU utilization, memory, temperature and power. Read
// through hw/system.h like every probe, so a faked system drives the tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/system.h"

namespace polyinfer::hw {

struct GpuSample {
  int index = 0;
  std::string name;
  int utilization_pct = -1;
  int64_t memory_used_bytes = -1;
  int64_t memory_total_bytes = -1;
  int temperature_c = -1;
  double power_w = -1;
  int sm_clock_mhz = -1;
};

struct Sample {
  double t_ms = 0;                    // since the Sampler was made
  std::vector<double> core_util_pct;  // per logical CPU since the previous sample (the
                                      // first: since the Sampler was made); -1 when no
                                      // scheduler tick passed in between
  double cpu_util_pct = -1;           // all CPUs together
  std::vector<int64_t> core_mhz;      // per logical CPU; empty when not exposed
  double temperature_c = -1;          // hottest CPU/package sensor; -1 when none is exposed
  int64_t memory_used_bytes = -1;     // total - available
  int64_t memory_total_bytes = -1;
  std::vector<GpuSample> gpus;
};

class Nvml;

// NVIDIA GPUs through libnvidia-ml (hw/nvidia.cpp); empty when NVML does not load. The loader
// form loads and initializes NVML for this one call; a Sampler keeps one Nvml for all its samples.
std::vector<GpuSample> sample_nvidia_gpus(const LibraryLoader& libs);
std::vector<GpuSample> sample_nvidia_gpus(const Nvml& nvml);

// Takes samples, keeping the previous /proc/stat counters for the utilization deltas and NVML
// loaded between them. The constructor reads the first counters, so sample() always reports a
// delta; `libs` must outlive the Sampler.
class Sampler {
 public:
  explicit Sampler(const FileSystem& fs = system_files(),
                   const LibraryLoader& libs = system_loader());
  ~Sampler();
  Sample sample();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// min / average / max of one reading over a series of samples (a reading of -1 is skipped).
struct Range {
  double min = -1, avg = -1, max = -1;
  int count = 0;
};
struct SampleSummary {
  Range cpu_util_pct, cpu_mhz, temperature_c, memory_used_mb;
  std::vector<Range> gpu_util_pct, gpu_memory_used_mb, gpu_temperature_c, gpu_power_w;
};
SampleSummary summarize(const std::vector<Sample>& samples);

}  // namespace polyinfer::hw
