// cudart, cuBLAS and cuDNN: the version built against (compile definitions set by CMakeLists.txt's
// "CUDA versions for doctor" block on this file only) and the version that loads.
#include "hw/cuda_libs.h"

#include <algorithm>
#include <vector>

// Set by CMake when it found a CUDA toolkit; a build without CUDA leaves them empty.
#ifndef POLYINFER_BUILT_CUDART
#define POLYINFER_BUILT_CUDART ""
#endif
#ifndef POLYINFER_BUILT_CUBLAS
#define POLYINFER_BUILT_CUBLAS ""
#endif
#ifndef POLYINFER_BUILT_CUDNN
#define POLYINFER_BUILT_CUDNN ""
#endif

namespace polyinfer::hw {

namespace {
// `prefix`.MAJOR of `built` first (when it has a major), then `known` in order.
std::vector<std::string> sonames(const std::string& prefix, const std::string& built,
                                 std::vector<std::string> known) {
  const std::string major = built.substr(0, built.find('.'));
  if (major.empty() ||
      !std::all_of(major.begin(), major.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return known;
  const std::string first = prefix + "." + major;
  known.erase(std::remove(known.begin(), known.end(), first), known.end());
  known.insert(known.begin(), first);
  return known;
}

LibraryVersion start(const char* name, const std::string& built) {
  LibraryVersion v;
  v.name = name;
  v.built = built;
  return v;
}
}  // namespace

const CudaBuiltVersions& cuda_built_versions() {
  static const CudaBuiltVersions v{POLYINFER_BUILT_CUDART, POLYINFER_BUILT_CUBLAS,
                                   POLYINFER_BUILT_CUDNN};
  return v;
}

std::string cuda_version_string(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string cudnn_version_string(size_t v) {
  if (v == 0) return "";
  const size_t major_unit = v >= 10000 ? 10000 : 1000;
  return std::to_string(v / major_unit) + "." + std::to_string(v % major_unit / 100) + "." +
         std::to_string(v % 100);
}

LibraryVersion probe_cudart(const LibraryLoader& libs, const std::string& built) {
  LibraryVersion out = start("CUDA runtime", built);
  auto lib = libs.open(
      sonames("libcudart.so", built, {"libcudart.so.13", "libcudart.so.12", "libcudart.so"}),
      &out.error);
  if (!lib) return out;
  out.error.clear();
  out.path = lib->path();
  // cudaRuntimeGetVersion only reports the number: it creates no context and needs no GPU.
  auto get = lib->fn<int (*)(int*)>("cudaRuntimeGetVersion");
  int v = 0;
  if (!get) out.error = "loaded, but it has no cudaRuntimeGetVersion";
  else if (const int rc = get(&v); rc != 0 || v <= 0)
    out.error = "cudaRuntimeGetVersion failed (" + std::to_string(rc) + ")";
  else
    out.loaded = cuda_version_string(v);
  return out;
}

LibraryVersion probe_cublas(const LibraryLoader& libs, const std::string& built) {
  LibraryVersion out = start("cuBLAS", built);
  auto lib = libs.open(
      sonames("libcublas.so", built, {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}),
      &out.error);
  if (!lib) return out;
  out.error.clear();
  out.path = lib->path();
  // cublasGetProperty(libraryPropertyType, int*): MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2.
  auto get = lib->fn<int (*)(int, int*)>("cublasGetProperty");
  if (!get) {
    out.error = "loaded, but it has no cublasGetProperty";
    return out;
  }
  int part[3] = {-1, -1, -1};
  for (int i = 0; i < 3; ++i) {
    if (const int rc = get(i, &part[i]); rc != 0 || part[i] < 0) {
      out.error =
          "cublasGetProperty(" + std::to_string(i) + ") failed (" + std::to_string(rc) + ")";
      return out;
    }
  }
  out.loaded =
      std::to_string(part[0]) + "." + std::to_string(part[1]) + "." + std::to_string(part[2]);
  return out;
}

LibraryVersion probe_cudnn(const LibraryLoader& libs, const std::string& built) {
  LibraryVersion out = start("cuDNN", built);
  auto lib = libs.open(
      sonames("libcudnn.so", built, {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"}), &out.error);
  if (!lib) return out;
  out.error.clear();
  out.path = lib->path();
  auto get = lib->fn<size_t (*)()>("cudnnGetVersion");
  if (!get) out.error = "loaded, but it has no cudnnGetVersion";
  else if (const size_t v = get(); v == 0)
    out.error = "cudnnGetVersion returned 0";
  else
    out.loaded = cudnn_version_string(v);
  return out;
}

}  // namespace polyinfer::hw
