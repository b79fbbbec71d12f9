// A caching allocator per session and device: buffers of intermediates that the executor
// releases (their last reader has run) go back to the pool and serve the next request of a
// similar size, so a steady-state run allocates nothing from the system. The planned static
// arena of the fast CPU path replaces this for static shapes; the pool stays for dynamic ones.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "polyinfer/tensor.h"

namespace polyinfer {

class MemoryPool final : public Allocator {
 public:
  explicit MemoryPool(std::shared_ptr<Allocator> backing) : backing_(std::move(backing)) {}
  ~MemoryPool() override;

  Device device() const override { return backing_->device(); }
  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;

  // Returns every cached (free) buffer to the backing allocator.
  void release_cached();

  struct Stats {
    size_t in_use = 0;       // bytes handed out now
    size_t peak_in_use = 0;  // most bytes handed out at once
    size_t reserved = 0;     // bytes held from the backing allocator (in use + cached)
    size_t system_allocs = 0;
  };
  Stats stats() const;

 private:
  static size_t size_class(size_t bytes);

  std::shared_ptr<Allocator> backing_;
  mutable std::mutex mu_;
  std::multimap<size_t, void*> free_;  // size class → cached buffer
  std::map<void*, size_t> live_;       // buffer → size class
  Stats stats_;
};

}  // namespace polyinfer
