// hw/diagnose.cpp and hw/checks.cpp: every diagnosis fires on the faked system that shows its
// problem, and stays quiet on a healthy one. The probes that fill these reports from fake /proc,
// /sys and libraries have their own tests (hw_*_test.cpp); HwDoctorSystem below goes through
// them end to end.
#include <gtest/gtest.h>

#include <algorithm>

#include "hw/cuda_libs.h"
#include "hw/report.h"

namespace polyinfer::hw {
namespace {

// A healthy machine with an NVIDIA GPU, built with CUDA 13, everything loading.
SystemReport healthy() {
  SystemReport r;
  r.cpu.arch = "x86_64";
  r.cpu.vendor = "AuthenticAMD";
  r.cpu.model = "AMD EPYC 9454";
  r.cpu.sockets = 1;
  r.cpu.cores = 48;
  r.cpu.threads = 96;
  r.cpu.features = {"avx", "avx2", "avx512f", "fma"};
  r.cpu.governor = "performance";
  r.cpu.cur_mhz = 3500;
  r.cpu.max_mhz = 3800;
  r.cpu.throttle_events = 0;
  r.memory = {int64_t{256} << 30, int64_t{200} << 30, 0, 0};
  auto& nv = r.nvidia;
  nv.pci_devices = {"0000:17:00.0"};
  nv.kernel_module = "nvidia";
  nv.libcuda_loaded = true;
  nv.driver_version = "580.95.05";
  nv.cuda_driver_api = 13000;
  nv.nvml_loaded = true;
  NvidiaGpu g;
  g.name = "NVIDIA H200";
  g.cc_major = 9;
  g.cc_minor = 0;
  nv.gpus = {g};
  nv.cudart = {"CUDA runtime", "13.0", "13.0", "/usr/lib/libcudart.so.13", ""};
  nv.cublas = {"cuBLAS", "13.0.0", "13.0.2", "/usr/lib/libcublas.so.13", ""};
  nv.cudnn = {"cuDNN", "9.13.0", "9.13.0", "/usr/lib/libcudnn.so.9", ""};
  r.vulkan.loader_found = true;
  VulkanDevice vd;
  vd.name = "NVIDIA H200";
  vd.type = "discrete";
  r.vulkan.devices = {vd};
  r.opencl.loader_found = true;
  r.opencl.devices = {
      OpenClDevice{"NVIDIA CUDA", "NVIDIA H200", "gpu", "OpenCL 3.0", "580", 132, 1}};
  return r;
}

const std::vector<std::string> kWithGpuProviders = {"cpu", "cpu-ref", "cuda", "vulkan"};
const std::vector<std::string> kCpuOnly = {"cpu", "cpu-ref"};

std::vector<std::string> ids(const SystemReport& r,
                             const std::vector<std::string>& providers = kWithGpuProviders) {
  std::vector<std::string> out;
  for (const auto& d : diagnose(r, providers)) out.push_back(d.id);
  return out;
}

const Diagnosis* find(const std::vector<Diagnosis>& ds, const std::string& id) {
  for (const auto& d : ds)
    if (d.id == id) return &d;
  return nullptr;
}

bool has(const std::vector<std::string>& v, const std::string& id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

TEST(HwDiagnose, HealthyMachineHasNothingToReport) {
  EXPECT_EQ(ids(healthy()), std::vector<std::string>{});
  EXPECT_TRUE(check_cuda_stack(healthy().nvidia).usable)
      << check_cuda_stack(healthy().nvidia).reason;
  EXPECT_TRUE(check_vulkan_stack(healthy().vulkan).usable);
  EXPECT_TRUE(check_opencl_stack(healthy().opencl).usable);
}

TEST(HwDiagnose, GpuWithoutItsDriverLibrary) {
  SystemReport r = healthy();
  r.nvidia.libcuda_loaded = false;
  r.nvidia.libcuda_error =
      "libcuda.so.1: cannot open shared object file: No such file or directory";
  r.nvidia.gpus.clear();
  r.nvidia.cuda_driver_api = 0;
  const auto ds = diagnose(r, kWithGpuProviders);
  const Diagnosis* d = find(ds, "nvidia-driver-missing");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->severity, "error");
  EXPECT_NE(d->cause.find("0000:17:00.0"), std::string::npos);
  EXPECT_NE(d->cause.find("CPU"), std::string::npos);  // says where the work would go
  EXPECT_NE(d->fix.find("nvidia-smi"), std::string::npos);
  EXPECT_EQ(ds.front().severity, "error");  // most severe first
  const StackCheck c = check_cuda_stack(r.nvidia);
  EXPECT_FALSE(c.usable);
  EXPECT_NE(c.reason.find("580.65.06"), std::string::npos) << c.reason;  // the driver CUDA 13 needs
}

TEST(HwDiagnose, NoNvidiaHardwareIsNotAProblem) {
  SystemReport r = healthy();
  r.nvidia = NvidiaInfo{};
  r.nvidia.libcuda_error = "libcuda.so.1: cannot open shared object file";
  EXPECT_FALSE(has(ids(r), "nvidia-driver-missing"));
  EXPECT_FALSE(has(ids(r), "cudnn-missing"));  // no GPU: the CUDA libraries do not matter
  EXPECT_FALSE(check_cuda_stack(r.nvidia).usable);
  EXPECT_NE(check_cuda_stack(r.nvidia).reason.find("no NVIDIA GPU"), std::string::npos);
}

TEST(HwDiagnose, KernelModuleNotLoaded) {
  SystemReport r = healthy();
  r.nvidia.kernel_module = "";
  EXPECT_TRUE(has(ids(r), "nvidia-module-not-loaded"));
}

TEST(HwDiagnose, DriverLoadsButNoDevice) {
  SystemReport r = healthy();
  r.nvidia.gpus.clear();
  r.nvidia.libcuda_error = "cuInit failed: CUDA_ERROR_NO_DEVICE (100)";
  const auto ds = diagnose(r, kWithGpuProviders);
  ASSERT_NE(find(ds, "nvidia-no-device"), nullptr);
  EXPECT_NE(find(ds, "nvidia-no-device")->cause.find("CUDA_ERROR_NO_DEVICE"), std::string::npos);
  EXPECT_FALSE(check_cuda_stack(r.nvidia).usable);
}

TEST(HwDiagnose, DriverTooOldForTheBuiltRuntime) {
  SystemReport r = healthy();
  r.nvidia.cuda_driver_api = 12040;
  r.nvidia.driver_version = "550.54.14";
  const auto ds = diagnose(r, kWithGpuProviders);
  const Diagnosis* d = find(ds, "cuda-driver-too-old");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->cause.find("12.4"), std::string::npos) << d->cause;
  EXPECT_NE(d->cause.find("13.0"), std::string::npos) << d->cause;
  EXPECT_FALSE(check_cuda_stack(r.nvidia).usable);
  // Same major, older minor: it runs (minor-version compatibility), with a warning.
  r.nvidia.cudart.built = "13.1";
  r.nvidia.cuda_driver_api = 13000;
  EXPECT_TRUE(has(ids(r), "cuda-driver-older-minor"));
  EXPECT_FALSE(has(ids(r), "cuda-driver-too-old"));
  EXPECT_TRUE(check_cuda_stack(r.nvidia).usable);
}

TEST(HwDiagnose, CudaLibraryMissingOrOfTheWrongMajor) {
  SystemReport r = healthy();
  r.nvidia.cudnn.loaded = "";
  r.nvidia.cudnn.path = "";
  r.nvidia.cudnn.error = "libcudnn.so.9: cannot open shared object file";
  EXPECT_TRUE(has(ids(r), "cudnn-missing"));
  EXPECT_NE(check_cuda_stack(r.nvidia).reason.find("cuDNN 9.x"), std::string::npos);
  r = healthy();
  r.nvidia.cublas.loaded = "12.8.4";
  EXPECT_TRUE(has(ids(r), "cublas-version-mismatch"));
  EXPECT_FALSE(check_cuda_stack(r.nvidia).usable);
  r = healthy();
  r.nvidia.cudart.loaded = "";
  EXPECT_TRUE(has(ids(r), "cudart-missing"));
  // Built without CUDA: nothing to compare.
  r = healthy();
  r.nvidia.cudart.built = r.nvidia.cublas.built = r.nvidia.cudnn.built = "";
  r.nvidia.cudnn.loaded = "";
  EXPECT_EQ(ids(r), std::vector<std::string>{});
}

TEST(HwDiagnose, UsableGpuWithNoProviderForIt) {
  const auto ds = diagnose(healthy(), kCpuOnly);
  const Diagnosis* d = find(ds, "gpu-idle");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->cause.find("NVIDIA H200"), std::string::npos);
  EXPECT_EQ(
      std::count_if(ds.begin(), ds.end(), [](const Diagnosis& x) { return x.id == "gpu-idle"; }),
      1);
  // A Vulkan-only GPU (AMD, Intel) with no Vulkan provider.
  SystemReport r = healthy();
  r.nvidia = NvidiaInfo{};
  r.vulkan.devices[0].name = "AMD Radeon RX 7900 XTX (RADV NAVI31)";
  const auto ds2 = diagnose(r, kCpuOnly);
  ASSERT_NE(find(ds2, "gpu-idle"), nullptr);
  EXPECT_NE(find(ds2, "gpu-idle")->cause.find("RADV"), std::string::npos);
  EXPECT_FALSE(has(ids(r, {"cpu", "vulkan"}), "gpu-idle"));
}

