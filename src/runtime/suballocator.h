// First-fit sub-allocation of large device blocks (Vulkan, OpenCL): the bookkeeping only, with no
// device API in it, so that it is tested on its own (tests/unit/vulkan_memory_test.cpp).
//
// Why: one VkDeviceMemory per tensor and weight hits the driver's allocation count limit
// (maxMemoryAllocationCount, 4096 on many drivers) on large models and costs a driver call each.
// Here a block of `block_bytes` (or one block the size of a larger request) serves many
// allocations at `align`-byte steps; freed ranges merge with free neighbours, and a block whose
// last allocation is freed is handed back at once (the session's MemoryPool already caches what
// it reuses, so keeping empty blocks would hold memory twice).
//
// Addresses are the caller's: `create(bytes)` makes a block and returns its base address (the
// mapped pointer for Vulkan), `destroy(base)` frees it. An allocation's address is base + offset.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>

#include "polyinfer/status.h"

namespace polyinfer {

class SubAllocator {
 public:
  // `max_block_bytes` bounds every block (a kernel binds a whole block, which must not exceed
  // Vulkan's maxStorageBufferRange or OpenCL's largest buffer); requests above it fail with
  // OutOfMemory.
  SubAllocator(size_t block_bytes, size_t max_block_bytes, size_t align,
               std::function<uintptr_t(size_t)> create, std::function<void(uintptr_t)> destroy)
      : align_(align),
        max_block_(max_block_bytes / align * align),
        block_(std::min(block_bytes, max_block_)),
        create_(std::move(create)),
        destroy_(std::move(destroy)) {}
  SubAllocator(const SubAllocator&) = delete;
  SubAllocator& operator=(const SubAllocator&) = delete;

  // The address of `bytes` (at least 1) rounded up to the alignment: the first free range that
  // fits, in blocks by address; a new block when none does.
  uintptr_t allocate(size_t bytes) {
    const size_t size = (std::max<size_t>(bytes, 1) + align_ - 1) / align_ * align_;
    PI_CHECK(size <= max_block_, OutOfMemory, "an allocation of ", bytes, " bytes exceeds the ",
             max_block_,
             " bytes one device buffer may hold (Vulkan's maxStorageBufferRange, OpenCL's "
             "CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    for (auto& [base, b] : blocks_)
      for (auto it = b.free.begin(); it != b.free.end(); ++it)
        if (it->second >= size) return take(base, b, it, size);
    const size_t bytes_new = std::max(size, block_);
    const uintptr_t base = create_(bytes_new);
    Block& b = blocks_[base];
    b.size = bytes_new;
    b.free[0] = bytes_new;
    return take(base, b, b.free.begin(), size);
  }

  // Frees the allocation at `addr` (as returned by allocate); false when there is none.
  bool deallocate(uintptr_t addr) {
    auto a = allocs_.find(addr);
    if (a == allocs_.end()) return false;
    const size_t size = a->second;
    allocs_.erase(a);
    auto bit = std::prev(blocks_.upper_bound(addr));
    Block& b = bit->second;
    b.used -= size;
    if (b.used == 0) {
      const uintptr_t base = bit->first;
      blocks_.erase(bit);
      destroy_(base);
      return true;
    }
    size_t off = addr - bit->first, len = size;
    // Merge with the free range after it, then with the one before it.
    auto next = b.free.lower_bound(off);
    if (next != b.free.end() && next->first == off + len) {
      len += next->second;
      next = b.free.erase(next);
    }
    if (next != b.free.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        prev->second += len;
        return true;
      }
    }
    b.free[off] = len;
    return true;
  }

  // The block base and offset of any address inside a live block; false otherwise.
  bool find(uintptr_t addr, uintptr_t* base, size_t* offset) const {
    auto it = blocks_.upper_bound(addr);
    if (it == blocks_.begin()) return false;
    --it;
    if (addr >= it->first + it->second.size) return false;
    *base = it->first;
    *offset = addr - it->first;
    return true;
  }

  // Destroys every block (at exit; allocations still live are dropped with them).
  void clear() {
    for (auto& [base, b] : blocks_) destroy_(base);
    blocks_.clear();
    allocs_.clear();
  }

  size_t blocks() const { return blocks_.size(); }
  size_t block_bytes() const { return block_; }
  // Bytes in live allocations (after rounding) and in blocks.
  size_t used_bytes() const {
    size_t n = 0;
    for (const auto& [base, b] : blocks_) n += b.used;
    return n;
  }
  size_t reserved_bytes() const {
    size_t n = 0;
    for (const auto& [base, b] : blocks_) n += b.size;
    return n;
  }
  // Free ranges in all blocks (1 per block when nothing is fragmented).
  size_t free_ranges() const {
    size_t n = 0;
    for (const auto& [base, b] : blocks_) n += b.free.size();
    return n;
  }

 private:
  struct Block {
    size_t size = 0;
    size_t used = 0;
    std::map<size_t, size_t> free;  // offset -> length, disjoint and never adjacent
  };

  uintptr_t take(uintptr_t base, Block& b, std::map<size_t, size_t>::iterator it, size_t size) {
    const size_t off = it->first, len = it->second;
    b.free.erase(it);
    if (len > size) b.free[off + size] = len - size;
    b.used += size;
    allocs_[base + off] = size;
    return base + off;
  }

  size_t align_;
  size_t max_block_;
  size_t block_;
  std::function<uintptr_t(size_t)> create_;
  std::function<void(uintptr_t)> destroy_;
  std::map<uintptr_t, Block> blocks_;   // by base address
  std::map<uintptr_t, size_t> allocs_;  // live allocations: address -> rounded size
};

}  // namespace polyinfer
