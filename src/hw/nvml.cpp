// libnvidia-ml through the loader. The declarations below copy NVML's C ABI (nvml.h): results
// are nvmlReturn_t (an int enum, 0 = NVML_SUCCESS), devices are opaque pointers.
#include "hw/nvml.h"

#include <cstdio>

namespace polyinfer::hw {

namespace {
using NvmlDevice = void*;  // nvmlDevice_t

struct NvmlMemory {  // nvmlMemory_t
  unsigned long long total, free, used;
};
struct NvmlUtilization {  // nvmlUtilization_t
  unsigned int gpu, memory;
};
struct NvmlPciInfo {  // nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr int kClockSm = 1;         // NVML_CLOCK_SM
constexpr int kClockMem = 2;        // NVML_CLOCK_MEM
}  // namespace

std::string pci_bus_id(int64_t domain, int64_t bus, int64_t device) {
  char s[48];
  std::snprintf(s, sizeof s, "%04llx:%02llx:%02llx.0", static_cast<unsigned long long>(domain),
                static_cast<unsigned long long>(bus), static_cast<unsigned long long>(device));
  return s;
}

struct Nvml::Api {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*driver_version)(char*, unsigned int) = nullptr;
  int (*count)(unsigned int*) = nullptr;
  int (*handle)(unsigned int, NvmlDevice*) = nullptr;
  int (*name)(NvmlDevice, char*, unsigned int) = nullptr;
  int (*pci)(NvmlDevice, NvmlPciInfo*) = nullptr;
  int (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  int (*temperature)(NvmlDevice, int, unsigned int*) = nullptr;
  int (*power)(NvmlDevice, unsigned int*) = nullptr;
  int (*power_limit)(NvmlDevice, unsigned int*) = nullptr;
  int (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  int (*clock)(NvmlDevice, int, unsigned int*) = nullptr;
  int (*max_clock)(NvmlDevice, int, unsigned int*) = nullptr;
  int (*cc)(NvmlDevice, int*, int*) = nullptr;
};

Nvml::Nvml(const LibraryLoader& libs) : api_(std::make_unique<Api>()) {
  lib_ = libs.open({"libnvidia-ml.so.1", "libnvidia-ml.so"}, &error_);
  if (!lib_) return;
  Api& a = *api_;
  const Library& l = *lib_;
  a.init = l.fn<decltype(a.init)>("nvmlInit_v2");
  a.shutdown = l.fn<decltype(a.shutdown)>("nvmlShutdown");
  a.error_string = l.fn<decltype(a.error_string)>("nvmlErrorString");
  a.driver_version = l.fn<decltype(a.driver_version)>("nvmlSystemGetDriverVersion");
  a.count = l.fn<decltype(a.count)>("nvmlDeviceGetCount_v2");
  a.handle = l.fn<decltype(a.handle)>("nvmlDeviceGetHandleByIndex_v2");
  a.name = l.fn<decltype(a.name)>("nvmlDeviceGetName");
  a.pci = l.fn<decltype(a.pci)>("nvmlDeviceGetPciInfo_v3");
  a.memory = l.fn<decltype(a.memory)>("nvmlDeviceGetMemoryInfo");
  a.temperature = l.fn<decltype(a.temperature)>("nvmlDeviceGetTemperature");
  a.power = l.fn<decltype(a.power)>("nvmlDeviceGetPowerUsage");
  a.power_limit = l.fn<decltype(a.power_limit)>("nvmlDeviceGetEnforcedPowerLimit");
  a.utilization = l.fn<decltype(a.utilization)>("nvmlDeviceGetUtilizationRates");
  a.clock = l.fn<decltype(a.clock)>("nvmlDeviceGetClockInfo");
  a.max_clock = l.fn<decltype(a.max_clock)>("nvmlDeviceGetMaxClockInfo");
  a.cc = l.fn<decltype(a.cc)>("nvmlDeviceGetCudaComputeCapability");

  if (!a.init) {
    error_ = "libnvidia-ml has no nvmlInit_v2";
    return;
  }
  const int rc = a.init();
  if (rc != 0) {
    const char* why = a.error_string ? a.error_string(rc) : nullptr;
    error_ =
        "nvmlInit_v2 failed: " + std::string(why ? why : "error") + " (" + std::to_string(rc) + ")";
    return;
  }
  ready_ = true;
}

Nvml::~Nvml() {
  if (ready_ && api_->shutdown) api_->shutdown();
}

std::string Nvml::driver_version() const {
  if (!ready_ || !api_->driver_version) return "";
  char buf[96] = {};  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
  if (api_->driver_version(buf, sizeof buf - 1) != 0) return "";
  return trim(buf);
}

int Nvml::device_count() const {
  unsigned int n = 0;
  if (!ready_ || !api_->count || api_->count(&n) != 0) return 0;
  return n > unsigned{kMaxNvidiaGpus} ? kMaxNvidiaGpus : static_cast<int>(n);
}

NvmlReading Nvml::read(int index) const {
  NvmlReading r;
  NvmlDevice dev = nullptr;
  const Api& a = *api_;
  if (!ready_ || index < 0 || !a.handle || a.handle(static_cast<unsigned>(index), &dev) != 0)
    return r;
  unsigned int u = 0;
  if (char name[128] = {}; a.name && a.name(dev, name, sizeof name - 1) == 0) r.name = trim(name);
  if (NvmlPciInfo pci{}; a.pci && a.pci(dev, &pci) == 0) {
    // From the numbers: NVML's own busId string pads the domain to 8 digits.
    r.pci_bus = pci_bus_id(pci.domain, pci.bus, pci.device);
  }
  if (int major = -1, minor = -1; a.cc && a.cc(dev, &major, &minor) == 0) {
    r.cc_major = major;
    r.cc_minor = minor;
  }
  if (NvmlMemory m{}; a.memory && a.memory(dev, &m) == 0) {
    r.memory_total_bytes = static_cast<int64_t>(m.total);
    r.memory_free_bytes = static_cast<int64_t>(m.free);
    r.memory_used_bytes = static_cast<int64_t>(m.used);
  }
  if (a.temperature && a.temperature(dev, kTemperatureGpu, &u) == 0)
    r.temperature_c = static_cast<int>(u);
  if (a.power && a.power(dev, &u) == 0) r.power_w = u / 1000.0;
  if (a.power_limit && a.power_limit(dev, &u) == 0) r.power_limit_w = u / 1000.0;
  if (NvmlUtilization ut{}; a.utilization && a.utilization(dev, &ut) == 0)
    r.utilization_pct = static_cast<int>(ut.gpu);
  if (a.clock && a.clock(dev, kClockSm, &u) == 0) r.sm_clock_mhz = static_cast<int>(u);
  if (a.clock && a.clock(dev, kClockMem, &u) == 0) r.mem_clock_mhz = static_cast<int>(u);
  if (a.max_clock && a.max_clock(dev, kClockSm, &u) == 0) r.sm_clock_max_mhz = static_cast<int>(u);
  return r;
}

}  // namespace polyinfer::hw
