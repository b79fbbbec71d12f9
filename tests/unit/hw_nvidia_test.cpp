// hw/nvidia.cpp, hw/nvml.cpp, hw/cuda_libs.cpp: probe_nvidia() and sample_nvidia_gpus() on a
// faked machine (PCI entries under a fake root; libcuda, NVML and the CUDA libraries as tables of
// this file's functions), and once on the real one.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "hw/cuda_libs.h"
#include "hw/nvml.h"
#include "hw/report.h"
#include "hw/telemetry.h"
#include "hw_fake.h"

namespace polyinfer::hw {
namespace {

using testing::FakeLoader;
using testing::FakeRoot;
using testing::sym;

// ---- A fake libcuda: two H200s at 0000:17:00.0 and 0000:65:00.0 (cuda_gpus controls count).
int cuda_gpus = 2;
int cuda_init_result = 0;

int cu_init(unsigned int) { return cuda_init_result; }
int cu_error_name(int rc, const char** name) {
  *name = rc == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
int cu_driver_version(int* v) {
  *v = 13000;
  return 0;
}
int cu_count(int* n) {
  *n = cuda_gpus;
  return 0;
}
int cu_device(int* d, int ordinal) {
  *d = ordinal;
  return 0;
}
int cu_name(char* buf, int len, int) {
  std::snprintf(buf, len, "NVIDIA H200");
  return 0;
}
int cu_attribute(int* v, int attr, int dev) {
  switch (attr) {
    case 75: *v = 9; return 0;
    case 76: *v = 0; return 0;
    case 33: *v = dev == 0 ? 0x17 : 0x65; return 0;
    case 34: *v = 0; return 0;
    case 50: *v = 0; return 0;
  }
  return 1;  // CUDA_ERROR_INVALID_VALUE
}
int cu_total_mem(size_t* bytes, int) {
  *bytes = size_t{143771} << 20;
  return 0;
}

FakeLoader::Symbols libcuda() {
  return {{"cuInit", sym(cu_init)},
          {"cuGetErrorName", sym(cu_error_name)},
          {"cuDriverGetVersion", sym(cu_driver_version)},
          {"cuDeviceGetCount", sym(cu_count)},
          {"cuDeviceGet", sym(cu_device)},
          {"cuDeviceGetName", sym(cu_name)},
          {"cuDeviceGetAttribute", sym(cu_attribute)},
          {"cuDeviceTotalMem_v2", sym(cu_total_mem)}};
}

// ---- A fake NVML. It lists the GPUs in the opposite order to CUDA (0000:65 first), as NVML
// and CUDA may, so a merge by index would pair the wrong readings. Handles are index + 1.
int nvml_gpus = 2;
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned int gpu, memory;
};
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
int nvml_index(void* h) { return static_cast<int>(reinterpret_cast<uintptr_t>(h)) - 1; }

int nvml_init() { return 0; }
int nvml_shutdown() { return 0; }
int nvml_driver(char* buf, unsigned int len) {
  std::snprintf(buf, len, "580.95.05");
  return 0;
}
int nvml_count(unsigned int* n) {
  *n = static_cast<unsigned>(nvml_gpus);
  return 0;
}
int nvml_handle(unsigned int i, void** h) {
  *h = reinterpret_cast<void*>(uintptr_t{i} + 1);
  return 0;
}
int nvml_name(void*, char* buf, unsigned int len) {
  std::snprintf(buf, len, "NVIDIA H200 NVL");
  return 0;
}
int nvml_pci(void* h, NvmlPciInfo* p) {
  std::memset(p, 0, sizeof *p);
  p->bus = nvml_index(h) == 0 ? 0x65 : 0x17;
  std::snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", p->bus);
  return 0;
}
// GPU at 0000:17 (NVML index 1): 1 GiB used, 41 C, 120.5 W of 700 W, 37 %, SM 1980 of 1980 MHz.
int nvml_memory(void* h, NvmlMemory* m) {
  m->total = 150754820096ull;
  m->used = nvml_index(h) == 1 ? (1ull << 30) : (2ull << 30);
  m->free = m->total - m->used;
  return 0;
}
int nvml_temperature(void* h, int sensor, unsigned int* t) {
  if (sensor != 0) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *t = nvml_index(h) == 1 ? 41 : 45;
  return 0;
}
int nvml_power(void* h, unsigned int* mw) {
  *mw = nvml_index(h) == 1 ? 120500 : 90000;
  return 0;
}
int nvml_power_limit(void*, unsigned int* mw) {
  *mw = 700000;
  return 0;
}
int nvml_utilization(void* h, NvmlUtilization* u) {
  u->gpu = nvml_index(h) == 1 ? 37 : 5;
  u->memory = 3;
  return 0;
}
int nvml_clock(void* h, int type, unsigned int* mhz) {
  if (type == 1) *mhz = nvml_index(h) == 1 ? 1980 : 345;
  else if (type == 2)
    *mhz = 3201;
  else
    return 2;
  return 0;
}
int nvml_max_clock(void*, int type, unsigned int* mhz) {
  if (type != 1) return 2;
  *mhz = 1980;
  return 0;
}
int nvml_cc(void*, int* major, int* minor) {
  *major = 9;
  *minor = 0;
  return 0;
}

FakeLoader::Symbols libnvml() {
  return {{"nvmlInit_v2", sym(nvml_init)},
          {"nvmlShutdown", sym(nvml_shutdown)},
          {"nvmlSystemGetDriverVersion", sym(nvml_driver)},
          {"nvmlDeviceGetCount_v2", sym(nvml_count)},
          {"nvmlDeviceGetHandleByIndex_v2", sym(nvml_handle)},
          {"nvmlDeviceGetName", sym(nvml_name)},
          {"nvmlDeviceGetPciInfo_v3", sym(nvml_pci)},
          {"nvmlDeviceGetMemoryInfo", sym(nvml_memory)},
          {"nvmlDeviceGetTemperature", sym(nvml_temperature)},
          {"nvmlDeviceGetPowerUsage", sym(nvml_power)},
          {"nvmlDeviceGetEnforcedPowerLimit", sym(nvml_power_limit)},
          {"nvmlDeviceGetUtilizationRates", sym(nvml_utilization)},
          {"nvmlDeviceGetClockInfo", sym(nvml_clock)},
          {"nvmlDeviceGetMaxClockInfo", sym(nvml_max_clock)},
          {"nvmlDeviceGetCudaComputeCapability", sym(nvml_cc)}};
}

// ---- The CUDA libraries.
int cudart_version(int* v) {
  *v = 12040;
  return 0;
}
int cublas_property(int type, int* v) {
  const int parts[3] = {12, 4, 5};
  if (type < 0 || type > 2) return 7;  // CUBLAS_STATUS_INVALID_VALUE
  *v = parts[type];
  return 0;
}
size_t cudnn9() { return 90100; }
size_t cudnn8() { return 8902; }

// The fakes' state is global: each test starts from the same machine.
class HwNvidia : public ::testing::Test {
 protected:
  void SetUp() override {
    cuda_gpus = 2;
    cuda_init_result = 0;
    nvml_gpus = 2;
  }
};

// An H200 as the kernel shows it: /sys/bus/pci/devices/<bus id>/{vendor,class}, next to a
// non-NVIDIA device and an NVIDIA audio function that must not count as GPUs.
void write_pci(FakeRoot& root) {
  root.write("/sys/bus/pci/devices/0000:17:00.0/vendor", "0x10de\n");
  root.write("/sys/bus/pci/devices/0000:17:00.0/class", "0x030200\n");
  root.write("/sys/bus/pci/devices/0000:17:00.1/vendor", "0x10de\n");
  root.write("/sys/bus/pci/devices/0000:17:00.1/class", "0x040300\n");
  root.write("/sys/bus/pci/devices/0000:00:03.0/vendor", "0x1af4\n");
  root.write("/sys/bus/pci/devices/0000:00:03.0/class", "0x020000\n");
}

TEST_F(HwNvidia, LibcudaAbsentWithTheGpuOnTheBusAndTheModuleLoaded) {
  FakeRoot root;
  write_pci(root);
  root.mkdir("/sys/module/nvidia");
  const FakeLoader libs;
  const NvidiaInfo info = probe_nvidia(root.fs(), libs);
  EXPECT_EQ(info.pci_devices, std::vector<std::string>{"0000:17:00.0"});
  EXPECT_EQ(info.kernel_module, "nvidia");
  EXPECT_FALSE(info.libcuda_loaded);
  EXPECT_NE(info.libcuda_error.find("libcuda.so.1"), std::string::npos) << info.libcuda_error;
  EXPECT_FALSE(info.nvml_loaded);
  EXPECT_NE(info.nvml_error.find("libnvidia-ml.so.1"), std::string::npos) << info.nvml_error;
  EXPECT_TRUE(info.gpus.empty());
  EXPECT_EQ(info.cuda_driver_api, 0);
  EXPECT_EQ(info.driver_version, "");
}

TEST_F(HwNvidia, LibcudaAbsentAndModuleNotLoaded) {
  FakeRoot root;
  write_pci(root);
  const FakeLoader libs;
  const NvidiaInfo info = probe_nvidia(root.fs(), libs);
  EXPECT_EQ(info.pci_devices.size(), 1u);
  EXPECT_EQ(info.kernel_module, "");
  EXPECT_FALSE(info.libcuda_loaded);
  EXPECT_NE(info.libcuda_error.find("libcuda.so.1"), std::string::npos);
}

TEST_F(HwNvidia, NoNvidiaHardware) {
  FakeRoot root;
  root.write("/sys/bus/pci/devices/0000:00:02.0/vendor", "0x8086\n");
  root.write("/sys/bus/pci/devices/0000:00:02.0/class", "0x030000\n");
  const NvidiaInfo info = probe_nvidia(root.fs(), FakeLoader());
  EXPECT_TRUE(info.pci_devices.empty());
  EXPECT_EQ(info.kernel_module, "");
}

TEST_F(HwNvidia, CuInitFailsWithNoDevice) {
  FakeRoot root;
  FakeLoader libs;
  libs.add("libcuda.so.1", libcuda());
  cuda_init_result = 100;
  const NvidiaInfo info = probe_nvidia(root.fs(), libs);
  EXPECT_TRUE(info.libcuda_loaded);
  EXPECT_EQ(info.libcuda_error, "cuInit failed: CUDA_ERROR_NO_DEVICE (100)");
  EXPECT_EQ(info.cuda_driver_api, 13000);  // known without cuInit
  EXPECT_TRUE(info.gpus.empty());
}

TEST_F(HwNvidia, CuInitFailsWithoutErrorNames) {
  FakeRoot root;
  FakeLoader libs;
  auto symbols = libcuda();
  symbols.erase("cuGetErrorName");
  libs.add("libcuda.so.1", symbols);
  cuda_init_result = 999;
  const NvidiaInfo info = probe_nvidia(root.fs(), libs);
  EXPECT_EQ(info.libcuda_error, "cuInit failed: CUresult (999)");
}

TEST_F(HwNvidia, TwoGpusThroughCudaAndNvmlMatchedByPciBus) {
  FakeRoot root;
  write_pci(root);
  root.mkdir("/sys/module/nvidia");
  FakeLoader libs;
  libs.add("libcuda.so.1", libcuda());
  libs.add("libnvidia-ml.so.1", libnvml());
  const NvidiaInfo info = probe_nvidia(root.fs(), libs);
  EXPECT_TRUE(info.libcuda_loaded);
  EXPECT_EQ(info.libcuda_error, "");
  EXPECT_TRUE(info.nvml_loaded);
  EXPECT_EQ(info.nvml_error, "");
  EXPECT_EQ(info.driver_version, "580.95.05");
  EXPECT_EQ(info.cuda_driver_api, 13000);
  ASSERT_EQ(info.gpus.size(), 2u);
  const NvidiaGpu& g = info.gpus[0];
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.name, "NVIDIA H200");  // CUDA's name wins over NVML's
  EXPECT_EQ(g.pci_bus, "0000:17:00.0");
  EXPECT_EQ(g.cc_major, 9);
  EXPECT_EQ(g.cc_minor, 0);
  // CUDA device 0 is NVML device 1 (same bus): its readings, not NVML device 0's.
  EXPECT_EQ(g.memory_total_bytes, 150754820096);
  EXPECT_EQ(g.memory_free_bytes, 150754820096 - (int64_t{1} << 30));
  EXPECT_EQ(g.temperature_c, 41);
  EXPECT_DOUBLE_EQ(g.power_w, 120.5);
  EXPECT_DOUBLE_EQ(g.power_limit_w, 700.0);
  EXPECT_EQ(g.utilization_pct, 37);
  EXPECT_EQ(g.sm_clock_mhz, 1980);
  EXPECT_EQ(g.sm_clock_max_mhz, 1980);
  EXPECT_EQ(g.mem_clock_mhz, 3201);
  EXPECT_EQ(info.gpus[1].index, 1);
  EXPECT_EQ(info.gpus[1].pci_bus, "0000:65:00.0");
  EXPECT_EQ(info.gpus[1].temperature_c, 45);
  EXPECT_EQ(info.gpus[1].utilization_pct, 5);
}

TEST_F(HwNvidia, WithoutBusIdsNvmlMatchesByIndexOnlyWhenTheCountsAgree) {
  FakeRoot root;
  FakeLoader libs;
  libs.add("libcuda.so.1", libcuda());
  auto symbols = libnvml();
  symbols.erase("nvmlDeviceGetPciInfo_v3");
  libs.add("libnvidia-ml.so.1", symbols);
  NvidiaInfo info = probe_nvidia(root.fs(), libs);
  ASSERT_EQ(info.gpus.size(), 2u);
  EXPECT_EQ(info.gpus[0].temperature_c, 45);        // NVML index 0, paired by index
  EXPECT_EQ(info.gpus[0].pci_bus, "0000:17:00.0");  // still CUDA's

  nvml_gpus = 1;  // e.g. CUDA_VISIBLE_DEVICES differs: an index would pair the wrong GPUs
  info = probe_nvidia(root.fs(), libs);
  ASSERT_EQ(info.gpus.size(), 2u);
  EXPECT_EQ(info.gpus[0].temperature_c, -1);
  EXPECT_EQ(info.gpus[0].name, "NVIDIA H200");
}

TEST_F(HwNvidia, NvmlOnlyWhenCudaHasNoDevices) {
  FakeRoot root;
  FakeLoader libs;
  libs.add("libnvidia-ml.so.1", libnvml());
  const NvidiaInfo info = probe_nvidia(root.fs(), libs);
  EXPECT_FALSE(info.libcuda_loaded);
  ASSERT_EQ(info.gpus.size(), 2u);
  EXPECT_EQ(info.gpus[0].name, "NVIDIA H200 NVL");
  EXPECT_EQ(info.gpus[0].pci_bus, "0000:65:00.0");
  EXPECT_EQ(info.gpus[0].cc_major, 9);
  EXPECT_EQ(info.gpus[1].index, 1);
  EXPECT_EQ(info.gpus[1].temperature_c, 41);
}

TEST_F(HwNvidia, NvmlMissingASymbolLeavesOnlyThatFieldUnknown) {
  FakeRoot root;
  FakeLoader libs;
  auto symbols = libnvml();
  symbols.erase("nvmlDeviceGetPowerUsage");
  symbols.erase("nvmlDeviceGetMaxClockInfo");
  libs.add("libnvidia-ml.so.1", symbols);
  const NvidiaInfo info = probe_nvidia(root.fs(), libs);
  ASSERT_EQ(info.gpus.size(), 2u);
  EXPECT_EQ(info.gpus[1].power_w, -1);
  EXPECT_EQ(info.gpus[1].sm_clock_max_mhz, -1);
  EXPECT_DOUBLE_EQ(info.gpus[1].power_limit_w, 700.0);
  EXPECT_EQ(info.gpus[1].temperature_c, 41);
  EXPECT_EQ(info.gpus[1].sm_clock_mhz, 1980);
  EXPECT_EQ(info.gpus[1].utilization_pct, 37);
  EXPECT_EQ(info.driver_version, "580.95.05");
}

TEST_F(HwNvidia, NvmlInitFailureIsReported) {
  FakeRoot root;
  FakeLoader libs;
  auto symbols = libnvml();
  symbols["nvmlInit_v2"] = sym(+[]() { return 9; });  // NVML_ERROR_DRIVER_NOT_LOADED
  symbols["nvmlErrorString"] = sym(+[](int) -> const char* { return "Driver Not Loaded"; });
  libs.add("libnvidia-ml.so.1", symbols);
  const NvidiaInfo info = probe_nvidia(root.fs(), libs);
  EXPECT_TRUE(info.nvml_loaded);
  EXPECT_EQ(info.nvml_error, "nvmlInit_v2 failed: Driver Not Loaded (9)");
  EXPECT_TRUE(info.gpus.empty());
  EXPECT_EQ(info.driver_version, "");
}

TEST_F(HwNvidia, DriverVersionFromProcWhenNvmlIsAbsent) {
  FakeRoot root;
  root.write(
      "/proc/driver/nvidia/version",
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 09:55:41 UTC 2025\n"
      "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1) \n");
  EXPECT_EQ(probe_nvidia(root.fs(), FakeLoader()).driver_version, "580.95.05");

  FakeRoot open;  // the open kernel module words it differently
  open.write("/proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build  "
             "(dvs-builder@U16-I3-B03-4-3)  Fri Mar 14 10:41:58 UTC 2025\n");
  EXPECT_EQ(probe_nvidia(open.fs(), FakeLoader()).driver_version, "570.133.20");

  FakeRoot garbage;
  garbage.write("/proc/driver/nvidia/version", "no version here\n");
  EXPECT_EQ(probe_nvidia(garbage.fs(), FakeLoader()).driver_version, "");
}

TEST_F(HwNvidia, CudnnVersionDecoding) {
  EXPECT_EQ(cudnn_version_string(90100), "9.1.0");
  EXPECT_EQ(cudnn_version_string(91900), "9.19.0");
  EXPECT_EQ(cudnn_version_string(8902), "8.9.2");
  EXPECT_EQ(cudnn_version_string(7605), "7.6.5");
  EXPECT_EQ(cudnn_version_string(0), "");
  EXPECT_EQ(cuda_version_string(12040), "12.4");
  EXPECT_EQ(cuda_version_string(13000), "13.0");

  FakeLoader libs;
  libs.add("libcudnn.so.9", {{"cudnnGetVersion", sym(cudnn9)}});
  libs.add("libcudnn.so.8", {{"cudnnGetVersion", sym(cudnn8)}});
  EXPECT_EQ(probe_cudnn(libs, "").loaded, "9.1.0");  // newest soname first
  // Built against 8: its soname is tried first, even with 9 installed.
  const LibraryVersion v8 = probe_cudnn(libs, "8.9.7");
  EXPECT_EQ(v8.name, "cuDNN");
  EXPECT_EQ(v8.built, "8.9.7");
  EXPECT_EQ(v8.loaded, "8.9.2");
  EXPECT_EQ(v8.path, "/fake/libcudnn.so.8");
  EXPECT_EQ(v8.error, "");
}

TEST_F(HwNvidia, CudaLibrariesLoadedVersusBuilt) {
  FakeLoader libs;
  libs.add("libcudart.so.12", {{"cudaRuntimeGetVersion", sym(cudart_version)}});
  libs.add("libcublas.so.12", {{"cublasGetProperty", sym(cublas_property)}});
  const LibraryVersion rt = probe_cudart(libs, "13.0");
  EXPECT_EQ(rt.name, "CUDA runtime");
  EXPECT_EQ(rt.built, "13.0");
  EXPECT_EQ(rt.loaded, "12.4");
  EXPECT_EQ(rt.path, "/fake/libcudart.so.12");
  EXPECT_EQ(rt.error, "");
  const LibraryVersion blas = probe_cublas(libs, "");
  EXPECT_EQ(blas.name, "cuBLAS");
  EXPECT_EQ(blas.built, "");
  EXPECT_EQ(blas.loaded, "12.4.5");

  // Not loadable: the loader's text names the first soname tried (the built major's).
  const LibraryVersion dnn = probe_cudnn(libs, "9.19.0");
  EXPECT_EQ(dnn.loaded, "");
  EXPECT_EQ(dnn.path, "");
  EXPECT_NE(dnn.error.find("libcudnn.so.9"), std::string::npos) << dnn.error;

  // Loads, but without its version function: path known, version not, and why.
  FakeLoader odd;
  odd.add("libcudart.so.13", {});
  const LibraryVersion none = probe_cudart(odd, "");
  EXPECT_EQ(none.loaded, "");
  EXPECT_EQ(none.path, "/fake/libcudart.so.13");
  EXPECT_NE(none.error.find("cudaRuntimeGetVersion"), std::string::npos);

  // probe_nvidia fills all three with the versions this build was made against.
  FakeRoot root;
  const NvidiaInfo info = probe_nvidia(root.fs(), libs);
  EXPECT_EQ(info.cudart.name, "CUDA runtime");
  EXPECT_EQ(info.cudart.built, cuda_built_versions().cudart);
  EXPECT_EQ(info.cudart.loaded, "12.4");
  EXPECT_EQ(info.cublas.built, cuda_built_versions().cublas);
  EXPECT_EQ(info.cudnn.name, "cuDNN");
  EXPECT_EQ(info.cudnn.built, cuda_built_versions().cudnn);
}

TEST_F(HwNvidia, GpuCountIsBounded) {
  FakeRoot root;
  for (int i = 0; i < 70; ++i) {
    char bus[64];
    std::snprintf(bus, sizeof bus, "/sys/bus/pci/devices/0000:%02x:00.0", i + 1);
    root.write(std::string(bus) + "/vendor", "0x10de\n");
    root.write(std::string(bus) + "/class", "0x030000\n");
  }
  FakeLoader libs;
  libs.add("libcuda.so.1", libcuda());
  libs.add("libnvidia-ml.so.1", libnvml());
  cuda_gpus = 1000000;
  nvml_gpus = 1000000;
  const NvidiaInfo info = probe_nvidia(root.fs(), libs);
  EXPECT_EQ(info.gpus.size(), size_t{kMaxNvidiaGpus});
  EXPECT_EQ(info.pci_devices.size(), size_t{kMaxNvidiaGpus});
  EXPECT_EQ(sample_nvidia_gpus(libs).size(), size_t{kMaxNvidiaGpus});
}

TEST_F(HwNvidia, SampleGpusThroughNvml) {
  EXPECT_TRUE(sample_nvidia_gpus(FakeLoader()).empty());
  FakeLoader libs;
  libs.add("libnvidia-ml.so.1", libnvml());
  const auto samples = sample_nvidia_gpus(libs);
  ASSERT_EQ(samples.size(), 2u);
  const GpuSample& s = samples[1];  // NVML's order
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.name, "NVIDIA H200 NVL");
  EXPECT_EQ(s.utilization_pct, 37);
  EXPECT_EQ(s.memory_used_bytes, int64_t{1} << 30);
  EXPECT_EQ(s.memory_total_bytes, 150754820096);
  EXPECT_EQ(s.temperature_c, 41);
  EXPECT_DOUBLE_EQ(s.power_w, 120.5);
  EXPECT_EQ(s.sm_clock_mhz, 1980);
  EXPECT_EQ(samples[0].sm_clock_mhz, 345);
}

// The real machine: whatever it has, the probe finishes and agrees with the loader.
TEST_F(HwNvidia, RealSystemIsConsistent) {
  const NvidiaInfo info = probe_nvidia(system_files(), system_loader());
  std::string error;
  const bool libcuda = system_loader().open({"libcuda.so.1", "libcuda.so"}, &error) != nullptr;
  EXPECT_EQ(info.libcuda_loaded, libcuda);
  if (!info.libcuda_loaded) {
    EXPECT_NE(info.libcuda_error, "");
  }
  EXPECT_LE(info.gpus.size(), size_t{kMaxNvidiaGpus});
  EXPECT_EQ(info.cudart.name, "CUDA runtime");
  EXPECT_EQ(info.cublas.name, "cuBLAS");
  EXPECT_EQ(info.cudnn.name, "cuDNN");
  for (const LibraryVersion* v : {&info.cudart, &info.cublas, &info.cudnn})
    EXPECT_NE(v->loaded.empty(), v->error.empty()) << v->name << ": " << v->error;
  if (!info.nvml_loaded) {
    EXPECT_TRUE(sample_nvidia_gpus(system_loader()).empty());
  }
}

}  // namespace
}  // namespace polyinfer::hw
