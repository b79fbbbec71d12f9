// From what the probes found to what it means: each known failure of a deployment (the GPU sits
// idle, driver and runtime disagree, a library is missing, Vulkan is only software, an NPU's
// driver is not loaded, memory is short, the CPU is throttled) becomes a diagnosis with its cause
// and its fix. docs/doctor.md lists every id.
#include <algorithm>
#include <cstdio>
#include <string>

#include "hw/cuda_libs.h"
#include "hw/report.h"

namespace polyinfer::hw {

namespace {

std::string gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

bool built(const std::vector<std::string>& providers, const std::string& name) {
  return std::find(providers.begin(), providers.end(), name) != providers.end();
}

int rank(const std::string& severity) {
  return severity == "error" ? 0 : severity == "warning" ? 1 : 2;
}

void nvidia(const NvidiaInfo& nv, const std::vector<std::string>& providers,
            std::vector<Diagnosis>* out) {
  const std::string where = nv.pci_devices.empty() ? "" : nv.pci_devices[0];
  if (!nv.pci_devices.empty() && !nv.libcuda_loaded)
    out->push_back({"nvidia-driver-missing", "error",
                    "an NVIDIA GPU is on the PCI bus (" + where +
                        ") but the driver library libcuda.so.1 does not load (" + nv.libcuda_error +
                        "); anything meant for it would run on the CPU",
                    "install the NVIDIA driver (Debian: nvidia-driver from non-free, or NVIDIA's "
                    "packages) and check that nvidia-smi lists the GPU"});
  if (!nv.pci_devices.empty() && nv.kernel_module.empty())
    out->push_back({"nvidia-module-not-loaded", "error",
                    "an NVIDIA GPU is on the PCI bus (" + where +
                        ") but the nvidia kernel module is not loaded",
                    "sudo modprobe nvidia; after a kernel update rebuild the module "
                    "(sudo dkms autoinstall) and reboot; if modprobe fails, reinstall the driver"});
  if (nv.libcuda_loaded && (!nv.libcuda_error.empty() || nv.gpus.empty()))
    out->push_back(
        {"nvidia-no-device", "warning",
         "the NVIDIA driver library loads but " +
             (nv.libcuda_error.empty() ? std::string("reports no GPU") : nv.libcuda_error),
         "check nvidia-smi and the /dev/nvidia* nodes; in a container, start it with "
         "--gpus all (NVIDIA Container Toolkit)"});

  const auto want = major_minor(nv.cudart.built);
  if (want.first > 0 && nv.cuda_driver_api > 0 && !nv.gpus.empty()) {
    const int have_major = nv.cuda_driver_api / 1000, have_minor = (nv.cuda_driver_api % 1000) / 10;
    const std::string have = cuda_version_string(nv.cuda_driver_api);
    if (have_major < want.first)
      out->push_back({"cuda-driver-too-old", "error",
                      "the NVIDIA driver " + nv.driver_version + " supports CUDA " + have +
                          ", but polyinfer was built with CUDA " + nv.cudart.built,
                      "upgrade the NVIDIA driver to one for CUDA " + std::to_string(want.first) +
                          " (nvidia-smi shows the CUDA version a driver supports)"});
    else if (have_major == want.first && have_minor < want.second)
      out->push_back(
          {"cuda-driver-older-minor", "warning",
           "the NVIDIA driver supports CUDA " + have + ", older than the CUDA " + nv.cudart.built +
               " polyinfer was built with; it runs through minor-version "
               "compatibility, but kernels that need JIT compilation (PTX) fail",
           "upgrade the NVIDIA driver to one for CUDA " + nv.cudart.built + " or newer"});
  }

  // Missing or mismatched CUDA libraries only matter where there is a GPU to use them.
  const bool gpu_here = !nv.gpus.empty() || !nv.pci_devices.empty();
  for (const LibraryVersion* lib : {&nv.cudart, &nv.cublas, &nv.cudnn}) {
    if (lib->built.empty() || !gpu_here) continue;
    std::string id = lib->name == "CUDA runtime" ? "cudart"
                     : lib->name == "cuBLAS"     ? "cublas"
                                                 : "cudnn";
    const int major = major_minor(lib->built).first;
    if (lib->loaded.empty())
      out->push_back({id + "-missing", "error",
                      lib->name + " " + std::to_string(major) +
                          ".x, which polyinfer was built with, does not load (" + lib->error + ")",
                      "install " + lib->name + " " + std::to_string(major) +
                          ".x (NVIDIA's CUDA packages) or add its folder to LD_LIBRARY_PATH"});
    else if (major_minor(lib->loaded).first != major)
      out->push_back({id + "-version-mismatch", "error",
                      lib->name + " " + lib->loaded + " loads (" + lib->path +
                          "), but polyinfer was built with " + lib->built,
                      "install " + lib->name + " " + std::to_string(major) +
                          ".x, or rebuild polyinfer against " + lib->loaded});
  }

  if (!nv.gpus.empty() && !built(providers, "cuda"))
    out->push_back(
        {"gpu-idle", "warning",
         "an NVIDIA GPU is usable (" + nv.gpus[0].name +
             ") but this polyinfer build has no CUDA provider: models run on the CPU while "
             "the GPU sits idle",
         "use a polyinfer build with the CUDA provider (--providers cuda,cpu); until then "
         "the CPU provider runs everything"});
}

void vulkan(const VulkanInfo& vk, const NvidiaInfo& nv, const std::vector<std::string>& providers,
            std::vector<Diagnosis>* out) {
  if (!vk.loader_found) {
    if (!nv.pci_devices.empty())
      out->push_back({"vulkan-loader-missing", "info",
                      "the Vulkan loader libvulkan.so.1 does not load (" + vk.error + ")",
                      "install libvulkan1 (the NVIDIA driver brings its own Vulkan driver)"});
    return;
  }
  if (!vk.error.empty() || vk.devices.empty()) {
    out->push_back({"vulkan-no-device", "info",
                    "the Vulkan loader is installed but finds no device" +
                        (vk.error.empty() ? std::string() : " (" + vk.error + ")"),
                    "install the GPU's Vulkan driver: mesa-vulkan-drivers for AMD and Intel, the "
                    "NVIDIA driver for NVIDIA"});
    return;
  }
  const VulkanDevice* gpu = nullptr;
  for (const auto& d : vk.devices)
    if (d.type != "cpu" && !gpu) gpu = &d;
  if (!gpu) {
    out->push_back({"vulkan-software-only", "warning",
                    "the only Vulkan device is " + vk.devices[0].name +
                        ", a software implementation running on the CPU, not a GPU: Vulkan work "
                        "placed there is slower than the CPU provider",
                    "install the GPU's Vulkan driver if this machine has a GPU "
                    "(mesa-vulkan-drivers for AMD/Intel, the NVIDIA driver); otherwise use "
                    "--providers cpu"});
  } else if (!built(providers, "vulkan") && nv.gpus.empty()) {
    // An NVIDIA GPU already has its own gpu-idle diagnosis.
    out->push_back(
        {"gpu-idle", "warning",
         "a Vulkan GPU is usable (" + gpu->name +
             ") but this polyinfer build has no Vulkan provider: models run on the CPU "
             "while the GPU sits idle",
         "use a polyinfer build with the Vulkan provider (--providers vulkan,cpu); until "
         "then the CPU provider runs everything"});
  }
}

void opencl(const OpenClInfo& cl, std::vector<Diagnosis>* out) {
  if (cl.loader_found && cl.devices.empty())
    out->push_back({"opencl-no-device", "info",
                    "the OpenCL ICD loader is installed but finds no device" +
                        (cl.error.empty() ? std::string() : " (" + cl.error + ")"),
                    "install the device's OpenCL driver (ICD): pocl-opencl-icd for the CPU, "
                    "mesa-opencl-icd or intel-opencl-icd for GPUs, the NVIDIA driver for NVIDIA"});
}

void npus(const std::vector<NpuDevice>& list, std::vector<Diagnosis>* out) {
  for (const auto& n : list) {
    if (!n.module.empty() && !n.module_loaded)
      out->push_back({"npu-module-not-loaded", "error",
                      n.kind + " found (" + n.evidence + ") but its kernel module " + n.module +
                          " is not loaded: nothing can use it",
                      "sudo modprobe " + n.module + "; to load it at every boot: echo " + n.module +
                          " | sudo tee /etc/modules-load.d/" + n.module +
                          ".conf; if modprobe fails, install the vendor's driver package (" +
                          n.toolchain + ")"});
    else
      out->push_back({"npu-no-provider", "info",
                      n.kind + " found (" + n.evidence + "); polyinfer has no provider for it yet",
                      "run models on it with the vendor's stack: " + n.toolchain});
  }
}

void memory(const MemoryInfo& m, std::vector<Diagnosis>* out) {
  if (m.total_bytes <= 0 || m.available_bytes < 0) return;
  const int64_t avail = m.available_bytes;
  const bool critical = avail < (int64_t{256} << 20);
  if (critical || avail < (int64_t{1} << 30) || avail * 10 < m.total_bytes)
    out->push_back({"memory-low", critical ? "error" : "warning",
                    "only " + gib(avail) + " of " + gib(m.total_bytes) +
                        " memory is available: large models fail to load or swap",
                    "close other programs, or check a model's needs first with `polyinfer plan`"});
}

void cpu(const CpuInfo& c, std::vector<Diagnosis>* out) {
  if (c.arch == "x86_64" && !c.has("avx2"))
    out->push_back({"cpu-no-avx2", "warning",
                    "the CPU (or the hypervisor) does not expose AVX2/FMA: the CPU provider's "
                    "vectorized kernels fall back to their SSE path, several times slower",
                    "on a virtual machine, pass the host CPU model through (e.g. QEMU/KVM "
                    "-cpu host); otherwise use a CPU with AVX2"});
  if (c.throttle_events > 0)
    out->push_back({"cpu-thermal-throttling", "warning",
                    "the kernel counted " + std::to_string(c.throttle_events) +
                        " thermal throttling events since boot: the CPU slowed down to cool",
                    "improve cooling or lower sustained load; benchmark figures taken while "
                    "throttled understate the machine"});
  if (c.cur_mhz > 0 && c.max_mhz > 0 && c.governor == "performance" && c.cur_mhz * 2 < c.max_mhz)
    out->push_back({"cpu-frequency-low", "warning",
                    "the CPU runs at " + std::to_string(c.cur_mhz) + " MHz of its " +
                        std::to_string(c.max_mhz) +
                        " MHz under the performance governor: a sign "
                        "of thermal or power limits",
                    "check cooling and the power/BIOS limits; `polyinfer monitor` shows the "
                    "frequency under load"});
  if (!c.governor.empty() && c.governor != "performance")
    out->push_back({"cpu-frequency-scaling", "info",
                    "the CPU frequency governor is '" + c.governor +
                        "': the clock ramps up only under load, so short runs and the first "
                        "iterations are slower and latency varies",
                    "for stable benchmarks: sudo cpupower frequency-set -g performance"});
  if (!c.hypervisor.empty())
    out->push_back({"virtualized", "info",
                    "running in a virtual machine (" + c.hypervisor +
                        "): frequency, temperature and throttling are hidden from the guest, and "
                        "other guests may share the host's cores",
                    "benchmark on dedicated cores (or bare metal) for figures that hold"});
}

}  // namespace

std::vector<Diagnosis> diagnose(const SystemReport& r, const std::vector<std::string>& providers) {
  std::vector<Diagnosis> out;
  nvidia(r.nvidia, providers, &out);
  vulkan(r.vulkan, r.nvidia, providers, &out);
  opencl(r.opencl, &out);
  npus(r.npus, &out);
  memory(r.memory, &out);
  cpu(r.cpu, &out);
  std::stable_sort(out.begin(), out.end(), [](const Diagnosis& a, const Diagnosis& b) {
    return rank(a.severity) < rank(b.severity);
  });
  return out;
}

SystemReport probe_system(const FileSystem& fs, const LibraryLoader& libs) {
  SystemReport r;
  r.cpu = probe_cpu(fs);
  r.memory = probe_memory(fs);
  r.nvidia = probe_nvidia(fs, libs);
  r.vulkan = probe_vulkan(libs);
  r.opencl = probe_opencl(libs);
  r.npus = probe_npus(fs);
  return r;
}

}  // namespace polyinfer::hw
