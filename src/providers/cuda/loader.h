// Finding and opening the CUDA plugin (plugin_api.h), and the cuda provider's verdict on this
// machine. Part of every libpolyinfer build: it needs no CUDA header, only dlopen.
#pragma once

#include <string>

#include "hw/report.h"
#include "providers/cuda/plugin_api.h"
#include "runtime/provider.h"

namespace polyinfer::cuda {

struct PluginLoad {
  const CudaPluginApi* api = nullptr;  // set when the plugin loaded and its ABI matches
  std::string error;                   // why not, and how to fix it
};

// The plugin's file beside libpolyinfer.so (the folder the running libpolyinfer was loaded from).
std::string default_plugin_path();

// Opens the plugin at `path` through hw::system_loader() (RTLD_NODELETE: it stays mapped for the
// life of the process, as the CUDA libraries it pulls in must) and takes its entry point.
PluginLoad load_plugin(const std::string& path);

// The cuda provider's verdict, one reason in a fixed order so that `providers`, `run` and `doctor`
// agree: first doctor's check of the NVIDIA stack (hw::check_cuda_stack: driver, GPU, CUDA
// libraries; its text unchanged), then whether the plugin loads, then the plugin's own device
// setup (plugin.api->init(), called only when the first two passed).
ProviderStatus cuda_status(const hw::StackCheck& stack, const PluginLoad& plugin);

}  // namespace polyinfer::cuda
