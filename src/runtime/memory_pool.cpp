#include "runtime/memory_pool.h"

namespace polyinfer {

MemoryPool::~MemoryPool() {
  release_cached();
  // Buffers still live belong to tensors that outlive the session (returned outputs); they hold
  // a reference to this pool through their storage, so reaching here means none are left.
}

size_t MemoryPool::size_class(size_t bytes) {
  // Round to 256 bytes below 64 KiB and to 1/8 of the next power of two above, so reuse finds
  // a match without wasting more than 12.5%.
  if (bytes <= 65536) return (bytes + 255) / 256 * 256;
  size_t p = 65536;
  while (p < bytes) p <<= 1;
  const size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

void* MemoryPool::allocate(size_t bytes) {
  const size_t cls = size_class(bytes == 0 ? 1 : bytes);
  std::lock_guard<std::mutex> lock(mu_);
  void* p = nullptr;
  auto it = free_.find(cls);
  if (it != free_.end()) {
    p = it->second;
    free_.erase(it);
  } else {
    p = backing_->allocate(cls);
    stats_.reserved += cls;
    ++stats_.system_allocs;
  }
  live_[p] = cls;
  stats_.in_use += cls;
  if (stats_.in_use > stats_.peak_in_use) stats_.peak_in_use = stats_.in_use;
  return p;
}

void MemoryPool::deallocate(void* ptr, size_t) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;
  stats_.in_use -= it->second;
  free_.emplace(it->second, ptr);
  live_.erase(it);
}

void MemoryPool::release_cached() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [cls, p] : free_) {
    backing_->deallocate(p, cls);
    stats_.reserved -= cls;
  }
  free_.clear();
}

MemoryPool::Stats MemoryPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace polyinfer
