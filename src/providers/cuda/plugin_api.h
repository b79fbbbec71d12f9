// The seam between libpolyinfer and the CUDA plugin (libpolyinfer_cuda.so).
//
// libpolyinfer opens the plugin with dlopen (loader.h) and takes one symbol from it,
// kCudaPluginEntry, which returns this table. The plugin links libpolyinfer itself: its kernels
// register into libpolyinfer's kernel registry (PI_REGISTER_KERNEL, from static initializers that
// run when it is loaded), and init() registers Device{CUDA, 0} (allocator and copies) with
// register_device, so the rest of the runtime never sees a CUDA type.
//
// Both sides are built from the same tree by the same compiler, so the table may use C++ types;
// `abi` (and the versioned symbol name) catches a plugin left over from another build.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/provider.h"

namespace polyinfer::cuda {

constexpr int kCudaPluginAbi = 2;
constexpr const char* kCudaPluginEntry = "polyinfer_cuda_plugin_v1";
constexpr const char* kCudaPluginFile = "libpolyinfer_cuda.so";

struct CudaPluginApi {
  int abi = kCudaPluginAbi;
  // Opens CUDA device 0 (stream, cuBLAS handles, allocator) and registers Device{CUDA, 0}. "" when
  // it is usable, otherwise why not and how to fix it ("cudaGetDeviceCount failed:
  // cudaErrorNoDevice (no CUDA-capable device is detected): ..."). Runs its work once; later calls
  // return the first answer.
  std::string (*init)() = nullptr;
  // "NVIDIA H200 (sm_90, 141 GiB), CUDA runtime 13.0, cuBLAS 13.1.0"; only after init() said "".
  std::string (*describe)() = nullptr;
  // Waits for the work queued on the provider's stream.
  void (*synchronize)() = nullptr;
  // Frees the device memory cached for reuse (none is in use by a live tensor); returns the bytes
  // freed.
  size_t (*release_memory)() = nullptr;
  // Starts a CUDA Graph capture of the stream (Provider::begin_capture; plugin/capture.cpp).
  std::unique_ptr<Capture> (*begin_capture)() = nullptr;
};

}  // namespace polyinfer::cuda

// The plugin's one exported symbol (named by kCudaPluginEntry).
extern "C" const polyinfer::cuda::CudaPluginApi* polyinfer_cuda_plugin_v1();
