// Vulkan device memory: the first-fit sub-allocator on its own (fake block addresses, no
// device), then the context's use of it on a real device: small allocations share a block,
// pointers inside an allocation map back to (buffer, offset), and a model's weights (each copied
// to the device once) no longer take a device allocation each.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"
#include "runtime/suballocator.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

// Blocks at fake, far-apart addresses (nothing is dereferenced), with a log of what was made.
struct FakeBlocks {
  std::vector<size_t> created;  // sizes, in order
  std::set<uintptr_t> live;
  uintptr_t next = uintptr_t{1} << 32;
  SubAllocator make(size_t block, size_t max_block) {
    return SubAllocator(
        block, max_block, 256,
        [this](size_t size) {
          created.push_back(size);
          const uintptr_t base = next;
          next += uintptr_t{1} << 32;
          live.insert(base);
          return base;
        },
        [this](uintptr_t base) { live.erase(base); });
  }
};

TEST(VulkanSubAllocator, SmallAllocationsShareABlockAligned) {
  FakeBlocks fb;
  SubAllocator a = fb.make(1 << 20, 1 << 30);
  std::set<uintptr_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const uintptr_t p = a.allocate(100 + static_cast<size_t>(i % 7));
    EXPECT_EQ(p % 256, 0u);
    EXPECT_TRUE(seen.insert(p).second) << "handed out twice";
  }
  EXPECT_EQ(a.blocks(), 1u);
  EXPECT_EQ(a.used_bytes(), 1000u * 256);
  ASSERT_EQ(fb.created.size(), 1u);
  EXPECT_EQ(fb.created[0], size_t{1} << 20);
  // A 4097th 256-byte step does not fit: the second block.
  for (int i = 0; i < 4096 - 1000; ++i) a.allocate(1);
  EXPECT_EQ(a.blocks(), 1u);
  a.allocate(1);
  EXPECT_EQ(a.blocks(), 2u);
}

TEST(VulkanSubAllocator, FreedRangesMergeAndAreReused) {
  FakeBlocks fb;
  SubAllocator a = fb.make(1 << 20, 1 << 30);
  const uintptr_t p0 = a.allocate(256), p1 = a.allocate(300), p2 = a.allocate(256);
  EXPECT_EQ(p1, p0 + 256);
  EXPECT_EQ(p2, p0 + 768);  // 300 rounds up to 512
  EXPECT_EQ(a.free_ranges(), 1u);
  EXPECT_TRUE(a.deallocate(p1));
  EXPECT_EQ(a.free_ranges(), 2u);  // the hole and the tail
  EXPECT_TRUE(a.deallocate(p0));
  EXPECT_EQ(a.free_ranges(), 2u);        // merged with the hole after it
  EXPECT_EQ(a.allocate(700), p0);        // first fit: the merged 768 bytes at the start
  EXPECT_EQ(a.allocate(10), p0 + 1024);  // past p2, in the tail: 768 - 768 left nothing before
  EXPECT_FALSE(a.deallocate(p0 + 1));    // not an allocation
  EXPECT_TRUE(a.deallocate(p2));
  EXPECT_EQ(a.free_ranges(), 2u);  // p2's range merged with nothing on the left, [0,768) used
  EXPECT_TRUE(a.deallocate(p0));
  EXPECT_TRUE(a.deallocate(p0 + 1024));
  // Empty: the block is handed back at once.
  EXPECT_EQ(a.blocks(), 0u);
  EXPECT_TRUE(fb.live.empty());
}

TEST(VulkanSubAllocator, LargeRequestsGetTheirOwnBlockUpToTheBindingLimit) {
  FakeBlocks fb;
  SubAllocator a = fb.make(1 << 20, (8 << 20) + 100);
  const uintptr_t small = a.allocate(1000);
  const uintptr_t big = a.allocate(3 << 20);
  EXPECT_EQ(a.blocks(), 2u);
  ASSERT_EQ(fb.created.size(), 2u);
  EXPECT_EQ(fb.created[1], size_t{3} << 20);
  uintptr_t base = 0;
  size_t offset = 0;
  ASSERT_TRUE(a.find(big + 12345, &base, &offset));
  EXPECT_EQ(base, big);
  EXPECT_EQ(offset, 12345u);
  ASSERT_TRUE(a.find(small + 999, &base, &offset));
  EXPECT_EQ(offset, small - base + 999);
  EXPECT_FALSE(a.find(big + (3 << 20), &base, &offset));  // one past the block
  // Blocks never exceed the binding limit (rounded down to the alignment).
  EXPECT_NO_THROW(a.deallocate(a.allocate(8 << 20)));
  try {
    a.allocate((8 << 20) + 257);
    FAIL() << "an allocation above maxStorageBufferRange";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("maxStorageBufferRange"), std::string::npos);
  }
  EXPECT_TRUE(a.deallocate(big));
  EXPECT_EQ(a.blocks(), 1u);
  a.clear();
  EXPECT_TRUE(fb.live.empty());
}

