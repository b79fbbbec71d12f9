// Vulkan device memory modes: the choice between mapped memory and device-local memory with
// staging copies (choose_memory, on the memory layouts of real device kinds written out by
// hand), and the copies themselves on the device here. The copy tests pass in either mode; in
// device mode (a discrete GPU, or POLYINFER_VULKAN_MEMORY=device, which ctest's
// unit_tests_vulkan_device_memory sets on llvmpipe) they also check that the staging path ran:
// chunks counted, flushes where a read-back needs them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <vector>

#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"
#include "vulkan_util.h"

#if POLYINFER_TEST_VULKAN

namespace polyinfer {
namespace {

const Device kVulkan{DeviceKind::Vulkan, 0};
constexpr VkMemoryPropertyFlags kLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kHost =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
constexpr VkDeviceSize kMiB = VkDeviceSize{1} << 20;

// Memory properties from (heap sizes) and (flags, heap) pairs.
VkPhysicalDeviceMemoryProperties layout(
    std::vector<VkDeviceSize> heaps,
    std::vector<std::pair<VkMemoryPropertyFlags, uint32_t>> types) {
  VkPhysicalDeviceMemoryProperties p{};
  p.memoryHeapCount = static_cast<uint32_t>(heaps.size());
  for (size_t i = 0; i < heaps.size(); ++i) p.memoryHeaps[i].size = heaps[i];
  p.memoryTypeCount = static_cast<uint32_t>(types.size());
  for (size_t i = 0; i < types.size(); ++i) p.memoryTypes[i] = {types[i].first, types[i].second};
  return p;
}

// llvmpipe: one heap, every type device-local and host-visible.
VkPhysicalDeviceMemoryProperties llvmpipe() {
  return layout({2048 * kMiB}, {{kLocal | kHost | kCached, 0}});
}
// A discrete GPU without resizable BAR (NVIDIA's and AMD's usual layout): 8 GiB of VRAM, system
// memory, and a 256 MiB host-visible window into VRAM.
VkPhysicalDeviceMemoryProperties discrete(bool rebar) {
  return layout({8192 * kMiB, 16384 * kMiB, 256 * kMiB},
                {{kLocal, 0}, {kHost, 1}, {kHost | kCached, 1}, {kLocal | kHost, rebar ? 0u : 2u}});
}

TEST(VulkanMemoryChoice, AutoTakesMappedWhereDeviceMemoryIsHostVisible) {
  const auto cpu = vulkan::choose_memory(llvmpipe(), VK_PHYSICAL_DEVICE_TYPE_CPU, nullptr);
  EXPECT_EQ(cpu.mode, vulkan::MemoryMode::Mapped);
  EXPECT_NE(cpu.why.find("unified memory"), std::string::npos) << cpu.why;
  const auto rebar =
      vulkan::choose_memory(discrete(true), VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, "auto");
  EXPECT_EQ(rebar.mode, vulkan::MemoryMode::Mapped);
  EXPECT_NE(rebar.why.find("resizable BAR"), std::string::npos) << rebar.why;
  // An integrated GPU: a device-local carve-out that is host-visible, and system memory.
  const auto igpu = vulkan::choose_memory(
      layout({512 * kMiB, 8192 * kMiB}, {{kLocal, 0}, {kLocal | kHost, 0}, {kHost | kCached, 1}}),
      VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, "");
  EXPECT_EQ(igpu.mode, vulkan::MemoryMode::Mapped);
  // No device-local memory at all: host memory is all there is.
  const auto none = vulkan::choose_memory(layout({4096 * kMiB}, {{kHost, 0}}),
                                          VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, nullptr);
  EXPECT_EQ(none.mode, vulkan::MemoryMode::Mapped);
  EXPECT_NE(none.why.find("no device-local memory"), std::string::npos) << none.why;
}

TEST(VulkanMemoryChoice, AutoTakesDeviceBehindASmallBar) {
  const auto c =
      vulkan::choose_memory(discrete(false), VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, nullptr);
  EXPECT_EQ(c.mode, vulkan::MemoryMode::Device);
  EXPECT_NE(c.why.find("only 256 MiB of its 8192 MiB"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("staging"), std::string::npos) << c.why;
}

TEST(VulkanMemoryChoice, TheVariableForcesEitherAndRejectsOtherValues) {
  const auto dev = vulkan::choose_memory(llvmpipe(), VK_PHYSICAL_DEVICE_TYPE_CPU, "device");
  EXPECT_EQ(dev.mode, vulkan::MemoryMode::Device);
  EXPECT_NE(dev.why.find("POLYINFER_VULKAN_MEMORY=device"), std::string::npos) << dev.why;
  const auto map =
      vulkan::choose_memory(discrete(false), VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, "mapped");
  EXPECT_EQ(map.mode, vulkan::MemoryMode::Mapped);
  try {
    vulkan::choose_memory(llvmpipe(), VK_PHYSICAL_DEVICE_TYPE_CPU, "vram");
    FAIL() << "an unknown value";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ProviderUnavailable);
    EXPECT_NE(std::string(e.what()).find("POLYINFER_VULKAN_MEMORY=vram is not one of auto, "
                                         "mapped, device"),
              std::string::npos)
        << e.what();
  }
  // Mapped where nothing can be mapped: refused, naming the variable.
  try {
    vulkan::choose_memory(layout({4096 * kMiB}, {{kLocal, 0}}),
                          VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, "mapped");
    FAIL() << "mapped without host-visible memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ProviderUnavailable);
    EXPECT_NE(std::string(e.what()).find("no host-visible coherent memory"), std::string::npos);
  }
}

bool device_mode() { return vulkan::Context::get()->memory_mode() == vulkan::MemoryMode::Device; }

// Lowers the staging chunk while in scope (like ScopedGroupLimit).
class ScopedStagingLimit {
 public:
  explicit ScopedStagingLimit(size_t bytes) {
    vulkan::Context::get()->limit_staging_for_testing(bytes);
  }
  ~ScopedStagingLimit() { vulkan::Context::get()->limit_staging_for_testing(0); }
  ScopedStagingLimit(const ScopedStagingLimit&) = delete;
  ScopedStagingLimit& operator=(const ScopedStagingLimit&) = delete;
};

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (auto& b : v) {
    s = s * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(s >> 24);
  }
  return v;
}

TEST(VulkanStaging, TheProviderSaysWhichMemoryModeAndWhy) {
  PI_SKIP_WITHOUT_VULKAN();
  const std::string d = create_provider("vulkan")->describe();
  EXPECT_NE(d.find(device_mode() ? "memory: device (" : "memory: mapped ("), std::string::npos)
      << d;
}

// A tensor many chunks long, with a chunk size that splits elements (copies are bytes): up and
// back bit-exact, in order.
TEST(VulkanStaging, LargeTensorsGoInSeveralChunks) {
  PI_SKIP_WITHOUT_VULKAN();
  auto ctx = vulkan::Context::get();
  ScopedStagingLimit limit(1000);
  std::vector<float> v(12345);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.25f - 100.0f;
  const auto before = ctx->copy_stats();
  const Tensor dev = Tensor::from_vector<float>({12345}, v).to(kVulkan);
  const auto up = ctx->copy_stats();
  EXPECT_EQ(dev.to_vector<float>(), v);
  const auto down = ctx->copy_stats();
  if (!device_mode()) GTEST_SKIP() << "mapped memory: copies are memcpy (values checked)";
  const size_t chunks = (v.size() * 4 + 999) / 1000;  // 50
  EXPECT_EQ(up.staged_chunks - before.staged_chunks, chunks);
  // The read-back starts behind the last upload's chunk in the staging buffer: one more chunk
  // at most.
  EXPECT_GE(down.staged_chunks - up.staged_chunks, chunks);
  EXPECT_LE(down.staged_chunks - up.staged_chunks, chunks + 1);
  // Each read-back chunk waits for its copy; uploads wait only when the staging is full.
  EXPECT_GE(down.staging_flushes - up.staging_flushes, chunks);
  EXPECT_GE(up.staging_flushes - before.staging_flushes, chunks - 1);
  EXPECT_EQ(down.staging_bytes, size_t{16} << 20);
}

// Sizes around the chunk and alignment steps, bytes of several dtypes, and the default chunk.
TEST(VulkanStaging, OddSizesRoundTrip) {
  PI_SKIP_WITHOUT_VULKAN();
  for (size_t limit : {size_t{0}, size_t{256}, size_t{257}, size_t{4096}}) {
    ScopedStagingLimit l(limit);
    for (size_t n : {1, 3, 255, 256, 257, 4095, 4097, 70001}) {
      const std::vector<uint8_t> bytes = pattern(n, static_cast<uint32_t>(n + limit));
      const Tensor host =
          Tensor::from_host(DType::UInt8, {static_cast<int64_t>(n)}, bytes.data(), n);
      const Tensor back = host.to(kVulkan).to(Device::cpu());
      ASSERT_EQ(back.nbytes(), n);
      EXPECT_EQ(std::memcmp(back.raw_data(), bytes.data(), n), 0)
          << n << " bytes, staging chunk " << limit;
    }
  }
  const Tensor i64 = Tensor::from_vector<int64_t>({5}, {1, -2, 3, INT64_MIN, INT64_MAX});
  EXPECT_EQ(i64.to(kVulkan).to_vector<int64_t>(), i64.to_vector<int64_t>());
}

// Several uploads recorded back to back (no read-back between them) share the staging buffer;
// the last one fills it and waits for the earlier copies before reusing it.
TEST(VulkanStaging, UploadsQueueUpUntilTheStagingIsFull) {
  PI_SKIP_WITHOUT_VULKAN();
  auto ctx = vulkan::Context::get();
  ScopedStagingLimit limit(4096);
  std::vector<Tensor> dev;
  std::vector<std::vector<uint8_t>> want;
  const auto before = ctx->copy_stats();
  for (uint32_t i = 0; i < 20; ++i) {
    want.push_back(pattern(700 + 13 * i, i));
    dev.push_back(Tensor::from_host(DType::UInt8, {static_cast<int64_t>(want.back().size())},
                                    want.back().data(), want.back().size())
                      .to(kVulkan));
  }
  const auto after = ctx->copy_stats();
  for (size_t i = 0; i < dev.size(); ++i) {
    const Tensor back = dev[i].to(Device::cpu());
    EXPECT_EQ(std::memcmp(back.raw_data(), want[i].data(), want[i].size()), 0) << "tensor " << i;
  }
  if (!device_mode()) GTEST_SKIP() << "mapped memory: copies are memcpy (values checked)";
  // About 20 * 830 bytes through 4096 bytes of staging (256-byte steps): a handful of waits, not
  // one per tensor.
  EXPECT_GE(after.staging_flushes - before.staging_flushes, 3u);
  EXPECT_LE(after.staging_flushes - before.staging_flushes, 8u);
}

// Copies to and from ranges inside one allocation (as the session's arena hands them out): the
// neighbours stay as they were, in both directions.
TEST(VulkanStaging, RangesAtOffsetsInsideAnAllocation) {
  PI_SKIP_WITHOUT_VULKAN();
  auto ctx = vulkan::Context::get();
  ScopedStagingLimit limit(300);
  const size_t n = 5000;
  char* base = static_cast<char*>(ctx->allocate(n));
  const std::vector<uint8_t> all = pattern(n, 7);
  ctx->upload(all.data(), base, n);
  const std::vector<uint8_t> mid = pattern(1234, 8);
  ctx->upload(mid.data(), base + 1001, mid.size());  // odd offset, several chunks
  std::vector<uint8_t> want = all;
  std::copy(mid.begin(), mid.end(), want.begin() + 1001);
  std::vector<uint8_t> got(n);
  ctx->download(base, got.data(), n);
  EXPECT_EQ(got, want);
  std::vector<uint8_t> part(777);
  ctx->download(base + 999, part.data(), part.size());
  EXPECT_TRUE(std::equal(part.begin(), part.end(), want.begin() + 999));
  // A pointer outside device memory is an error, not a host copy.
  EXPECT_THROW(ctx->upload(all.data(), got.data(), 4), Error);
  ctx->deallocate(base);
}

// clone() of a device tensor copies on the device (no trip through the host) and the copy is
// independent of the original.
TEST(VulkanStaging, DeviceToDeviceCopies) {
  PI_SKIP_WITHOUT_VULKAN();
  auto ctx = vulkan::Context::get();
  std::vector<float> v(3001);
  std::iota(v.begin(), v.end(), -1500.0f);
  const Tensor a = Tensor::from_vector<float>({3001}, v).to(kVulkan);
  const auto before = ctx->copy_stats();
  const Tensor b = a.clone();
  const auto after = ctx->copy_stats();
  EXPECT_EQ(b.device(), kVulkan);
  EXPECT_NE(b.raw_data(), a.raw_data());
  EXPECT_EQ(after.device_copies - before.device_copies, 1u);
  EXPECT_EQ(after.staged_chunks, before.staged_chunks) << "clone went through the staging buffer";
  // Overwrite the original through an upload: the clone keeps the old values.
  std::vector<float> w(v.size(), 2.5f);
  ctx->upload(w.data(), const_cast<void*>(a.raw_data()), w.size() * sizeof(float));
  EXPECT_EQ(b.to_vector<float>(), v);
  EXPECT_EQ(a.to_vector<float>(), w);
  // A clone of a clone, recorded behind the first without a wait in between.
  const Tensor c = b.clone().clone();
  EXPECT_EQ(c.to_vector<float>(), v);
}

// A run whose kernels read run-time inputs back on the host (Gather's indices, Slice's starts
// and ends) between recorded work and uploads, with a small staging chunk so that copies cross
// chunks mid-run; against cpu-ref.
TEST(VulkanStaging, ReadBacksMidRunAgreeWithCpu) {
  PI_SKIP_WITHOUT_VULKAN();
  ScopedStagingLimit limit(512);
  test::ModelBuilder b(17);
  b.input("x", {6, 50}).input("idx", {7}, 7).input("starts", {2}, 7).input("ends", {2}, 7);
  b.output("y", {});
  // Rows and columns change from run to run: no declared shape.
  b.proto()
      .mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->clear_shape();
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Gather", {"r", "idx"}, {"g"}, "gather");
  auto* g = b.proto().mutable_graph()->mutable_node(1)->add_attribute();
  g->set_name("axis");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(1);
  b.node("Slice", {"g", "starts", "ends"}, {"s"}, "slice");
  b.node("Mul", {"s", "s"}, {"m"}, "mul");
  b.node("Sub", {"m", "s"}, {"y"}, "sub");
  // The intermediates' dtypes, which the Vulkan kernels need at creation (float32 only).
  for (const char* v : {"r", "g", "s", "m"}) {
    auto* vi = b.proto().mutable_graph()->add_value_info();
    vi->set_name(v);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  }
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.optimization_level = 0;
  o.providers = {"vulkan"};
  Session vk = Session::load_bytes(bytes.data(), bytes.size(), o);
  o.providers = {"cpu-ref"};
  Session ref = Session::load_bytes(bytes.data(), bytes.size(), o);
  for (int run = 0; run < 3; ++run) {
    std::map<std::string, Value> feeds;
    feeds["x"] = Value(test::random_tensor({6, 50}, 11 + run));
    feeds["idx"] = Value(Tensor::from_vector<int64_t>({7}, {0, 49, -1, 3 + run, 17, -50, 25}));
    feeds["starts"] = Value(Tensor::from_vector<int64_t>({2}, {1, run}));
    feeds["ends"] = Value(Tensor::from_vector<int64_t>({2}, {6 - run, 7}));
    const Tensor got = vk.run(feeds)[0].tensor();
    const Tensor want = ref.run(feeds)[0].tensor();
    ASSERT_EQ(got.shape(), want.shape()) << "run " << run;
    const std::vector<float> gv = got.to_vector<float>(), wv = want.to_vector<float>();
    for (size_t i = 0; i < wv.size(); ++i)
      EXPECT_NEAR(gv[i], wv[i], 1e-5 + 1e-5 * std::abs(wv[i])) << "run " << run << " [" << i << "]";
  }
  for (const auto& n : vk.placement().nodes) EXPECT_EQ(n.provider, "vulkan") << n.node;
}

// Device mode: tensors' addresses are reserved host address space that the host cannot touch,
// so a host read of device memory (a missed copy) faults at once instead of reading garbage.
TEST(VulkanStagingDeathTest, AHostReadOfDeviceMemoryFaults) {
  PI_SKIP_WITHOUT_VULKAN();
  if (!device_mode()) GTEST_SKIP() << "mapped memory: the host may read it";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Tensor t = Tensor::from_vector<float>({4}, {1, 2, 3, 4}).to(kVulkan);
  EXPECT_DEATH(
      {
        const volatile float* p = static_cast<const volatile float*>(t.raw_data());
        std::printf("%f\n", static_cast<double>(p[0]));
      },
      "");
}

}  // namespace
}  // namespace polyinfer

#endif  // POLYINFER_TEST_VULKAN
