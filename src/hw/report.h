// What the hardware probes find: the data behind `polyinfer doctor`, `--providers auto`, the
// providers' probe() and (later) `plan --target this`. Plain structs filled by one probe
// function each; a value the machine does not expose stays at its "unknown" default (-1, 0 or "")
// and the report says "not exposed" rather than guessing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hw/system.h"

namespace polyinfer::hw {

// ---- CPU and memory (hw/cpu.cpp): /proc/cpuinfo, /sys/devices/system/{cpu,node}, /proc/meminfo.
struct CpuCache {
  int level = 0;           // 1, 2, 3
  std::string type;        // "Data", "Instruction", "Unified"
  int64_t size_bytes = 0;  // one instance
  int instances = 0;       // how many of it the machine has (distinct shared_cpu_list sets)
};

struct CpuInfo {
  std::string arch;    // "x86_64", "aarch64" (from the build; the probe cannot fake it)
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", "ARM" implementer name...
  std::string model;   // "AMD EPYC 9B45 128-Core Processor"; "" when not exposed
  int sockets = 0;
  int cores = 0;    // physical cores
  int threads = 0;  // logical CPUs online
  // Normalized ISA feature names, sorted: x86 "sse4_2", "avx", "avx2", "fma", "f16c",
  // "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16",
  // "avx512_fp16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16"; ARM "neon" (asimd), "fp16",
  // "dotprod" (asimddp), "i8mm", "bf16", "sve", "sve2", "sme". Only features polyinfer's kernels
  // or `plan` care about are listed.
  std::vector<std::string> features;
  std::vector<CpuCache> caches;
  int numa_nodes = 0;
  std::string governor;    // cpufreq scaling governor of cpu0; "" when cpufreq is not exposed
  int64_t cur_mhz = -1;    // current frequency of cpu0 (cpufreq, else /proc/cpuinfo "cpu MHz")
  int64_t max_mhz = -1;    // cpuinfo_max_freq; -1 when not exposed
  std::string hypervisor;  // "KVM", "VMware", ... when running virtualized; "" on bare metal
  // Thermal throttling events counted by the kernel since boot (x86 thermal_throttle), summed
  // over CPUs; -1 when not exposed.
  int64_t throttle_events = -1;

