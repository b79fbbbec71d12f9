// The caching device allocator (context.h).
#include "providers/cuda/plugin/context.h"

namespace polyinfer::cuda {

size_t CachingAllocator::size_class(size_t bytes) {
  constexpr size_t kSmall = 512, kLarge = size_t{1} << 20;
  const size_t b = bytes == 0 ? 1 : bytes;
  if (b <= kLarge) return (b + kSmall - 1) / kSmall * kSmall;
  return (b + kLarge - 1) / kLarge * kLarge;
}

void* CachingAllocator::allocate(size_t bytes) {
  const size_t cls = size_class(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = free_.find(cls); it != free_.end()) {
    void* p = it->second;
    free_.erase(it);
    stats_.cached -= cls;
    live_[p] = cls;
    stats_.in_use += cls;
    return p;
  }
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, cls);
  if (e == cudaErrorMemoryAllocation && !free_.empty()) {
    // Blocks of other classes are cached: give them back and try once more.
    cudaGetLastError();  // the failed call's error, so later checks do not see it
    release_locked();
    e = cudaMalloc(&p, cls);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    fail(ErrorCode::OutOfMemory, "CUDA: allocating ", cls, " bytes failed (",
         cudaGetErrorName(e), "): ", free_b >> 20, " MiB of ", total_b >> 20,
         " MiB free on the GPU, ", stats_.in_use >> 20, " MiB in use by polyinfer");
  }
  ++stats_.cuda_mallocs;
  live_[p] = cls;
  stats_.in_use += cls;
  return p;
}

void CachingAllocator::deallocate(void* ptr, size_t) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  PI_CHECK(it != live_.end(), Internal, "CUDA: freeing a pointer this allocator did not hand out");
  // Queued work may still read the block; whatever is handed it next writes it on the same
  // stream, after that work (context.h).
  free_.emplace(it->second, ptr);
  stats_.cached += it->second;
  stats_.in_use -= it->second;
  live_.erase(it);
}

size_t CachingAllocator::release() {
  std::lock_guard<std::mutex> lock(mu_);
  return release_locked();
}

size_t CachingAllocator::release_locked() {
  if (free_.empty()) return 0;
  // cudaFree waits for the device anyway; waiting on the stream first makes that explicit.
  cudaStreamSynchronize(stream_);
  size_t freed = 0;
  for (const auto& [cls, p] : free_) {
    cudaFree(p);
    freed += cls;
  }
  free_.clear();
  stats_.cached = 0;
  return freed;
}

CachingAllocator::Stats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace polyinfer::cuda
