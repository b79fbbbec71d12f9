// polyinfer/device.h — where a tensor's memory lives.
//
// A Device is a kind plus an index ("cpu", "cuda:0", "vulkan:1"). It is a plain value: cheap to
// copy and compare. Which devices are usable on this machine is the providers' business
// (polyinfer::available_providers() in session.h, and `polyinfer doctor`).
#pragma once

#include <string>

namespace polyinfer {

enum class DeviceKind { CPU, CUDA, Vulkan, Custom, OpenCL };

struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int index = 0;

  static Device cpu() { return {DeviceKind::CPU, 0}; }
  bool is_cpu() const { return kind == DeviceKind::CPU; }
  // "cpu", "cuda:0", "vulkan:0", "opencl:0", "custom:3".
  std::string str() const;
  // Parses str()'s form; "cuda" means "cuda:0". Throws InvalidArgument on anything else.
  static Device parse(const std::string& text);

  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

}  // namespace polyinfer
