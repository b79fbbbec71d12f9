// Whether the GPU software stacks on this machine could run a provider. The providers' probe()
// and `doctor` both call these, so the reason a user reads is the same everywhere.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hw/cuda_libs.h"
#include "hw/report.h"

namespace polyinfer::hw {

std::pair<int, int> major_minor(const std::string& version) {
  char* end = nullptr;
  const long major = std::strtol(version.c_str(), &end, 10);
  if (end == version.c_str() || major < 0) return {-1, -1};
  long minor = 0;
  if (*end == '.') {
    const char* p = end + 1;
    minor = std::strtol(p, &end, 10);
    if (end == p) minor = 0;
  }
  return {static_cast<int>(major), static_cast<int>(minor)};
}

namespace {

// The oldest Linux driver that runs a CUDA major version (NVIDIA's CUDA release notes, "CUDA
// Toolkit and Minimum Required Driver Version", minor-version compatibility column).
const char* min_driver_for(int cuda_major) {
  switch (cuda_major) {
    case 13: return "580.65.06";
    case 12: return "525.60.13";
    case 11: return "450.80.02";
    default: return nullptr;
  }
}

std::string driver_hint(int cuda_major) {
  const char* v = min_driver_for(cuda_major);
  return v ? std::string(" (CUDA ") + std::to_string(cuda_major) + " needs driver " + v +
                 " or newer)"
           : std::string();
}

std::string gpu_list(const std::vector<NvidiaGpu>& gpus) {
  std::string s;
  for (size_t i = 0; i < gpus.size(); ++i) s += (i ? ", " : "") + gpus[i].name;
  return s;
}

}  // namespace

StackCheck check_cuda_stack(const NvidiaInfo& nv) {
  StackCheck c;
  const auto built = major_minor(nv.cudart.built);
  if (!nv.libcuda_loaded) {
    if (!nv.pci_devices.empty())
      c.reason = "an NVIDIA GPU is on the PCI bus (" + nv.pci_devices[0] +
                 ") but the driver library libcuda.so.1 does not load (" + nv.libcuda_error +
                 "): install the NVIDIA driver" + driver_hint(built.first) +
                 " and check that nvidia-smi lists the GPU";
    else
      c.reason = "no NVIDIA driver (libcuda.so.1 does not load) and no NVIDIA GPU on the PCI bus";
    return c;
  }
  if (!nv.libcuda_error.empty()) {
    c.reason = "the NVIDIA driver loads but " + nv.libcuda_error +
               ": check that nvidia-smi lists a GPU (in a container: run it with --gpus all)";
    return c;
  }
  if (nv.gpus.empty()) {
    c.reason = "the NVIDIA driver loads but reports no GPU: check nvidia-smi and /dev/nvidia*";
    return c;
  }
  if (built.first > 0 && nv.cuda_driver_api > 0) {
    const int drv_major = nv.cuda_driver_api / 1000;
    if (drv_major < built.first) {
      c.reason = "the NVIDIA driver (" +
                 (nv.driver_version.empty() ? "version unknown" : nv.driver_version) +
                 ") supports CUDA " + cuda_version_string(nv.cuda_driver_api) +
                 ", older than the CUDA " + nv.cudart.built +
                 " polyinfer was built with: upgrade the driver" + driver_hint(built.first);
      return c;
    }
  }
  for (const LibraryVersion* lib : {&nv.cudart, &nv.cublas, &nv.cudnn}) {
    if (lib->built.empty()) continue;
    if (lib->loaded.empty()) {
      c.reason = lib->name + " " + std::to_string(major_minor(lib->built).first) +
                 ".x does not load (" + lib->error +
                 "): install it (the CUDA toolkit's or "
                 "NVIDIA's packages) or put its folder on LD_LIBRARY_PATH";
      return c;
    }
    if (major_minor(lib->loaded).first != major_minor(lib->built).first) {
      c.reason = lib->name + " " + lib->loaded + " loads (" + lib->path +
                 ") but polyinfer was built with " + lib->built + ": install " + lib->name + " " +
                 std::to_string(major_minor(lib->built).first) + ".x";
      return c;
    }
  }
  c.usable = true;
  c.detail = gpu_list(nv.gpus) + ", CUDA driver " + cuda_version_string(nv.cuda_driver_api);
  return c;
}

StackCheck check_vulkan_stack(const VulkanInfo& vk) {
  StackCheck c;
  if (!vk.loader_found) {
    c.reason = "the Vulkan loader libvulkan.so.1 does not load (" + vk.error +
               "): install libvulkan1 and the GPU's Vulkan driver (mesa-vulkan-drivers for "
               "AMD/Intel, the NVIDIA driver for NVIDIA)";
    return c;
  }
  if (!vk.error.empty()) {
    c.reason = vk.error +
               ": no Vulkan driver (ICD) works here; install the GPU's Vulkan driver "
               "(mesa-vulkan-drivers for AMD/Intel, the NVIDIA driver for NVIDIA)";
    return c;
  }
  if (vk.devices.empty()) {
    c.reason =
        "the Vulkan loader finds no device: install the GPU's Vulkan driver "
        "(mesa-vulkan-drivers for AMD/Intel, the NVIDIA driver for NVIDIA)";
    return c;
  }
  c.usable = true;
  bool any_gpu = false;
  for (const auto& d : vk.devices) any_gpu = any_gpu || d.type != "cpu";
  c.detail = vk.devices[0].name + " (" + vk.devices[0].type + ")";
  if (!any_gpu) c.detail += " — a software device on the CPU, not a GPU";
  return c;
}

StackCheck check_opencl_stack(const OpenClInfo& cl) {
  StackCheck c;
  if (!cl.loader_found) {
    c.reason = "the OpenCL ICD loader libOpenCL.so.1 does not load (" + cl.error +
               "): install ocl-icd-libopencl1 and the device's OpenCL driver";
    return c;
  }
  if (cl.devices.empty()) {
    c.reason = (cl.error.empty() ? std::string("no OpenCL device") : cl.error) +
               ": install the device's OpenCL driver (ICD)";
    return c;
  }
  c.usable = true;
  c.detail = cl.devices[0].name + " (" + cl.devices[0].type + ", " + cl.devices[0].platform + ")";
  return c;
}

}  // namespace polyinfer::hw
