// probe_nvidia() and sample_nvidia_gpus(): the PCI bus and kernel module (files), libcuda and
// libnvidia-ml (loader), and the CUDA libraries' versions (hw/cuda_libs.h).
//
// One GPU list from two sources. CUDA's device order is what `cuda:N` means to polyinfer, so
// when libcuda enumerates GPUs the list is CUDA's, and each is completed with the NVML device of
// the same PCI bus id; when either side lacks bus ids, NVML device i completes CUDA device i, but
// only when both count the same GPUs (CUDA_VISIBLE_DEVICES can hide some from CUDA, and then an
// index says nothing). Where both tell: name and compute capability come from CUDA; memory total
// and free from NVML (one consistent reading), else CUDA's total. Without CUDA devices (no
// libcuda, or cuInit failed) the list is NVML's.
#include <algorithm>
#include <mutex>

#include "hw/cuda_libs.h"
#include "hw/nvml.h"
#include "hw/report.h"
#include "hw/telemetry.h"

namespace polyinfer::hw {

namespace {
// libcuda's C ABI (cuda.h): CUresult is an int enum (0 = CUDA_SUCCESS), CUdevice an int.
struct CudaApi {
  int (*init)(unsigned int) = nullptr;
  int (*error_name)(int, const char**) = nullptr;
  int (*driver_version)(int*) = nullptr;
  int (*count)(int*) = nullptr;
  int (*device)(int*, int) = nullptr;
  int (*name)(char*, int, int) = nullptr;
  int (*attribute)(int*, int, int) = nullptr;
  int (*total_mem)(size_t*, int) = nullptr;
};

constexpr int kAttrCcMajor = 75;    // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCcMinor = 76;    // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr int kAttrPciBus = 33;     // CU_DEVICE_ATTRIBUTE_PCI_BUS_ID
constexpr int kAttrPciDevice = 34;  // CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID
constexpr int kAttrPciDomain = 50;  // CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID

// libcuda is never unloaded once cuInit ran: the driver starts threads and keeps state that
// outlive the call, and the CUDA runtime itself never unloads it either. The handles stay
// reachable here (not leaked) for the life of the process.
void keep_loaded(std::unique_ptr<Library> lib) {
  static std::mutex mu;
  static auto* kept = new std::vector<std::unique_ptr<Library>>;
  std::lock_guard<std::mutex> lock(mu);
  kept->push_back(std::move(lib));
}

// NVIDIA display (class 0x0300) and 3D (0x0302) controllers on the PCI bus, by bus id.
std::vector<std::string> nvidia_pci_devices(const FileSystem& fs) {
  std::vector<std::string> out;
  for (const auto& dev : fs.list("/sys/bus/pci/devices")) {
    const std::string dir = "/sys/bus/pci/devices/" + dev;
    const auto vendor = fs.read_int(dir + "/vendor");
    const auto cls = fs.read_int(dir + "/class");
    if (!vendor || *vendor != 0x10de || !cls) continue;
    const int64_t sub = *cls >> 8;
    if (sub != 0x0300 && sub != 0x0302) continue;
    out.push_back(dev);
    if (out.size() >= size_t{kMaxNvidiaGpus}) break;
  }
  return out;
}

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 ..." (the open module
// says "... Open Kernel Module for x86_64  580.95.05  Release Build ..."): the first word on the
// NVRM line made of digits and dots.
std::string proc_driver_version(const FileSystem& fs) {
  const auto text = fs.read("/proc/driver/nvidia/version");
  if (!text) return "";
  const auto start = text->find("NVRM version:");
  if (start == std::string::npos) return "";
  for (const auto& word : split_ws(text->substr(start, text->find('\n', start) - start))) {
    if (word[0] < '0' || word[0] > '9' || word.find('.') == std::string::npos) continue;
    if (word.find_first_not_of("0123456789.") == std::string::npos) return word;
  }
  return "";
}

std::string cuda_error(const CudaApi& api, const char* what, int rc) {
  const char* name = nullptr;
  if (api.error_name && api.error_name(rc, &name) != 0) name = nullptr;
  return std::string(what) + " failed: " + (name ? name : "CUresult") + " (" + std::to_string(rc) +
         ")";
}

// libcuda: loaded or why not, the driver API version, and the GPUs it enumerates.
std::vector<NvidiaGpu> probe_libcuda(const LibraryLoader& libs, NvidiaInfo& info) {
  std::vector<NvidiaGpu> gpus;
  auto lib = libs.open({"libcuda.so.1", "libcuda.so"}, &info.libcuda_error);
  if (!lib) return gpus;
  info.libcuda_loaded = true;
  info.libcuda_error.clear();
  CudaApi api;
  api.init = lib->fn<decltype(api.init)>("cuInit");
  api.error_name = lib->fn<decltype(api.error_name)>("cuGetErrorName");
  api.driver_version = lib->fn<decltype(api.driver_version)>("cuDriverGetVersion");
  api.count = lib->fn<decltype(api.count)>("cuDeviceGetCount");
  api.device = lib->fn<decltype(api.device)>("cuDeviceGet");
  api.name = lib->fn<decltype(api.name)>("cuDeviceGetName");
  api.attribute = lib->fn<decltype(api.attribute)>("cuDeviceGetAttribute");
  api.total_mem = lib->fn<decltype(api.total_mem)>("cuDeviceTotalMem_v2");

  // The driver API version needs no cuInit: it is known even when no GPU is usable.
  if (int v = 0; api.driver_version && api.driver_version(&v) == 0 && v > 0)
    info.cuda_driver_api = v;
  if (!api.init) {
    info.libcuda_error = "libcuda has no cuInit";
    return gpus;
  }
  const int rc = api.init(0);
  if (rc != 0) {
    info.libcuda_error = cuda_error(api, "cuInit", rc);
    keep_loaded(std::move(lib));
    return gpus;
  }
  int count = 0;
  if (!api.count || api.count(&count) != 0) count = 0;
  count = std::clamp(count, 0, kMaxNvidiaGpus);
  for (int i = 0; i < count; ++i) {
    NvidiaGpu g;
    g.index = i;
    int dev = i;
    if (api.device && api.device(&dev, i) != 0) continue;
    if (char name[256] = {}; api.name && api.name(name, sizeof name - 1, dev) == 0)
      g.name = trim(name);
    auto attr = [&](int which) {
      int v = -1;
      return api.attribute && api.attribute(&v, which, dev) == 0 ? v : -1;
    };
    g.cc_major = attr(kAttrCcMajor);
    g.cc_minor = attr(kAttrCcMinor);
    const int domain = attr(kAttrPciDomain), bus = attr(kAttrPciBus), device = attr(kAttrPciDevice);
    if (domain >= 0 && bus >= 0 && device >= 0) g.pci_bus = pci_bus_id(domain, bus, device);
    if (size_t bytes = 0; api.total_mem && api.total_mem(&bytes, dev) == 0)
      g.memory_total_bytes = static_cast<int64_t>(bytes);
    gpus.push_back(std::move(g));
  }
  keep_loaded(std::move(lib));
  return gpus;
}

// NVML's readings onto `g`; CUDA's name and compute capability stay when `g` has them.
void complete(NvidiaGpu& g, const NvmlReading& r) {
  if (g.name.empty()) g.name = r.name;
  if (g.pci_bus.empty()) g.pci_bus = r.pci_bus;
  if (g.cc_major < 0) {
    g.cc_major = r.cc_major;
    g.cc_minor = r.cc_minor;
  }
  if (r.memory_total_bytes >= 0) g.memory_total_bytes = r.memory_total_bytes;
  g.memory_free_bytes = r.memory_free_bytes;
  g.temperature_c = r.temperature_c;
  g.power_w = r.power_w;
  g.power_limit_w = r.power_limit_w;
  g.utilization_pct = r.utilization_pct;
  g.sm_clock_mhz = r.sm_clock_mhz;
  g.sm_clock_max_mhz = r.sm_clock_max_mhz;
  g.mem_clock_mhz = r.mem_clock_mhz;
}

void merge(std::vector<NvidiaGpu>& gpus, const std::vector<NvmlReading>& nvml) {
  if (gpus.empty()) {
    for (size_t i = 0; i < nvml.size(); ++i) {
      NvidiaGpu g;
      g.index = static_cast<int>(i);
      complete(g, nvml[i]);
      gpus.push_back(std::move(g));
    }
    return;
  }
  auto all_have_bus = [](const auto& list) {
    return std::all_of(list.begin(), list.end(), [](const auto& x) { return !x.pci_bus.empty(); });
  };
  if (all_have_bus(gpus) && all_have_bus(nvml)) {
    for (auto& g : gpus)
      for (const auto& r : nvml)
        if (r.pci_bus == g.pci_bus) complete(g, r);
  } else if (gpus.size() == nvml.size()) {
    for (size_t i = 0; i < gpus.size(); ++i) complete(gpus[i], nvml[i]);
  }
}
}  // namespace

NvidiaInfo probe_nvidia(const FileSystem& fs, const LibraryLoader& libs) {
  NvidiaInfo info;
  info.pci_devices = nvidia_pci_devices(fs);
  if (fs.exists("/sys/module/nvidia")) info.kernel_module = "nvidia";

  info.gpus = probe_libcuda(libs, info);
  {
    const Nvml nvml(libs);
    info.nvml_loaded = nvml.loaded();
    info.nvml_error = nvml.error();
    info.driver_version = nvml.driver_version();
    std::vector<NvmlReading> readings;
    for (int i = 0; i < nvml.device_count(); ++i) readings.push_back(nvml.read(i));
    merge(info.gpus, readings);
  }
  if (info.driver_version.empty()) info.driver_version = proc_driver_version(fs);

  const CudaBuiltVersions& built = cuda_built_versions();
  info.cudart = probe_cudart(libs, built.cudart);
  info.cublas = probe_cublas(libs, built.cublas);
  info.cudnn = probe_cudnn(libs, built.cudnn);
  return info;
}

std::vector<GpuSample> sample_nvidia_gpus(const LibraryLoader& libs) {
  const Nvml nvml(libs);
  return sample_nvidia_gpus(nvml);
}

std::vector<GpuSample> sample_nvidia_gpus(const Nvml& nvml) {
  std::vector<GpuSample> out;
  for (int i = 0; i < nvml.device_count(); ++i) {
    const NvmlReading r = nvml.read(i);
    GpuSample s;
    s.index = i;
    s.name = r.name;
    s.utilization_pct = r.utilization_pct;
    s.memory_used_bytes = r.memory_used_bytes;
    s.memory_total_bytes = r.memory_total_bytes;
    s.temperature_c = r.temperature_c;
    s.power_w = r.power_w;
    s.sm_clock_mhz = r.sm_clock_mhz;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace polyinfer::hw
