// Devices other than the host register how to allocate on them and how to copy to and from host
// memory; Tensor::to() and the executor's border copies go through here.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "polyinfer/tensor.h"

namespace polyinfer {

struct DeviceBackend {
  std::shared_ptr<Allocator> allocator;
  // Copies `bytes` bytes between host memory and memory of this device.
  void (*to_device)(const void* host_src, void* device_dst, size_t bytes) = nullptr;
  void (*to_host)(const void* device_src, void* host_dst, size_t bytes) = nullptr;
  // Copies `bytes` bytes within this device's memory (Tensor::clone); without it the copy goes
  // through the host.
  void (*on_device)(const void* device_src, void* device_dst, size_t bytes) = nullptr;
};

// Registers (or replaces) the backend of `device`. The host is registered from the start.
void register_device(Device device, DeviceBackend backend);
// Unregisters `device`, first calling every release hook (below) for it.
void unregister_device(Device device);
// Caches that keep tensors on devices for the whole process (polyinfer::ops keeps sessions)
// register a hook that drops what they hold on a device; unregister_device calls it while the
// device's memory can still be freed. A provider unregisters its device when it shuts the device
// down (Vulkan: at exit, before the driver's own exit handlers), so a tensor held past that
// point cannot keep the device alive into the driver's teardown.
void add_device_release_hook(void (*hook)(Device device));
// A provider that registers its devices only when it starts (cuda: when the plugin is loaded and
// opens the GPU; vulkan: when its context opens device N) names, per device kind, the function
// that starts device `index` of that kind; it returns "" when the device is now registered, else
// why it cannot be. device_backend() calls it for an unregistered device of that kind, so
// Tensor::to(vulkan:1) works before any session has probed vulkan.
void register_device_starter(DeviceKind kind, std::string (*start)(int index));

// The backend of `device`; throws ProviderUnavailable when no provider registered it (with the
// starter's reason when there is one).
const DeviceBackend& device_backend(Device device);

}  // namespace polyinfer
