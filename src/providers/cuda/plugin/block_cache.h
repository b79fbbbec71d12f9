// The bookkeeping of the CUDA plugin's caching allocator (context.h's CachingAllocator), kept
// apart from CUDA: the backend's malloc, free and wait are functions, so the unit tests check
// reuse, release and the out-of-memory retry on any machine (tests/unit/cuda_block_cache_test.cpp).
//
// Blocks come in size classes; a freed block waits in its class's free list and serves the next
// request of exactly that class. release() hands every cached block back to the backend, after
// waiting for queued work (which may still read a block freed a moment ago).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace polyinfer::cuda {

class BlockCache {
 public:
  struct Backend {
    std::function<void*(size_t)> malloc;  // nullptr when out of memory
    std::function<void(void*)> free;
    std::function<void()> wait;  // until queued work that may read blocks is done
  };
  struct Stats {
    size_t in_use = 0;   // bytes handed out now (by size class)
    size_t cached = 0;   // bytes held free for reuse
    size_t mallocs = 0;  // blocks taken from the backend
  };

  explicit BlockCache(Backend backend) : backend_(std::move(backend)) {}
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // Multiples of 512 bytes up to 1 MiB, then of 1 MiB: fine enough that small tensors waste
  // little, coarse enough that a cached block often fits the next request.
  static size_t size_class(size_t bytes) {
    constexpr size_t kSmall = 512, kLarge = size_t{1} << 20;
    const size_t b = bytes == 0 ? 1 : bytes;
    if (b <= kLarge) return (b + kSmall - 1) / kSmall * kSmall;
    return (b + kLarge - 1) / kLarge * kLarge;
  }

  // A block of size_class(bytes): a cached one, else a new one from the backend; when the
  // backend is out of memory and blocks are cached, they are released and the backend asked once
  // more. nullptr when that fails too.
  void* allocate(size_t bytes) {
    const size_t cls = size_class(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = free_.find(cls); it != free_.end()) {
      void* p = it->second;
      free_.erase(it);
      stats_.cached -= cls;
      return hand_out(p, cls);
    }
    void* p = backend_.malloc(cls);
    if (!p && !free_.empty()) {
      release_locked();
      p = backend_.malloc(cls);
    }
    if (!p) return nullptr;
    ++stats_.mallocs;
    return hand_out(p, cls);
  }

  // Takes back a block from allocate(); false when `p` is not one (nothing changes then). While
  // a sink is set (hold()), the block goes there instead and stays in use.
  bool deallocate(void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (held_ && live_.count(p)) {
      held_->push_back(p);
      return true;
    }
    return free_locked(p);
  }

  // While a CUDA Graph records (capture.cpp), blocks freed go to `sink` instead of the free
  // lists: the recorded work uses them again on every replay, so nothing else may get them.
  // nullptr stops holding; give_back() returns such blocks to the free lists.
  void hold(std::vector<void*>* sink) {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = sink;
  }
  // False when one of `blocks` was not handed out (the others still go back).
  bool give_back(const std::vector<void*>& blocks) {
    std::lock_guard<std::mutex> lock(mu_);
    bool all = true;
    for (void* p : blocks) all &= free_locked(p);
    return all;
  }

  // Frees every cached block (blocks in use stay); returns the bytes freed.
  size_t release() {
    std::lock_guard<std::mutex> lock(mu_);
    return release_locked();
  }

  Stats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  bool free_locked(void* p) {
    auto it = live_.find(p);
    if (it == live_.end()) return false;
    free_.emplace(it->second, p);
    stats_.cached += it->second;
    stats_.in_use -= it->second;
    live_.erase(it);
    return true;
  }
  void* hand_out(void* p, size_t cls) {
    live_[p] = cls;
    stats_.in_use += cls;
    return p;
  }
  size_t release_locked() {
    if (free_.empty()) return 0;
    backend_.wait();
    size_t freed = 0;
    for (const auto& [cls, p] : free_) {
      backend_.free(p);
      freed += cls;
    }
    free_.clear();
    stats_.cached = 0;
    return freed;
  }

  Backend backend_;
  mutable std::mutex mu_;
  std::multimap<size_t, void*> free_;   // by size class
  std::map<void*, size_t> live_;        // handed out: pointer -> size class
  std::vector<void*>* held_ = nullptr;  // hold()'s sink
  Stats stats_;
};

}  // namespace polyinfer::cuda
