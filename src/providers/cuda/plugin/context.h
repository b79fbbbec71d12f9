// The CUDA plugin's one process-wide device (CUDA device 0): its stream, the cuBLAS, cuBLASLt and
// cuDNN handles, the caching allocator and the pinned staging buffers of host<->device copies.
//
// Ordering: every kernel, cuBLAS call and copy goes on the one stream, in the order the executor
// issues them, so device memory returned to the allocator while queued work still reads it can be
// handed out again at once: whatever writes it next is queued after that work. The host waits
// only when it needs bytes back (to_host) or asks (synchronize()).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "polyinfer/status.h"
#include "polyinfer/tensor.h"
#include "providers/cuda/plugin/block_cache.h"

namespace polyinfer::cuda {

// "cudaMalloc failed: cudaErrorMemoryAllocation (out of memory)".
std::string cuda_error_text(const char* what, cudaError_t e);
std::string cublas_error_text(const char* what, cublasStatus_t s);
std::string cudnn_error_text(const char* what, cudnnStatus_t s);

// Throws Internal (a failed launch or call is a bug or a lost device, never a placement question).
#define PI_CUDA_CHECK(call)                                                \
  do {                                                                     \
    const cudaError_t pi_e_ = (call);                                      \
    if (pi_e_ != cudaSuccess)                                              \
      ::polyinfer::fail(::polyinfer::ErrorCode::Internal,                  \
                        ::polyinfer::cuda::cuda_error_text(#call, pi_e_)); \
  } while (0)
#define PI_CUBLAS_CHECK(call)                                                \
  do {                                                                       \
    const cublasStatus_t pi_s_ = (call);                                     \
    if (pi_s_ != CUBLAS_STATUS_SUCCESS)                                      \
      ::polyinfer::fail(::polyinfer::ErrorCode::Internal,                    \
                        ::polyinfer::cuda::cublas_error_text(#call, pi_s_)); \
  } while (0)
#define PI_CUDNN_CHECK(call)                                                \
  do {                                                                      \
    const cudnnStatus_t pi_s_ = (call);                                     \
    if (pi_s_ != CUDNN_STATUS_SUCCESS)                                      \
      ::polyinfer::fail(::polyinfer::ErrorCode::Internal,                   \
                        ::polyinfer::cuda::cudnn_error_text(#call, pi_s_)); \
  } while (0)

// Device memory in size classes, kept for reuse when freed (block_cache.h): cudaMalloc and
// cudaFree are slow and cudaFree synchronizes the whole device, so neither belongs inside a run.
// Memory comes back here when a session's own pool lets it go (the session ended); release()
// hands the cached blocks back to CUDA, and so does an allocation that would otherwise run out
// of memory.
class CachingAllocator final : public Allocator {
 public:
  explicit CachingAllocator(cudaStream_t stream);
  // Nothing is freed at exit: CUDA's own exit handlers may already have torn the context down,
  // and the driver takes back a process's memory when it ends.
  ~CachingAllocator() override = default;

  Device device() const override { return {DeviceKind::CUDA, 0}; }
  // Throws OutOfMemory naming the GPU's free and total memory.
  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;
  // Frees every cached block; returns the bytes freed.
  size_t release() { return cache_.release(); }
  BlockCache::Stats stats() const { return cache_.stats(); }

  // While a CUDA Graph records (capture.cpp), blocks freed are held for it (BlockCache::hold):
  // the recorded work uses them again on every replay. nullptr stops holding; return_held()
  // gives such blocks back when the recording is destroyed.
  void hold_frees(std::vector<void*>* sink) { cache_.hold(sink); }
  void return_held(const std::vector<void*>& blocks) noexcept;

 private:
  BlockCache cache_;
};

class Context {
 public:
  // The context, after init() succeeded; throws ProviderUnavailable otherwise.
  static Context& get();
  // Opens device 0 once; "" when usable, else the reason (plugin_api.h's init()).
  static std::string init();

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  cublasLtHandle_t cublaslt() const { return cublaslt_; }
  // On the stream, like everything else.
  cudnnHandle_t cudnn() const { return cudnn_; }
  // The GPU's name ("NVIDIA H200") and cudnnGetVersion(): part of every tuning-cache key.
  const std::string& gpu_name() const { return gpu_name_; }
  size_t cudnn_version() const { return cudnn_version_; }
  // Device scratch memory for cuBLASLt (kLtWorkspace bytes), used on the stream only.
  void* lt_workspace() const { return lt_workspace_; }
  static constexpr size_t kLtWorkspace = size_t{32} << 20;
  const std::shared_ptr<CachingAllocator>& allocator() const { return alloc_; }
  const std::string& describe() const { return description_; }
  int max_grid_x() const { return max_grid_x_; }
  // major * 10 + minor (90 for an H100 or H200).
  int compute_capability() const { return compute_capability_; }

  void synchronize();
  // Host<->device copies through pinned staging buffers (copy.cpp); both throw while the stream
  // records a graph. A device-to-device copy is queued on the stream.
  void to_device(const void* host_src, void* device_dst, size_t bytes);
  void to_host(const void* device_src, void* host_dst, size_t bytes);
  void on_device(const void* device_src, void* device_dst, size_t bytes);

 private:
  Context() = default;
  std::string open();  // "" or the reason
  void ensure_staging();
  void refuse_copy_while_recording(const char* what);

  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t cublaslt_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  std::string gpu_name_;
  size_t cudnn_version_ = 0;
  void* lt_workspace_ = nullptr;
  std::shared_ptr<CachingAllocator> alloc_;
  std::string description_;
  int max_grid_x_ = 65535;
  int compute_capability_ = 0;

  // Two pinned buffers used in turn, each with the event of the last copy that used it: a copy
  // into the device returns once its bytes are in a staging buffer, and the next copy waits only
  // for the buffer it reuses.
  static constexpr size_t kStagingBytes = size_t{8} << 20;
  std::mutex copy_mu_;
  void* staging_[2] = {nullptr, nullptr};
  cudaEvent_t staging_done_[2] = {nullptr, nullptr};
  int next_staging_ = 0;
};

}  // namespace polyinfer::cuda
