// The CUDA caching allocator's bookkeeping (providers/cuda/plugin/block_cache.h) over a fake
// backend with a capacity, so reuse, release and the out-of-memory retry are checked without a
// GPU. The real allocator is this class over cudaMalloc/cudaFree/cudaStreamSynchronize.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "providers/cuda/plugin/block_cache.h"

namespace polyinfer::cuda {
namespace {

// malloc with a byte budget; counts calls and remembers what is live.
struct FakeDevice {
  size_t capacity = size_t{1} << 30;
  size_t used = 0;
  int mallocs = 0, frees = 0, waits = 0;
  std::map<void*, size_t> live;

  BlockCache::Backend backend() {
    return {[this](size_t n) -> void* {
              ++mallocs;
              if (used + n > capacity) return nullptr;
              void* p = std::malloc(n);
              live[p] = n;
              used += n;
              return p;
            },
            [this](void* p) {
              ++frees;
              auto it = live.find(p);
              ASSERT_NE(it, live.end()) << "freed a block the device did not hand out";
              used -= it->second;
              live.erase(it);
              std::free(p);
            },
            [this] { ++waits; }};
  }
  ~FakeDevice() {
    for (auto& [p, n] : live) std::free(p);
  }
};

TEST(CudaBlockCache, SizeClasses) {
  EXPECT_EQ(BlockCache::size_class(0), 512u);
  EXPECT_EQ(BlockCache::size_class(1), 512u);
  EXPECT_EQ(BlockCache::size_class(512), 512u);
  EXPECT_EQ(BlockCache::size_class(513), 1024u);
  EXPECT_EQ(BlockCache::size_class(size_t{1} << 20), size_t{1} << 20);
  EXPECT_EQ(BlockCache::size_class((size_t{1} << 20) + 1), size_t{2} << 20);
  EXPECT_EQ(BlockCache::size_class((size_t{5} << 20) - 3), size_t{5} << 20);
}

TEST(CudaBlockCache, AFreedBlockServesTheNextRequestOfItsClass) {
  FakeDevice dev;
  BlockCache cache(dev.backend());
  void* a = cache.allocate(1000);  // class 1024
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(cache.deallocate(a));
  EXPECT_EQ(cache.stats().cached, 1024u);
  EXPECT_EQ(cache.stats().in_use, 0u);
  EXPECT_EQ(cache.allocate(700), a) << "same class: the cached block";
  EXPECT_EQ(dev.mallocs, 1);
  void* b = cache.allocate(100);  // class 512: a new block
  EXPECT_NE(b, a);
  EXPECT_EQ(dev.mallocs, 2);
  EXPECT_EQ(cache.stats().in_use, 1536u);
  EXPECT_EQ(cache.stats().cached, 0u);
  EXPECT_EQ(dev.frees, 0) << "nothing goes back to the device unasked";
}

TEST(CudaBlockCache, ReleaseWaitsThenFreesOnlyCachedBlocks) {
  FakeDevice dev;
  BlockCache cache(dev.backend());
  void* kept = cache.allocate(4096);
  void* a = cache.allocate(3000);
  void* b = cache.allocate(size_t{3} << 20);
  cache.deallocate(a);
  cache.deallocate(b);
  EXPECT_EQ(cache.release(), 3072u + (size_t{3} << 20));
  EXPECT_EQ(dev.waits, 1) << "queued work may still read a freed block";
  EXPECT_EQ(dev.frees, 2);
  EXPECT_EQ(dev.live.count(kept), 1u);
  EXPECT_EQ(cache.stats().cached, 0u);
  EXPECT_EQ(cache.stats().in_use, 4096u);
  EXPECT_EQ(cache.release(), 0u);
  EXPECT_EQ(dev.waits, 1) << "nothing cached: no wait";
}

TEST(CudaBlockCache, OutOfMemoryReleasesTheCacheAndRetriesOnce) {
  FakeDevice dev;
  dev.capacity = 8192;
  BlockCache cache(dev.backend());
  void* a = cache.allocate(4096);
  void* b = cache.allocate(2048);
  cache.deallocate(a);
  cache.deallocate(b);
  // 6 KiB cached of 8 KiB: a 5 KiB block fits only after the cache is released.
  void* c = cache.allocate(5000);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(dev.frees, 2);
  EXPECT_EQ(dev.mallocs, 4);  // a, b, the failed try, the retry
  EXPECT_EQ(cache.stats().in_use, 5120u);
  // Still too big with nothing cached: nullptr (the allocator turns it into OutOfMemory).
  EXPECT_EQ(cache.allocate(4096), nullptr);
  EXPECT_EQ(dev.mallocs, 5);
}

// While a graph records, freed blocks stay in use, held for it: no allocation gets them, release()
// keeps them; given back, they serve the next request of their class.
TEST(CudaBlockCache, BlocksFreedWhileHoldingStayReservedUntilGivenBack) {
  FakeDevice dev;
  BlockCache cache(dev.backend());
  void* a = cache.allocate(1000);
  std::vector<void*> held;
  cache.hold(&held);
  void* b = cache.allocate(1000);  // a new block: a is still in use
  ASSERT_TRUE(cache.deallocate(a));
  ASSERT_TRUE(cache.deallocate(b));
  cache.hold(nullptr);
  EXPECT_EQ(held, (std::vector<void*>{a, b}));
  EXPECT_EQ(cache.stats().in_use, 2 * BlockCache::size_class(1000));
  EXPECT_EQ(cache.release(), 0u);  // nothing cached: both are held
  void* c = cache.allocate(1000);
  EXPECT_NE(c, a);
  EXPECT_NE(c, b);
  EXPECT_EQ(dev.mallocs, 3);
  EXPECT_TRUE(cache.give_back(held));
  EXPECT_EQ(cache.stats().in_use, BlockCache::size_class(1000));
  const std::set<void*> reused = {cache.allocate(1000), cache.allocate(1000)};
  EXPECT_EQ(reused, (std::set<void*>{a, b}));
  EXPECT_EQ(dev.mallocs, 3);
  EXPECT_FALSE(cache.give_back({&dev}));  // not a block of this cache
  for (void* p : reused) cache.deallocate(p);
  cache.deallocate(c);
}

TEST(CudaBlockCache, AForeignPointerIsRefused) {
  FakeDevice dev;
  BlockCache cache(dev.backend());
  int x = 0;
  EXPECT_FALSE(cache.deallocate(&x));
  void* a = cache.allocate(10);
  EXPECT_TRUE(cache.deallocate(a));
  EXPECT_FALSE(cache.deallocate(a)) << "a second free of the same block";
}

}  // namespace
}  // namespace polyinfer::cuda