  bool has(const std::string& feature) const;
};

struct MemoryInfo {
  int64_t total_bytes = -1;
  int64_t available_bytes = -1;
  int64_t swap_total_bytes = -1;
  int64_t swap_free_bytes = -1;
};

CpuInfo probe_cpu(const FileSystem& fs);
MemoryInfo probe_memory(const FileSystem& fs);

// ---- NVIDIA (hw/nvidia.cpp): the PCI bus, libcuda and libnvidia-ml through the loader, and
// the CUDA libraries polyinfer was built against versus those that load here.
struct NvidiaGpu {
  int index = 0;
  std::string name;                  // "NVIDIA H200"
  std::string pci_bus;               // "0000:17:00.0" when known
  int cc_major = -1, cc_minor = -1;  // compute capability
  int64_t memory_total_bytes = -1;
  int64_t memory_free_bytes = -1;
  int temperature_c = -1;
  double power_w = -1;  // current draw
  double power_limit_w = -1;
  int utilization_pct = -1;  // GPU (SM) utilization
  int sm_clock_mhz = -1;
  int sm_clock_max_mhz = -1;
  int mem_clock_mhz = -1;
};

// A library polyinfer was built against and/or tries to load. Versions are "MAJOR.MINOR[.PATCH]".
struct LibraryVersion {
  std::string name;    // "CUDA runtime", "cuBLAS", "cuDNN"
  std::string built;   // the version polyinfer was compiled against; "" when built without
  std::string loaded;  // the version that loads here; "" when it does not load
  std::string path;    // the file that loaded
  std::string error;   // why it did not load (dlerror's text)
};

struct NvidiaInfo {
  std::vector<std::string> pci_devices;  // NVIDIA display/3D controllers on the PCI bus
  std::string kernel_module;             // "nvidia" when /sys/module/nvidia exists, else ""
  bool libcuda_loaded = false;
  std::string libcuda_error;   // why libcuda.so.1 did not load, or cuInit's error
  std::string driver_version;  // "580.95.05" (NVML, else /proc/driver/nvidia/version)
  int cuda_driver_api = 0;     // cuDriverGetVersion: 13000 means CUDA 13.0; 0 unknown
  bool nvml_loaded = false;
  std::string nvml_error;
  std::vector<NvidiaGpu> gpus;
  LibraryVersion cudart, cublas, cudnn;
};

NvidiaInfo probe_nvidia(const FileSystem& fs, const LibraryLoader& libs);

// ---- Vulkan (hw/vulkan.cpp): libvulkan.so.1 through the loader.
struct VulkanHeap {
  int64_t size_bytes = 0;
  bool device_local = false;
};

struct VulkanDevice {
  std::string name;            // "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string type;            // "discrete", "integrated", "virtual", "cpu", "other"
  std::string api_version;     // "1.3.230"
  std::string driver_version;  // decoded per vendor where the encoding is known, else raw
  std::string driver_name;     // VkPhysicalDeviceDriverProperties::driverName when available
  uint32_t vendor_id = 0, device_id = 0;
  std::vector<VulkanHeap> heaps;
  int subgroup_size = -1;
  bool fp16 = false;  // shaderFloat16
  bool int8 = false;  // shaderInt8
};

struct VulkanInfo {
  bool loader_found = false;
  std::string error;  // loader missing, or vkCreateInstance's failure
  std::string instance_version;
  std::vector<VulkanDevice> devices;
};

VulkanInfo probe_vulkan(const LibraryLoader& libs);

// ---- OpenCL (hw/opencl.cpp): libOpenCL.so.1 (the ICD loader) through the loader.
struct OpenClDevice {
  std::string platform;  // "Portable Computing Language"
  std::string name;
  std::string type;     // "cpu", "gpu", "accelerator", "other"
  std::string version;  // "OpenCL 3.0 PoCL ..."
  std::string driver_version;
  int compute_units = -1;
  int64_t global_memory_bytes = -1;
};

struct OpenClInfo {
  bool loader_found = false;
  std::string error;
  std::vector<OpenClDevice> devices;
};

OpenClInfo probe_opencl(const LibraryLoader& libs);

// ---- NPUs and other accelerators (hw/npu.cpp): known device nodes and kernel modules.
struct NpuDevice {
  std::string kind;    // "Rockchip RKNPU", "Intel NPU", "Huawei Ascend", "AMD XDNA", ...
  std::string node;    // the device node found ("/dev/accel/accel0"), "" when none
  std::string module;  // the kernel module that drives it ("rknpu", "intel_vpu", ...);
                       // "" when none is needed (Coral USB) or the driver is unknown
  // The kernel side is ready: /sys/module/MODULE exists, a driver is bound to the device, or the
  // kernel registered the node (built-in drivers). false with a node or PCI id in `evidence` is
  // the "hardware present, kernel module not loaded" case.
  bool module_loaded = false;
  std::string evidence;   // what showed the hardware: node, PCI id, device-tree entry
  std::string toolchain;  // the vendor stack to use until polyinfer has a provider for it
};

std::vector<NpuDevice> probe_npus(const FileSystem& fs);

// ---- Everything, and what it means (hw/diagnose.cpp).
struct SystemReport {
  CpuInfo cpu;
  MemoryInfo memory;
  NvidiaInfo nvidia;
  VulkanInfo vulkan;
  OpenClInfo opencl;
  std::vector<NpuDevice> npus;
};

SystemReport probe_system(const FileSystem& fs = system_files(),
                          const LibraryLoader& libs = system_loader());

struct Diagnosis {
  std::string id;        // stable, e.g. "nvidia-driver-missing" (docs/doctor.md lists them)
  std::string severity;  // "error", "warning", "info"
  std::string cause;
  std::string fix;
};

// Every known problem the report shows, most severe first. `built_providers` are the providers
// compiled into this binary (provider_names()): a usable GPU with no provider for it in this
// build is itself a diagnosis (models would run on the CPU while the GPU sits idle).
std::vector<Diagnosis> diagnose(const SystemReport& report,
                                const std::vector<std::string>& built_providers);

// Whether the machine's software stack could run a provider, and if not, why and what fixes it.
// The GPU providers' probe() return this, and `doctor` prints it: one text, so they cannot
// disagree.
struct StackCheck {
  bool usable = false;
  std::string reason;  // why not (empty when usable), with the fix
  std::string detail;  // what it would run on when usable ("NVIDIA H200, CUDA 13.0")
};
StackCheck check_cuda_stack(const NvidiaInfo& nvidia);
StackCheck check_vulkan_stack(const VulkanInfo& vulkan);
StackCheck check_opencl_stack(const OpenClInfo& opencl);

// {major, minor} of "13.0.2"; {-1, -1} when not a version.
std::pair<int, int> major_minor(const std::string& version);

}  // namespace polyinfer::hw
