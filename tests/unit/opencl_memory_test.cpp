// The OpenCL context's memory and programs: the memory-mode choice, sub-allocation into blocks,
// copies at odd sizes and offsets in whichever mode this run has (ctest runs the OpenCL tests a
// second time with POLYINFER_OPENCL_MEMORY=device), a host access to device memory faulting, and
// the program cache's bookkeeping.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "device_util.h"
#include "polyinfer/session.h"
#if POLYINFER_TEST_OPENCL
#include "providers/opencl/context.h"
#endif

namespace polyinfer {
namespace {

#if POLYINFER_TEST_OPENCL

#define PI_SKIP_WITHOUT_OPENCL()                                          \
  do {                                                                    \
    const std::string why = ::polyinfer::test::device_unusable("opencl"); \
    if (!why.empty()) GTEST_SKIP() << why;                                \
  } while (0)

TEST(OpenClMemory, ChoiceFollowsTheDeviceAndTheVariable) {
  EXPECT_EQ(opencl::choose_memory(true, nullptr).mode, opencl::MemoryMode::Mapped);
  EXPECT_EQ(opencl::choose_memory(false, nullptr).mode, opencl::MemoryMode::Device);
  EXPECT_EQ(opencl::choose_memory(false, "").mode, opencl::MemoryMode::Device);
  EXPECT_EQ(opencl::choose_memory(true, "auto").mode, opencl::MemoryMode::Mapped);
  EXPECT_EQ(opencl::choose_memory(true, "device").mode, opencl::MemoryMode::Device);
  EXPECT_EQ(opencl::choose_memory(false, "mapped").mode, opencl::MemoryMode::Mapped);
  EXPECT_NE(opencl::choose_memory(true, "device").why.find("POLYINFER_OPENCL_MEMORY"),
            std::string::npos);
  try {
    opencl::choose_memory(true, "shared");
    FAIL() << "an unknown mode was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ProviderUnavailable);
    EXPECT_NE(std::string(e.what()).find("POLYINFER_OPENCL_MEMORY=shared"), std::string::npos)
        << e.what();
  }
}

TEST(OpenClMemory, SmallTensorsShareABlock) {
  PI_SKIP_WITHOUT_OPENCL();
  auto ctx = opencl::Context::get();
  const auto before = ctx->memory_stats();
  void* a = ctx->allocate(100);
  void* b = ctx->allocate(3000);
  const auto ra = ctx->find(a), rb = ctx->find(b);
  EXPECT_EQ(ra.buffer, rb.buffer);
  EXPECT_EQ(ra.offset % 256, 0u);
  EXPECT_EQ(rb.offset % 256, 0u);
  EXPECT_LE(ctx->memory_stats().blocks, before.blocks + 1);
  // Inside an allocation, find() gives the byte offset of that address.
  EXPECT_EQ(ctx->find(static_cast<char*>(b) + 17).offset, rb.offset + 17);
  ctx->deallocate(a);
  ctx->deallocate(b);
  EXPECT_EQ(ctx->memory_stats().used_bytes, before.used_bytes);
}

// Sizes around the alignment steps, at offsets inside an allocation, there and back; and
// device-to-device copies. Whichever memory mode this run has.
TEST(OpenClMemory, CopiesAtOddSizesAndOffsets) {
  PI_SKIP_WITHOUT_OPENCL();
  auto ctx = opencl::Context::get();
  for (size_t n : {size_t{1}, size_t{3}, size_t{255}, size_t{256}, size_t{257}, size_t{100003}}) {
    std::vector<unsigned char> src(n + 13), back(n + 13, 0);
    std::iota(src.begin(), src.end(), static_cast<unsigned char>(n));
    char* dev = static_cast<char*>(ctx->allocate(n + 13));
    ctx->upload(src.data(), dev, n + 13);
    ctx->download(dev, back.data(), n + 13);
    EXPECT_EQ(back, src) << n;
    // A sub-range: bytes 5..5+n of the allocation, read into the start of `back`.
    std::vector<unsigned char> part(n);
    ctx->download(dev + 5, part.data(), n);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), src.begin() + 5)) << n;
    char* other = static_cast<char*>(ctx->allocate(n));
    ctx->copy(dev + 7, other, n);
    ctx->download(other, part.data(), n);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), src.begin() + 7)) << n;
    ctx->deallocate(other);
    ctx->deallocate(dev);
  }
}

// A tensor's address is a handle into a reserved range the host cannot touch: reading it
// instead of copying it faults at once (SIGSEGV) rather than returning garbage.
TEST(OpenClMemory, HostAccessToDeviceMemoryFaults) {
  PI_SKIP_WITHOUT_OPENCL();
  const Tensor t = Tensor::from_vector<float>({4}, {1, 2, 3, 4}).to(Device{DeviceKind::OpenCL, 0});
  EXPECT_DEATH(
      {
        volatile float v = *static_cast<const float*>(t.raw_data());
        (void)v;
      },
      "");
}

TEST(OpenClMemory, LargerThanTheDeviceAllowsIsOutOfMemory) {
  PI_SKIP_WITHOUT_OPENCL();
  auto ctx = opencl::Context::get();
  try {
    ctx->allocate(ctx->memory_stats().max_block_bytes + 4096);
    FAIL() << "an allocation above CL_DEVICE_MAX_MEM_ALLOC_SIZE was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos)
        << e.what();
  }
}

// Programs are built once per process: a second session of the same ops builds nothing, and
// every program built was either compiled (then written to the cache) or read from it.
TEST(OpenClPrograms, BuiltOncePerProcess) {
  PI_SKIP_WITHOUT_OPENCL();
  auto ctx = opencl::Context::get();
  const auto make = [] {
    test::OracleOp o("Add", 14);
    o.random({3, 5}).random({5});
    const std::string bytes = o.model();
    SessionOptions so;
    so.providers = {"opencl"};
    return Session::load_bytes(bytes.data(), bytes.size(), so);
  };
  Session first = make();
  const auto after_first = ctx->program_stats();
  EXPECT_GE(after_first.compiled + after_first.from_cache, 1u);
  Session second = make();
  const auto after_second = ctx->program_stats();
  EXPECT_EQ(after_second.compiled, after_first.compiled);
  EXPECT_EQ(after_second.from_cache, after_first.from_cache);
}

#endif  // POLYINFER_TEST_OPENCL

}  // namespace
}  // namespace polyinfer
