// A small wrapper over libnvidia-ml (NVML), loaded through hw::LibraryLoader: what probe_nvidia()
// and the GPU telemetry read per GPU. NVML's C API is ABI-stable, so the few types and function
// signatures used are declared in nvml.cpp; nvml.h is not needed to build or to run.
//
// Every function is optional: a symbol the loaded library lacks leaves its reading unknown (-1
// or ""), never an error. Keep one Nvml alive across samples (a Sampler does) to avoid loading
// and initializing the library each time.
//
//   Nvml nvml(system_loader());
//   if (!nvml.ready()) print(nvml.error());
//   for (int i = 0; i < nvml.device_count(); ++i) print(nvml.read(i).temperature_c);
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hw/system.h"

namespace polyinfer::hw {

// At most this many GPUs are read from NVML or CUDA, whatever count they report.
inline constexpr int kMaxNvidiaGpus = 64;

// What NVML tells about one GPU; -1 / "" where it does not.
struct NvmlReading {
  std::string name;
  std::string pci_bus;  // "0000:17:00.0", the form of /sys/bus/pci/devices names
  int cc_major = -1, cc_minor = -1;
  int64_t memory_total_bytes = -1;
  int64_t memory_free_bytes = -1;
  int64_t memory_used_bytes = -1;
  int temperature_c = -1;
  double power_w = -1;
  double power_limit_w = -1;  // the enforced limit
  int utilization_pct = -1;   // GPU (SM) utilization over NVML's last sample period
  int sm_clock_mhz = -1;
  int sm_clock_max_mhz = -1;
  int mem_clock_mhz = -1;
};

// "0000:17:00.0" (the form of /sys/bus/pci/devices names) from the numbers NVML and CUDA give;
// function 0, the one a GPU has.
std::string pci_bus_id(int64_t domain, int64_t bus, int64_t device);

class Nvml {
 public:
  // Loads libnvidia-ml.so.1 (or libnvidia-ml.so) and calls nvmlInit_v2.
  explicit Nvml(const LibraryLoader& libs);
  // nvmlShutdown when nvmlInit_v2 succeeded, then unloads the library.
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool loaded() const { return lib_ != nullptr; }  // the library opened
  bool ready() const { return ready_; }            // ... and nvmlInit_v2 succeeded
  // Why it is not ready: the loader's text, or "nvmlInit_v2 failed: <reason> (<code>)".
  const std::string& error() const { return error_; }

  // nvmlSystemGetDriverVersion ("580.95.05"); "" when unknown.
  std::string driver_version() const;
  // nvmlDeviceGetCount_v2, at most kMaxNvidiaGpus; 0 when not ready.
  int device_count() const;
  // Everything NVML tells about GPU `index` (NVML's order, 0 ≤ index < device_count()).
  NvmlReading read(int index) const;

 private:
  struct Api;
  std::unique_ptr<Library> lib_;
  std::unique_ptr<Api> api_;
  bool ready_ = false;
  std::string error_;
};

}  // namespace polyinfer::hw
