#include "providers/cuda/loader.h"

#include <dlfcn.h>

#include "hw/system.h"

namespace polyinfer::cuda {

std::string default_plugin_path() {
  Dl_info info{};
  // Any function of libpolyinfer names its file; this one will do.
  if (dladdr(reinterpret_cast<void*>(&default_plugin_path), &info) == 0 || !info.dli_fname)
    return kCudaPluginFile;  // the loader's search path, as a last resort
  const std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? std::string(kCudaPluginFile)
                                    : self.substr(0, slash + 1) + kCudaPluginFile;
}

PluginLoad load_plugin(const std::string& path) {
  PluginLoad out;
  std::string why;
  std::unique_ptr<hw::Library> lib = hw::system_loader().open({path}, &why);
  if (!lib) {
    out.error = "the CUDA provider's plugin " + path + " does not load (" + why +
                "): it is built beside libpolyinfer.so when POLYINFER_CUDA is ON; check that "
                "it is there and that `ldd " +
                path + "` finds every library";
    return out;
  }
  using Entry = const CudaPluginApi* (*)();
  const auto entry = lib->fn<Entry>(kCudaPluginEntry);
  const CudaPluginApi* api = entry ? entry() : nullptr;
  if (!api || api->abi != kCudaPluginAbi || !api->init || !api->describe || !api->synchronize ||
      !api->release_memory || !api->begin_capture) {
    out.error = "the CUDA provider's plugin " + path +
                " is from another polyinfer build (no matching " + kCudaPluginEntry +
                "): reinstall polyinfer so that libpolyinfer.so and the plugin match";
    return out;
  }
  // RTLD_NODELETE keeps the plugin mapped after `lib` is gone, so `api` stays valid.
  out.api = api;
  return out;
}

ProviderStatus cuda_status(const hw::StackCheck& stack, const PluginLoad& plugin) {
  if (!stack.usable) return {false, stack.reason};
  if (!plugin.api) return {false, plugin.error};
  std::string why = plugin.api->init();
  if (!why.empty()) return {false, why};
  return {true, ""};
}

}  // namespace polyinfer::cuda
