#include "polyinfer/device.h"

#include <cstdlib>
#include <string>

#include "polyinfer/status.h"

namespace polyinfer {

std::string Device::str() const {
  switch (kind) {
    case DeviceKind::CPU: return "cpu";
    case DeviceKind::CUDA: return "cuda:" + std::to_string(index);
    case DeviceKind::Vulkan: return "vulkan:" + std::to_string(index);
    case DeviceKind::OpenCL: return "opencl:" + std::to_string(index);
    case DeviceKind::Custom: return "custom:" + std::to_string(index);
  }
  return "unknown";
}

Device Device::parse(const std::string& text) {
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  int index = 0;
  if (colon != std::string::npos) {
    const std::string num = text.substr(colon + 1);
    char* end = nullptr;
    const long v = std::strtol(num.c_str(), &end, 10);
    PI_CHECK(!num.empty() && *end == '\0' && v >= 0 && v < 1024, InvalidArgument,
             "bad device index in '", text, "'; write e.g. cuda:0");
    index = static_cast<int>(v);
  }
  if (kind == "cpu") return {DeviceKind::CPU, index};
  if (kind == "cuda") return {DeviceKind::CUDA, index};
  if (kind == "vulkan") return {DeviceKind::Vulkan, index};
  if (kind == "opencl") return {DeviceKind::OpenCL, index};
  if (kind == "custom") return {DeviceKind::Custom, index};
  fail(ErrorCode::InvalidArgument, "unknown device '", text,
       "'; use cpu, cuda:N, vulkan:N or opencl:N");
}

}  // namespace polyinfer
