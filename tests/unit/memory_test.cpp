// Intermediate buffers are released after their last reader and reused from the session pool.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "polyinfer/session.h"
#include "runtime/memory_pool.h"

namespace polyinfer {
namespace {

TEST(MemoryPool, ReusesFreedBuffersOfTheSameSizeClass) {
  MemoryPool pool(host_allocator());
  void* a = pool.allocate(1000);
  pool.deallocate(a, 1000);
  void* b = pool.allocate(900);  // same 1 KiB class
  EXPECT_EQ(a, b);
  EXPECT_EQ(pool.stats().system_allocs, 1u);
  void* c = pool.allocate(1000);
  EXPECT_NE(b, c);
  EXPECT_EQ(pool.stats().system_allocs, 2u);
  EXPECT_EQ(pool.stats().peak_in_use, 2048u);
  pool.deallocate(b, 900);
  pool.deallocate(c, 1000);
  pool.release_cached();
  EXPECT_EQ(pool.stats().reserved, 0u);
}

// A cached buffer serves a smaller request down to half its class (growing feature maps reuse
// what earlier layers freed), never a request less than half its size; in_use counts what was
// asked for, and the buffer goes back under its own class.
TEST(MemoryPool, ReusesALargerCachedBufferUpToTwiceTheRequest) {
  MemoryPool pool(host_allocator());
  void* big = pool.allocate(4096);
  pool.deallocate(big, 4096);
  void* a = pool.allocate(3000);  // class 3072: the 4096 buffer fits within 2x
  EXPECT_EQ(a, big);
  EXPECT_EQ(pool.stats().system_allocs, 1u);
  EXPECT_EQ(pool.stats().in_use, 3072u);
  pool.deallocate(a, 3000);
  EXPECT_EQ(pool.stats().in_use, 0u);
  void* b = pool.allocate(4096);  // the buffer kept its own class
  EXPECT_EQ(b, big);
  pool.deallocate(b, 4096);
  void* small = pool.allocate(1024);  // 4096 is over twice 1024: fresh memory
  EXPECT_NE(small, big);
  EXPECT_EQ(pool.stats().system_allocs, 2u);
  pool.deallocate(small, 1024);
  pool.release_cached();
  EXPECT_EQ(pool.stats().reserved, 0u);
}

TEST(Executor, ReleasesIntermediatesAfterTheirLastReader) {
  // x → Neg → Neg → ... (8 deep). With lifetime release at most two intermediates are alive at
  // once, so the pool's peak stays at two buffers however deep the chain is.
  test::ModelBuilder b;
  b.input("x", {1024}).output("y", {1024});
  std::string prev = "x";
  for (int i = 0; i < 8; ++i) {
    const std::string out = i == 7 ? "y" : "t" + std::to_string(i);
    b.node("Neg", {prev}, {out});
    prev = out;
  }
  const std::string bytes = b.bytes();
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  std::vector<float> ones(1024, 1.0f);
  auto out = s.run({{"x", Tensor::from_vector<float>({1024}, ones)}});
  EXPECT_EQ(out[0].tensor().to_vector<float>()[5], 1.0f);  // eight negations
  EXPECT_LE(s.peak_memory_bytes(), 2u * 4096u);
  EXPECT_GE(s.peak_memory_bytes(), 4096u);
}

TEST(MemoryPool, ReplaysTheRecordedRunFromAPlannedArena) {
  MemoryPool pool(host_allocator());
  // A chain: each buffer is freed after the next one is allocated, so two are alive at once.
  auto chain = [&](size_t bytes) {
    std::vector<void*> seen;
    void* prev = pool.allocate(bytes);
    seen.push_back(prev);
    for (int i = 0; i < 5; ++i) {
      void* next = pool.allocate(bytes);
      seen.push_back(next);
      pool.deallocate(prev, bytes);
      prev = next;
    }
    pool.deallocate(prev, bytes);
    return seen;
  };
  pool.begin_run();
  chain(4096);
  pool.end_run();
  EXPECT_EQ(pool.stats().arena, 2u * 4096u);  // the packing finds the two-buffer optimum
  pool.begin_run();
  const auto replay = chain(4096);
  pool.end_run();
  EXPECT_EQ(pool.stats().planned_allocs, 6u);
  for (size_t i = 1; i < replay.size(); ++i) EXPECT_NE(replay[i], replay[i - 1]);
  // A run that differs (other sizes) is served by the pool and re-recorded.
  pool.begin_run();
  chain(8192);
  pool.end_run();
  EXPECT_EQ(pool.stats().planned_allocs, 6u);
  pool.begin_run();
  chain(8192);
  pool.end_run();
  EXPECT_EQ(pool.stats().arena, 2u * 8192u);
}

TEST(MemoryPool, AnArenaBlockThatOutlivesARunDisablesTheArena) {
  MemoryPool pool(host_allocator());
  pool.begin_run();
  void* a = pool.allocate(1000);
  pool.deallocate(a, 1000);
  pool.end_run();
  ASSERT_GT(pool.stats().arena, 0u);
  pool.begin_run();
  void* kept = pool.allocate(1000);  // served from the arena, then not freed in this run
  pool.end_run();
  pool.begin_run();
  void* other = pool.allocate(1000);
  pool.end_run();
  EXPECT_NE(kept, other);
  pool.deallocate(kept, 1000);
  pool.deallocate(other, 1000);
}

TEST(Executor, LaterRunsServeIntermediatesFromThePlannedArena) {
  test::ModelBuilder b;
  b.input("x", {1024}).output("y", {1024});
  std::string prev = "x";
  for (int i = 0; i < 8; ++i) {
    const std::string out = i == 7 ? "y" : "t" + std::to_string(i);
    b.node(i % 2 ? "Abs" : "Neg", {prev}, {out});
    prev = out;
  }
  const std::string bytes = b.bytes();
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  std::vector<Tensor> outs;
  for (int r = 0; r < 3; ++r) {
    std::vector<float> x(1024, static_cast<float>(r + 1));
    outs.push_back(s.run({{"x", Tensor::from_vector<float>({1024}, x)}})[0].tensor());
  }
  // Neg then Abs, four times: a positive input ends as itself. Outputs of earlier runs are not
  // overwritten by later ones (outputs are never planned into the arena).
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(outs[r].to_vector<float>()[7], static_cast<float>(r + 1)) << "run " << r;
  EXPECT_GT(s.memory_arena_bytes(), 0u);
  EXPECT_LE(s.memory_arena_bytes(), 2u * 4096u);
}

}  // namespace
}  // namespace polyinfer
