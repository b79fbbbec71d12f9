// The OpenCL probe on a faked ICD loader (the four clGet* functions below, serving platforms and
// devices from a table) and on this machine's real one.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "hw/report.h"
#include "hw_fake.h"

namespace polyinfer::hw {
namespace {

using testing::FakeLoader;
using testing::sym;

struct FakeClDevice {
  std::string name, version, driver_version;
  cl_device_type type = CL_DEVICE_TYPE_GPU;
  cl_uint compute_units = 0;
  cl_ulong global_mem = 0;
  std::set<cl_device_info> failing;  // queries that answer CL_INVALID_VALUE
};

struct FakeClPlatform {
  std::string name;
  std::vector<FakeClDevice> devices;
};

struct FakeOpenCl {
  cl_int platform_result = CL_SUCCESS;  // what clGetPlatformIDs answers
  std::vector<FakeClPlatform> platforms;
};
FakeOpenCl* g = nullptr;

// Handles are 1-based indices: platform p, device (p << 16 | d).
cl_platform_id platform_handle(size_t p) { return reinterpret_cast<cl_platform_id>(p + 1); }
FakeClPlatform* platform_of(cl_platform_id h) {
  const auto i = reinterpret_cast<uintptr_t>(h);
  return i >= 1 && i <= g->platforms.size() ? &g->platforms[i - 1] : nullptr;
}
cl_device_id device_handle(size_t p, size_t d) {
  return reinterpret_cast<cl_device_id>(((p + 1) << 16) | (d + 1));
}
FakeClDevice* device_of(cl_device_id h) {
  const auto i = reinterpret_cast<uintptr_t>(h);
  const size_t p = (i >> 16) - 1, d = (i & 0xffff) - 1;
  if (p >= g->platforms.size() || d >= g->platforms[p].devices.size()) return nullptr;
  return &g->platforms[p].devices[d];
}

// The OpenCL two-call protocol for one value of `size` bytes.
cl_int answer(const void* value, size_t size, size_t want, void* out, size_t* got) {
  if (got) *got = size;
  if (!out) return CL_SUCCESS;
  if (want < size) return CL_INVALID_VALUE;
  std::memcpy(out, value, size);
  return CL_SUCCESS;
}
cl_int answer_string(const std::string& s, size_t want, void* out, size_t* got) {
  return answer(s.c_str(), s.size() + 1, want, out, got);
}

CL_API_ENTRY cl_int CL_API_CALL get_platform_ids(cl_uint n, cl_platform_id* out, cl_uint* count) {
  if (g->platform_result != CL_SUCCESS) return g->platform_result;
  const cl_uint total = static_cast<cl_uint>(g->platforms.size());
  if (count) *count = total;
  for (cl_uint i = 0; out && i < std::min(n, total); ++i) out[i] = platform_handle(i);
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL get_platform_info(cl_platform_id h, cl_platform_info what,
                                                  size_t want, void* out, size_t* got) {
  FakeClPlatform* p = platform_of(h);
  if (!p) return CL_INVALID_PLATFORM;
  if (what != CL_PLATFORM_NAME) return CL_INVALID_VALUE;
  return answer_string(p->name, want, out, got);
}

CL_API_ENTRY cl_int CL_API_CALL get_device_ids(cl_platform_id h, cl_device_type type, cl_uint n,
                                               cl_device_id* out, cl_uint* count) {
  FakeClPlatform* p = platform_of(h);
  if (!p) return CL_INVALID_PLATFORM;
  if (type != CL_DEVICE_TYPE_ALL) return CL_INVALID_DEVICE_TYPE;  // the probe asks for all
  if (p->devices.empty()) return CL_DEVICE_NOT_FOUND;
  const cl_uint total = static_cast<cl_uint>(p->devices.size());
  if (count) *count = total;
  const size_t pi = static_cast<size_t>(p - g->platforms.data());
  for (cl_uint i = 0; out && i < std::min(n, total); ++i) out[i] = device_handle(pi, i);
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL get_device_info(cl_device_id h, cl_device_info what, size_t want,
                                                void* out, size_t* got) {
  FakeClDevice* d = device_of(h);
  if (!d) return CL_INVALID_DEVICE;
  if (d->failing.count(what)) return CL_INVALID_VALUE;
  switch (what) {
    case CL_DEVICE_NAME: return answer_string(d->name, want, out, got);
    case CL_DEVICE_VERSION: return answer_string(d->version, want, out, got);
    case CL_DRIVER_VERSION: return answer_string(d->driver_version, want, out, got);
    case CL_DEVICE_TYPE: return answer(&d->type, sizeof d->type, want, out, got);
    case CL_DEVICE_MAX_COMPUTE_UNITS:
      return answer(&d->compute_units, sizeof d->compute_units, want, out, got);
    case CL_DEVICE_GLOBAL_MEM_SIZE:
      return answer(&d->global_mem, sizeof d->global_mem, want, out, got);
    default: return CL_INVALID_VALUE;
  }
}

class HwOpenClFake : public ::testing::Test {
 protected:
  void SetUp() override {
    g = &state;
    loader.add("libOpenCL.so.1", {{"clGetPlatformIDs", sym(get_platform_ids)},
                                  {"clGetPlatformInfo", sym(get_platform_info)},
                                  {"clGetDeviceIDs", sym(get_device_ids)},
                                  {"clGetDeviceInfo", sym(get_device_info)}});
  }
  void TearDown() override { g = nullptr; }
  FakeOpenCl state;
  FakeLoader loader;
};

FakeClPlatform nvidia_platform() {
  return {"NVIDIA CUDA",
          {{"NVIDIA H200",
            "OpenCL 3.0 CUDA",
            "580.95.05",
            CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT,
            132,
            150ull << 30,
            {}}}};
}
FakeClPlatform pocl_platform() {
  return {"Portable Computing Language",
          {{"cpu-haswell-Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz",
            "OpenCL 3.0 PoCL HSTR: cpu-x86_64-pc-linux-gnu-haswell",
            "3.1",
            CL_DEVICE_TYPE_CPU,
            2,
            6ull << 30,
            {}}}};
}

TEST_F(HwOpenClFake, GpuAndCpuPlatforms) {
  state.platforms = {nvidia_platform(), pocl_platform()};
  const OpenClInfo info = probe_opencl(loader);
  EXPECT_TRUE(info.loader_found);
  EXPECT_EQ(info.error, "");
  ASSERT_EQ(info.devices.size(), 2u);
  const OpenClDevice& gpu = info.devices[0];
  EXPECT_EQ(gpu.platform, "NVIDIA CUDA");
  EXPECT_EQ(gpu.name, "NVIDIA H200");
  EXPECT_EQ(gpu.type, "gpu");  // GPU | DEFAULT is still a GPU
  EXPECT_EQ(gpu.version, "OpenCL 3.0 CUDA");
  EXPECT_EQ(gpu.driver_version, "580.95.05");
  EXPECT_EQ(gpu.compute_units, 132);
  EXPECT_EQ(gpu.global_memory_bytes, int64_t{150} << 30);
  const OpenClDevice& cpu = info.devices[1];
  EXPECT_EQ(cpu.platform, "Portable Computing Language");
  EXPECT_EQ(cpu.type, "cpu");
  EXPECT_EQ(cpu.name, "cpu-haswell-Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz");
  EXPECT_EQ(cpu.compute_units, 2);
  EXPECT_EQ(cpu.global_memory_bytes, int64_t{6} << 30);
}

TEST_F(HwOpenClFake, AcceleratorAndOtherTypes) {
  FakeClPlatform p = pocl_platform();
  p.devices[0].type = CL_DEVICE_TYPE_ACCELERATOR;
  p.devices.push_back(p.devices[0]);
  p.devices[1].type = CL_DEVICE_TYPE_CUSTOM;
  state.platforms = {p};
  const OpenClInfo info = probe_opencl(loader);
  ASSERT_EQ(info.devices.size(), 2u);
  EXPECT_EQ(info.devices[0].type, "accelerator");
  EXPECT_EQ(info.devices[1].type, "other");
}

TEST_F(HwOpenClFake, NoIcdInstalled) {
  state.platform_result = -1001;  // CL_PLATFORM_NOT_FOUND_KHR: the loader found no driver
  const OpenClInfo info = probe_opencl(loader);
  EXPECT_TRUE(info.loader_found);
  EXPECT_TRUE(info.devices.empty());
  EXPECT_NE(info.error.find("no OpenCL platform"), std::string::npos) << info.error;
  EXPECT_NE(info.error.find("ICD"), std::string::npos) << info.error;
}

TEST_F(HwOpenClFake, ZeroPlatformsIsLikeNoIcd) {
  const OpenClInfo info = probe_opencl(loader);
  EXPECT_TRUE(info.loader_found);
  EXPECT_TRUE(info.devices.empty());
  EXPECT_NE(info.error.find("no OpenCL platform"), std::string::npos) << info.error;
}

TEST_F(HwOpenClFake, OtherPlatformErrorReported) {
  state.platform_result = CL_OUT_OF_HOST_MEMORY;
  const OpenClInfo info = probe_opencl(loader);
  EXPECT_TRUE(info.loader_found);
  EXPECT_EQ(info.error, "clGetPlatformIDs failed: -6");
}

TEST_F(HwOpenClFake, LoaderAbsent) {
  FakeLoader none;
  const OpenClInfo info = probe_opencl(none);
  EXPECT_FALSE(info.loader_found);
  EXPECT_EQ(info.error,
            "libOpenCL.so.1: cannot open shared object file: No such file or directory");
  EXPECT_TRUE(info.devices.empty());
}

TEST_F(HwOpenClFake, LoaderMissingSymbols) {
  FakeLoader partial;
  partial.add("libOpenCL.so.1", {{"clGetPlatformIDs", sym(get_platform_ids)}});
  const OpenClInfo info = probe_opencl(partial);
  EXPECT_TRUE(info.loader_found);
  EXPECT_FALSE(info.error.empty());
  EXPECT_TRUE(info.devices.empty());
}

TEST_F(HwOpenClFake, FailingQueryLeavesOnlyThatFieldUnknown) {
  FakeClPlatform p = nvidia_platform();
  p.devices[0].failing = {CL_DEVICE_GLOBAL_MEM_SIZE, CL_DRIVER_VERSION};
  state.platforms = {p};
  const OpenClInfo info = probe_opencl(loader);
  EXPECT_EQ(info.error, "");
  ASSERT_EQ(info.devices.size(), 1u);
  EXPECT_EQ(info.devices[0].global_memory_bytes, -1);
  EXPECT_EQ(info.devices[0].driver_version, "");
  EXPECT_EQ(info.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(info.devices[0].compute_units, 132);
}

TEST_F(HwOpenClFake, FailingTypeQueryIsOther) {
  FakeClPlatform p = nvidia_platform();
  p.devices[0].failing = {CL_DEVICE_TYPE};
  state.platforms = {p};
  const OpenClInfo info = probe_opencl(loader);
  ASSERT_EQ(info.devices.size(), 1u);
  EXPECT_EQ(info.devices[0].type, "other");
}

TEST_F(HwOpenClFake, PlatformWithoutDevicesSkipped) {
  state.platforms = {{"Empty", {}}, pocl_platform()};
  const OpenClInfo info = probe_opencl(loader);
  EXPECT_EQ(info.error, "");
  ASSERT_EQ(info.devices.size(), 1u);
  EXPECT_EQ(info.devices[0].platform, "Portable Computing Language");
}

TEST_F(HwOpenClFake, LongStringsAndCountsBounded) {
  FakeClPlatform p = pocl_platform();
  p.devices[0].name = std::string(10000, 'n');
  p.devices.resize(100, p.devices[0]);
  state.platforms.assign(100, p);
  const OpenClInfo info = probe_opencl(loader);
  EXPECT_EQ(info.error, "");
  EXPECT_EQ(info.devices.size(), 64u);
  // OpenCL refuses a buffer smaller than the value, so a name over the bound reads as unknown
  // rather than making the probe allocate what the driver asks for.
  EXPECT_EQ(info.devices[0].name, "");
  EXPECT_EQ(info.devices[0].type, "cpu");
}

// This machine's real ICD loader: whatever it finds, the report must be well formed. What it
// found is printed, so the test log shows the devices CI ran on (PoCL on the project's machines).
TEST(HwOpenCl, RealSystem) {
  const OpenClInfo info = probe_opencl(system_loader());
  std::cout << "[ opencl  ] loader_found=" << info.loader_found << " error='" << info.error
            << "' devices=" << info.devices.size() << "\n";
  for (const auto& d : info.devices)
    std::cout << "[ opencl  ]   " << d.platform << ": " << d.name << " type=" << d.type << " '"
              << d.version << "' driver=" << d.driver_version << " units=" << d.compute_units
              << " memory=" << d.global_memory_bytes << "\n";
  ::testing::Test::RecordProperty("opencl_devices", static_cast<int>(info.devices.size()));
  if (!info.loader_found) {
    EXPECT_FALSE(info.error.empty());
    EXPECT_TRUE(info.devices.empty());
    return;
  }
  EXPECT_LE(info.devices.size(), 64u);
  for (const auto& d : info.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_TRUE(d.type == "cpu" || d.type == "gpu" || d.type == "accelerator" || d.type == "other")
        << d.type;
    EXPECT_LE(d.name.size(), 4096u);
  }
}

}  // namespace
}  // namespace polyinfer::hw
