// Large host buffers freed during session creation are reused by the next allocation of the same
// size (core/host_recycling.h), never outside such a scope, and never more than 32 MiB of them.
#include <gtest/gtest.h>

#include <vector>

#include "core/host_recycling.h"
#include "polyinfer/tensor.h"

namespace polyinfer {
namespace {

constexpr int64_t kMiB = 1 << 20;

Tensor floats(int64_t bytes) { return Tensor::empty(DType::Float32, {bytes / 4}); }

TEST(HostRecycling, AFreedLargeBufferGoesToTheNextAllocationOfItsSize) {
  const HostRecycling scope;
  const void* first = nullptr;
  {
    Tensor a = floats(3 * kMiB);
    first = a.raw_data();
  }
  EXPECT_EQ(HostRecycling::kept_bytes(), static_cast<size_t>(3 * kMiB));
  Tensor other = floats(5 * kMiB);  // another size: new memory, the kept buffer stays
  EXPECT_NE(other.raw_data(), first);
  EXPECT_EQ(HostRecycling::kept_bytes(), static_cast<size_t>(3 * kMiB));
  Tensor b = floats(3 * kMiB);
  EXPECT_EQ(b.raw_data(), first);
  EXPECT_EQ(HostRecycling::kept_bytes(), 0u);
}

TEST(HostRecycling, SmallBuffersAndBuffersOutsideAScopeAreNotKept) {
  { Tensor a = floats(3 * kMiB); }
  EXPECT_EQ(HostRecycling::kept_bytes(), 0u);
  const HostRecycling scope;
  { Tensor small = floats(kMiB); }
  EXPECT_EQ(HostRecycling::kept_bytes(), 0u);
}

TEST(HostRecycling, AtMost32MiBAreKeptAndAllAreFreedWhenTheLastScopeEnds) {
  {
    const HostRecycling outer;
    {
      const HostRecycling inner;
      std::vector<Tensor> held;
      for (int i = 0; i < 10; ++i) held.push_back(floats(4 * kMiB));
      held.clear();  // 40 MiB freed at once: the oldest 8 MiB go back to the system
      EXPECT_EQ(HostRecycling::kept_bytes(), static_cast<size_t>(32 * kMiB));
    }
    EXPECT_EQ(HostRecycling::kept_bytes(), static_cast<size_t>(32 * kMiB));  // outer still holds
  }
  EXPECT_EQ(HostRecycling::kept_bytes(), 0u);
}

}  // namespace
}  // namespace polyinfer
