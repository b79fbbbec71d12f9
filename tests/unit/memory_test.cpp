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

}  // namespace
}  // namespace polyinfer
