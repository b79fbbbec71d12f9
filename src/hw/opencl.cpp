// The OpenCL probe: the ICD loader (libOpenCL.so.1) opened through the LibraryLoader, its
// platforms and each platform's devices. Queries that fail leave that field unknown.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "hw/report.h"

// cl_khr_icd: the ICD loader's answer when no vendor driver (ICD) is installed.
#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

namespace polyinfer::hw {
namespace {

constexpr cl_uint kMaxPlatforms = 64;
constexpr cl_uint kMaxDevices = 64;
constexpr size_t kMaxString = 4096;

using GetPlatformIDs = cl_int(CL_API_CALL*)(cl_uint, cl_platform_id*, cl_uint*);
using GetPlatformInfo = cl_int(CL_API_CALL*)(cl_platform_id, cl_platform_info, size_t, void*,
                                             size_t*);
using GetDeviceIDs = cl_int(CL_API_CALL*)(cl_platform_id, cl_device_type, cl_uint, cl_device_id*,
                                          cl_uint*);
using GetDeviceInfo = cl_int(CL_API_CALL*)(cl_device_id, cl_device_info, size_t, void*, size_t*);

// A string property through the two-call protocol (size, then value), its size bounded; "" when
// the query fails.
template <class Query> std::string info_string(Query query) {
  size_t size = 0;
  if (query(0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  size = std::min(size, kMaxString);
  std::vector<char> buf(size + 1, '\0');
  if (query(size, buf.data(), nullptr) != CL_SUCCESS) return "";
  return std::string(buf.data(), strnlen(buf.data(), size));
}

// A fixed-size property; false when the query fails.
template <class T>
bool device_value(GetDeviceInfo get, cl_device_id d, cl_device_info what, T* out) {
  T v{};
  if (get(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return false;
  *out = v;
  return true;
}

std::string type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

}  // namespace

OpenClInfo probe_opencl(const LibraryLoader& libs) {
  OpenClInfo info;
  std::string why;
  auto lib = libs.open({"libOpenCL.so.1", "libOpenCL.so"}, &why);
  if (!lib) {
    info.error = why;
    return info;
  }
  info.loader_found = true;
  auto platform_ids = lib->fn<GetPlatformIDs>("clGetPlatformIDs");
  auto platform_info = lib->fn<GetPlatformInfo>("clGetPlatformInfo");
  auto device_ids = lib->fn<GetDeviceIDs>("clGetDeviceIDs");
  auto device_info = lib->fn<GetDeviceInfo>("clGetDeviceInfo");
  if (!platform_ids || !platform_info || !device_ids || !device_info) {
    info.error = "the OpenCL loader " + lib->path() + " lacks the OpenCL 1.2 platform/device API";
    return info;
  }

  cl_uint n = 0;
  cl_int r = platform_ids(0, nullptr, &n);
  if (r == CL_PLATFORM_NOT_FOUND_KHR || (r == CL_SUCCESS && n == 0)) {
    info.error = "no OpenCL platform: no OpenCL driver (ICD) is installed";
    return info;
  }
  std::vector<cl_platform_id> platforms;
  if (r == CL_SUCCESS) {
    platforms.resize(std::min(n, kMaxPlatforms));
    n = 0;
    r = platform_ids(static_cast<cl_uint>(platforms.size()), platforms.data(), &n);
    platforms.resize(std::min<size_t>(n, platforms.size()));
  }
  if (r != CL_SUCCESS) {
    info.error = "clGetPlatformIDs failed: " + std::to_string(r);
    return info;
  }

  for (cl_platform_id p : platforms) {
    const std::string platform = info_string([&](size_t size, void* v, size_t* got) {
      return platform_info(p, CL_PLATFORM_NAME, size, v, got);
    });
    cl_uint m = 0;
    // CL_DEVICE_NOT_FOUND (or any failure) here: a platform with no device.
    if (device_ids(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &m) != CL_SUCCESS || m == 0) continue;
    std::vector<cl_device_id> devices(std::min(m, kMaxDevices));
    m = 0;
    if (device_ids(p, CL_DEVICE_TYPE_ALL, static_cast<cl_uint>(devices.size()), devices.data(),
                   &m) != CL_SUCCESS)
      continue;
    devices.resize(std::min<size_t>(m, devices.size()));
    for (cl_device_id d : devices) {
      if (info.devices.size() >= kMaxDevices) break;
      OpenClDevice od;
      od.platform = platform;
      auto text = [&](cl_device_info what) {
        return info_string(
            [&](size_t size, void* v, size_t* got) { return device_info(d, what, size, v, got); });
      };
      od.name = text(CL_DEVICE_NAME);
      od.version = text(CL_DEVICE_VERSION);
      od.driver_version = text(CL_DRIVER_VERSION);
      cl_device_type type = 0;
      od.type = device_value(device_info, d, CL_DEVICE_TYPE, &type) ? type_name(type) : "other";
      cl_uint units = 0;
      if (device_value(device_info, d, CL_DEVICE_MAX_COMPUTE_UNITS, &units) && units <= 1u << 20)
        od.compute_units = static_cast<int>(units);
      cl_ulong mem = 0;
      if (device_value(device_info, d, CL_DEVICE_GLOBAL_MEM_SIZE, &mem) &&
          mem <= static_cast<cl_ulong>(INT64_MAX))
        od.global_memory_bytes = static_cast<int64_t>(mem);
      info.devices.push_back(std::move(od));
    }
  }
  return info;
}

}  // namespace polyinfer::hw
