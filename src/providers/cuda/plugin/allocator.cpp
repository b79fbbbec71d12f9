// The caching device allocator (context.h): BlockCache's bookkeeping over cudaMalloc/cudaFree.
#include "providers/cuda/plugin/context.h"

namespace polyinfer::cuda {

CachingAllocator::CachingAllocator(cudaStream_t stream)
    : cache_({[](size_t bytes) -> void* {
                void* p = nullptr;
                if (cudaMalloc(&p, bytes) == cudaSuccess) return p;
                cudaGetLastError();  // the failed call's error, so later checks do not see it
                return nullptr;
              },
              [](void* p) { cudaFree(p); },
              // cudaFree waits for the device anyway; waiting on the stream first says so.
              [stream] { cudaStreamSynchronize(stream); }}) {}

void* CachingAllocator::allocate(size_t bytes) {
  if (void* p = cache_.allocate(bytes)) return p;
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  fail(ErrorCode::OutOfMemory, "CUDA: allocating ", BlockCache::size_class(bytes),
       " bytes failed: ", free_b >> 20, " MiB of ", total_b >> 20, " MiB free on the GPU, ",
       cache_.stats().in_use >> 20, " MiB in use by polyinfer");
}

void CachingAllocator::deallocate(void* ptr, size_t) {
  if (!ptr) return;
  // Queued work may still read the block; whatever is handed it next writes it on the same
  // stream, after that work (context.h).
  PI_CHECK(cache_.deallocate(ptr), Internal,
           "CUDA: freeing a pointer this allocator did not hand out");
}

void CachingAllocator::return_held(const std::vector<void*>& blocks) noexcept {
  // Every held block came from this cache (deallocate() holds only blocks it handed out).
  cache_.give_back(blocks);
}

}  // namespace polyinfer::cuda
