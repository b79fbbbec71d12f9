// The plugin's entry point (plugin_api.h): the table libpolyinfer takes after dlopen.
#include "core/device_registry.h"
#include "providers/cuda/plugin/capture.h"
#include "providers/cuda/plugin/context.h"
#include "providers/cuda/plugin_api.h"

namespace polyinfer::cuda {
namespace {

void copy_to_device(const void* host_src, void* device_dst, size_t bytes) {
  Context::get().to_device(host_src, device_dst, bytes);
}
void copy_to_host(const void* device_src, void* host_dst, size_t bytes) {
  Context::get().to_host(device_src, host_dst, bytes);
}
// Tensor::clone and the executor's graph-capture copies stay on the GPU.
void copy_on_device(const void* device_src, void* device_dst, size_t bytes) {
  Context::get().on_device(device_src, device_dst, bytes);
}

std::string init() {
  static std::once_flag once;
  std::string why = Context::init();
  if (why.empty())
    std::call_once(once, [] {
      register_device({DeviceKind::CUDA, 0}, {Context::get().allocator(), &copy_to_device,
                                              &copy_to_host, &copy_on_device});
    });
  return why;
}

// Each entry is called only after init() said "" (loader.h).
const CudaPluginApi kApi = [] {
  CudaPluginApi a;
  a.init = &init;
  a.describe = [] { return Context::get().describe(); };
  a.synchronize = [] { Context::get().synchronize(); };
  a.release_memory = [] { return Context::get().allocator()->release(); };
  a.begin_capture = &begin_capture;
  return a;
}();

}  // namespace
}  // namespace polyinfer::cuda

extern "C" __attribute__((visibility("default"))) const polyinfer::cuda::CudaPluginApi*
polyinfer_cuda_plugin_v1() {
  return &polyinfer::cuda::kApi;
}