TEST(VulkanSubAllocator, ABlockLargerThanTheLimitIsCappedAtIt) {
  FakeBlocks fb;
  SubAllocator a = fb.make(64 << 20, (1 << 20) + 3);
  EXPECT_EQ(a.block_bytes(), size_t{1} << 20);
  a.allocate(10);
  ASSERT_EQ(fb.created.size(), 1u);
  EXPECT_EQ(fb.created[0], size_t{1} << 20);
  a.clear();
}

#if POLYINFER_TEST_VULKAN

TEST(VulkanMemory, SmallAllocationsShareABufferAndPointersMapBack) {
  PI_SKIP_WITHOUT_VULKAN();
  auto ctx = vulkan::Context::get();
  const auto before = ctx->memory_stats();
  EXPECT_LE(before.block_bytes, before.max_block_bytes);
  std::vector<void*> ptrs;
  std::set<VkBuffer> buffers;
  for (int i = 0; i < 200; ++i) {
    void* p = ctx->allocate(4 * static_cast<size_t>(1 + i));
    const vulkan::BufferRef r = ctx->find(p);
    EXPECT_EQ(r.offset % 256, 0u);
    // An interior pointer (a view's data) maps into the same buffer at the offset plus the step.
    const vulkan::BufferRef inner = ctx->find(static_cast<char*>(p) + 4 * i);
    EXPECT_EQ(inner.buffer, r.buffer);
    EXPECT_EQ(inner.offset, r.offset + 4 * static_cast<size_t>(i));
    buffers.insert(r.buffer);
    ptrs.push_back(p);
  }
  EXPECT_LE(buffers.size(), 2u) << "200 small allocations took " << buffers.size() << " buffers";
  EXPECT_GE(ctx->memory_stats().used_bytes, before.used_bytes + 200 * 256);
  for (void* p : ptrs) ctx->deallocate(p);
  const auto after = ctx->memory_stats();
  EXPECT_EQ(after.used_bytes, before.used_bytes);
  EXPECT_EQ(after.blocks, before.blocks);
  EXPECT_THROW(ctx->find(&after), Error);  // host memory
}

TEST(VulkanMemory, ALargeTensorGetsItsOwnBlock) {
  PI_SKIP_WITHOUT_VULKAN();
  auto ctx = vulkan::Context::get();
  const auto before = ctx->memory_stats();
  const size_t n = before.block_bytes / sizeof(float) + 1000;  // a little above one block
  if (n * sizeof(float) > before.max_block_bytes) GTEST_SKIP() << "above maxStorageBufferRange";
  {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 1013);
    const Tensor t = Tensor::from_vector<float>({static_cast<int64_t>(n)}, v).to(ctx->device());
    const auto with = ctx->memory_stats();
    EXPECT_EQ(with.blocks, before.blocks + 1);
    EXPECT_EQ(with.reserved_bytes, before.reserved_bytes + (n * sizeof(float) + 255) / 256 * 256);
    EXPECT_EQ(t.to_vector<float>(), v);
  }
  EXPECT_EQ(ctx->memory_stats().blocks, before.blocks);
}

// A chain of Adds, each with its own weight: the weights go to the device once (at load) and
// share a block instead of taking a VkDeviceMemory each; the results match the CPU's.
TEST(VulkanMemory, WeightsShareBlocksAndStayRight) {
  PI_SKIP_WITHOUT_VULKAN();
  constexpr int kNodes = 60;
  test::ModelBuilder b(17);
  b.input("x", {4, 9}).output("y", {4, 9});
  std::string prev = "x";
  for (int i = 0; i < kNodes; ++i) {
    std::vector<float> w(36);
    for (size_t j = 0; j < w.size(); ++j)
      w[j] = 0.01f * static_cast<float>((i * 7 + j) % 13) - 0.05f;
    const std::string wn = "w" + std::to_string(i);
    b.initializer(wn, {4, 9}, w);
    const std::string out = i + 1 == kNodes ? "y" : "v" + std::to_string(i);
    b.node("Add", {prev, wn}, {out});
    prev = out;
  }
  const std::string bytes = b.bytes();
  auto ctx = vulkan::Context::get();
  const auto before = ctx->memory_stats();
  SessionOptions o;
  o.optimization_level = 0;
  o.providers = {"vulkan"};
  Session vk = Session::load_bytes(bytes.data(), bytes.size(), o);
  o.providers = {"cpu-ref"};
  Session cpu = Session::load_bytes(bytes.data(), bytes.size(), o);
  const auto loaded = ctx->memory_stats();
  EXPECT_GE(loaded.used_bytes, before.used_bytes + kNodes * 256);
  EXPECT_LE(loaded.blocks, before.blocks + 1);
  for (int run = 0; run < 2; ++run) {
    const Tensor x = test::random_tensor({4, 9}, 3 + run);
    const std::vector<float> got = vk.run({{"x", Value(x)}})[0].tensor().to_vector<float>();
    const std::vector<float> want = cpu.run({{"x", Value(x)}})[0].tensor().to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::abs(want[i])) << "element " << i;
  }
  EXPECT_EQ(vk.placement().device_copies, 1);  // of the last run: x only, the weights never again
}

#endif  // POLYINFER_TEST_VULKAN

}  // namespace
}  // namespace polyinfer
