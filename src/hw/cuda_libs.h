// The CUDA libraries polyinfer was built against versus those that load here (the cudart, cublas
// and cudnn fields of NvidiaInfo). Each is opened through the loader and asked its version by
// its ABI-stable C entry point; no CUDA header is needed to build or to run.
//
// A LibraryVersion from here reads:
//   loaded "13.0", path "/usr/local/cuda/lib64/libcudart.so.13"   loads, version known
//   loaded "", path set, error "loaded, but it has no ..."          loads, but tells no version
//   loaded "", path "", error (the loader's text)                    does not load
#pragma once

#include <cstddef>
#include <string>

#include "hw/report.h"

namespace polyinfer::hw {

// The versions this build of polyinfer was compiled against (CMake's CUDAToolkit, cublas_api.h,
// cudnn_version.h); "" each when it was built without them.
struct CudaBuiltVersions {
  std::string cudart;  // "13.0"
  std::string cublas;  // "13.1.0"
  std::string cudnn;   // "9.19.0"
};
const CudaBuiltVersions& cuda_built_versions();

// Each opens its library, preferring the soname of the major version in `built` ("13.0" tries
// libcudart.so.13 first), then the known sonames newest first. `built` is copied into the result.
// name: "CUDA runtime", "cuBLAS", "cuDNN" (the diagnoses key on them).
LibraryVersion probe_cudart(const LibraryLoader& libs, const std::string& built);
LibraryVersion probe_cublas(const LibraryLoader& libs, const std::string& built);
LibraryVersion probe_cudnn(const LibraryLoader& libs, const std::string& built);

// cudaRuntimeGetVersion's number as "MAJOR.MINOR": 12040 → "12.4".
std::string cuda_version_string(int v);
// cudnnGetVersion's number: cuDNN 9 and later encode MAJOR*10000 + MINOR*100 + PATCH (90100 →
// "9.1.0"); cuDNN 8 and earlier MAJOR*1000 + MINOR*100 + PATCH (8902 → "8.9.2").
std::string cudnn_version_string(size_t v);

}  // namespace polyinfer::hw