TEST(HwDiagnose, VulkanOnlyThroughASoftwareDevice) {
  SystemReport r = healthy();
  r.nvidia = NvidiaInfo{};
  r.vulkan.devices = {VulkanDevice{}};
  r.vulkan.devices[0].name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  r.vulkan.devices[0].type = "cpu";
  const auto ds = diagnose(r, kCpuOnly);
  const Diagnosis* d = find(ds, "vulkan-software-only");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->cause.find("not a GPU"), std::string::npos);
  EXPECT_FALSE(has(ids(r, kCpuOnly), "gpu-idle"));
  const StackCheck c = check_vulkan_stack(r.vulkan);
  EXPECT_TRUE(c.usable);  // it runs (and is what CI tests Vulkan on), but says what it is
  EXPECT_NE(c.detail.find("not a GPU"), std::string::npos);
}

TEST(HwDiagnose, VulkanLoaderWithoutDevicesOrMissing) {
  SystemReport r = healthy();
  r.vulkan.devices.clear();
  r.vulkan.error = "vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER (-9)";
  EXPECT_TRUE(has(ids(r), "vulkan-no-device"));
  EXPECT_FALSE(check_vulkan_stack(r.vulkan).usable);
  r.vulkan = VulkanInfo{};
  r.vulkan.error = "libvulkan.so.1: cannot open shared object file";
  EXPECT_TRUE(has(ids(r), "vulkan-loader-missing"));  // a GPU is here, Vulkan cannot reach it
  r.nvidia = NvidiaInfo{};
  EXPECT_FALSE(has(ids(r), "vulkan-loader-missing"));  // no GPU: nothing lost
}

TEST(HwDiagnose, OpenClWithoutADevice) {
  SystemReport r = healthy();
  r.opencl.devices.clear();
  r.opencl.error = "no OpenCL platform (no ICD installed)";
  EXPECT_TRUE(has(ids(r), "opencl-no-device"));
  EXPECT_FALSE(check_opencl_stack(r.opencl).usable);
}

TEST(HwDiagnose, NpuDriverNotLoadedVersusNoProvider) {
  SystemReport r = healthy();
  r.npus = {NpuDevice{"Huawei Ascend", "/dev/davinci0", "drv_davinci", false, "/dev/davinci0",
                      "CANN (ascend-toolkit)"}};
  auto ds = diagnose(r, kWithGpuProviders);
  const Diagnosis* d = find(ds, "npu-module-not-loaded");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->severity, "error");
  EXPECT_NE(d->fix.find("modprobe drv_davinci"), std::string::npos);
  EXPECT_NE(d->fix.find("/etc/modules-load.d/drv_davinci.conf"), std::string::npos);
  r.npus[0].module_loaded = true;
  ds = diagnose(r, kWithGpuProviders);
  EXPECT_EQ(find(ds, "npu-module-not-loaded"), nullptr);
  ASSERT_NE(find(ds, "npu-no-provider"), nullptr);
  EXPECT_NE(find(ds, "npu-no-provider")->fix.find("CANN"), std::string::npos);
}

TEST(HwDiagnose, LowMemory) {
  SystemReport r = healthy();
  r.memory.available_bytes = int64_t{20} << 30;  // 20 of 256 GiB: under 10%
  EXPECT_EQ(find(diagnose(r, kWithGpuProviders), "memory-low")->severity, "warning");
  r.memory.available_bytes = int64_t{100} << 20;
  EXPECT_EQ(find(diagnose(r, kWithGpuProviders), "memory-low")->severity, "error");
  r.memory = {int64_t{8} << 30, int64_t{4} << 30, 0, 0};
  EXPECT_FALSE(has(ids(r), "memory-low"));
  r.memory = MemoryInfo{};  // not exposed: no claim either way
  EXPECT_FALSE(has(ids(r), "memory-low"));
}

TEST(HwDiagnose, FrequencyScalingAndThrottling) {
  SystemReport r = healthy();
  r.cpu.throttle_events = 12;
  EXPECT_TRUE(has(ids(r), "cpu-thermal-throttling"));
  r = healthy();
  r.cpu.cur_mhz = 1200;
  EXPECT_TRUE(has(ids(r), "cpu-frequency-low"));
  r.cpu.governor = "powersave";  // low clock is expected when idle under powersave
  EXPECT_FALSE(has(ids(r), "cpu-frequency-low"));
  EXPECT_TRUE(has(ids(r), "cpu-frequency-scaling"));
  r = healthy();
  r.cpu.governor = "";  // not exposed (a VM): no claim
  r.cpu.cur_mhz = r.cpu.max_mhz = -1;
  EXPECT_EQ(ids(r), std::vector<std::string>{});
}

TEST(HwDiagnose, CpuWithoutAvx2AndVirtualMachines) {
  SystemReport r = healthy();
  r.cpu.features = {"avx"};
  EXPECT_TRUE(has(ids(r), "cpu-no-avx2"));
  r.cpu.arch = "aarch64";
  EXPECT_FALSE(has(ids(r), "cpu-no-avx2"));
  r = healthy();
  r.cpu.hypervisor = "KVM";
  const auto ds = diagnose(r, kWithGpuProviders);
  ASSERT_NE(find(ds, "virtualized"), nullptr);
  EXPECT_NE(find(ds, "virtualized")->cause.find("KVM"), std::string::npos);
}

TEST(HwDiagnose, VersionHelpers) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(12040), "12.4");
  EXPECT_EQ(cuda_version_string(0), "");
  EXPECT_EQ(major_minor("9.13.0"), std::make_pair(9, 13));
  EXPECT_EQ(major_minor("13"), std::make_pair(13, 0));
  EXPECT_EQ(major_minor("x"), std::make_pair(-1, -1));
}

}  // namespace
}  // namespace polyinfer::hw
