// The device providers (vulkan, opencl) as a whole: their listing, Tensor::to() to and from the
// device, device:N names, placement with fallback to cpu (and strict failure without it), and
// long chains recorded (Vulkan: into one command buffer) across runs.
#include <gtest/gtest.h>

#include <cmath>

#include "device_util.h"
#include "hw/report.h"
#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

Session load(const test::ModelBuilder& b, std::vector<std::string> providers) {
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.providers = std::move(providers);
  o.optimization_level = 0;
  return Session::load_bytes(bytes.data(), bytes.size(), o);
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::abs(want[i])) << "element " << i;
}

class DeviceProvider : public test::DeviceTest {
 protected:
  // The device the plain name chooses.
  Device device() const { return create_provider(provider())->device(); }
  DeviceKind kind() const {
    return provider() == "vulkan" ? DeviceKind::Vulkan : DeviceKind::OpenCL;
  }
  Device dev0() const { return {kind(), 0}; }
  // The devices the provider's stack lists (device:N counts in this order).
  size_t device_count() const {
    return provider() == "vulkan" ? hw::probe_vulkan(hw::system_loader()).devices.size()
                                  : hw::probe_opencl(hw::system_loader()).devices.size();
  }
};

TEST_P(DeviceProvider, ListedWithItsDevice) {
  auto p = create_provider(provider());
  EXPECT_EQ(p->device().kind, kind());
  EXPECT_NE(p->describe(), "");
  if (provider() == "opencl") {
    // Every kernel the Vulkan provider has, as the same ops (the list below).
    std::vector<std::string> vk, cl;
    for (const KernelDef* k : create_provider("vulkan")->kernels())
      vk.push_back(k->domain + "." + k->op_type + " " + std::to_string(k->since));
    for (const KernelDef* k : p->kernels())
      cl.push_back(k->domain + "." + k->op_type + " " + std::to_string(k->since));
    std::sort(vk.begin(), vk.end());
    std::sort(cl.begin(), cl.end());
    EXPECT_EQ(cl, vk);
    return;
  }
  // Element-wise 43 (with both Gelus and Pow), MatMul/Gemm/FusedGemm/FusedMatMul, Conv/FusedConv,
  // ConvTranspose, Softmax/LogSoftmax, 4 poolings, Transpose/Concat, 5 views, 2
  // LayerNormalizations, BatchNormalization, 10 reductions, Slice, Split, Expand/Tile, Where,
  // Gather, Pad, InstanceNormalization, Resize, Cast; 9 comparisons and logic (Equal, Less,
  // LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not) and 4 computed on the host (Shape,
  // Size, ConstantOfShape, Range).
  EXPECT_EQ(p->kernels().size(), 99u);
}

TEST(DeviceProviders, ProbeAgreesWithDoctorWhenUnusable) {
  for (const std::string name : {"vulkan", "opencl"}) {
    const auto names = provider_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    const ProviderStatus st = create_provider(name)->probe();
    EXPECT_EQ(st.usable, st.reason.empty()) << name << ": " << st.reason;
  }
}

TEST_P(DeviceProvider, TensorRoundTrip) {
  std::vector<float> v(1031);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f - 7.0f;
  const Tensor host = Tensor::from_vector<float>({1031}, v);
  const Tensor dev = host.to(dev0());
  EXPECT_EQ(dev.device(), dev0());
  EXPECT_EQ(dev.to_vector<float>(), v);
  EXPECT_EQ(dev.reshaped({1, 1031}).to(Device::cpu()).to_vector<float>(), v);
  const Tensor copy = dev.clone();
  EXPECT_EQ(copy.device(), dev0());
  EXPECT_EQ(copy.to_vector<float>(), v);
  const Tensor i64 = Tensor::from_vector<int64_t>({3}, {1, -2, 3}).to(dev0());
  EXPECT_EQ(i64.to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3}));
}

// x -> Relu -> Hardmax -> Neg: Hardmax has no kernel on the device providers.
test::ModelBuilder relu_hardmax_neg() {
  test::ModelBuilder b(17);
  b.input("x", {4, 37}).output("y", {4, 37});
  b.node("Relu", {"x"}, {"r"}, "relu").node("Hardmax", {"r"}, {"s"}, "hardmax");
  b.node("Neg", {"s"}, {"y"}, "neg");
  return b;
}

// "vulkan:N" (opencl:N) names device N of the enumeration; device 0 here is the one the plain name
// chooses when it is the only one (llvmpipe and PoCL in CI), so both give the same results.
TEST_P(DeviceProvider, IndexedNameRunsLikeThePlainOne) {
  if (create_provider(provider())->device() != dev0())
    GTEST_SKIP() << "the automatic choice here is not device 0";
  auto p = create_provider(provider() + ":0");
  EXPECT_EQ(p->name(), provider() + ":0");
  EXPECT_EQ(p->device(), dev0());
  EXPECT_TRUE(p->probe().usable) << p->probe().reason;
  EXPECT_EQ(p->kernels().size(), create_provider(provider())->kernels().size());
  test::ModelBuilder b(17);
  b.input("x", {5, 7}).output("y", {5, 7});
  b.node("Relu", {"x"}, {"r"}, "relu").node("Neg", {"r"}, {"y"}, "neg");
  Session indexed = load(b, {provider() + ":0"});
  Session plain = load(b, {provider()});
  ASSERT_EQ(indexed.placement().providers.size(), 1u);
  EXPECT_EQ(indexed.placement().providers[0].provider, provider() + ":0");
  EXPECT_EQ(indexed.placement().providers[0].nodes, 2);
  const Tensor x = test::random_tensor({5, 7});
  const Tensor got = indexed.run({{"x", Value(x)}})[0].tensor();
  EXPECT_EQ(got.device(), dev0());
  EXPECT_EQ(got.to_vector<float>(), plain.run({{"x", Value(x)}})[0].tensor().to_vector<float>());
}

TEST_P(DeviceProvider, IndexOutOfRangeListsTheDevices) {
  try {
    create_provider(provider() + ":5");
    FAIL() << "vulkan:5 was created";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find(provider() + ":5 names no device"), std::string::npos) << what;
    EXPECT_NE(what.find(provider() + ":0 "), std::string::npos) << what;
  }
  // The same through a session's provider list and through Tensor::to (the device starter).
  try {
    load(relu_hardmax_neg(), {provider() + ":5", "cpu"});
    FAIL() << "a session on vulkan:5 loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(provider() + ":0 "), std::string::npos) << e.what();
  }
  try {
    Tensor::from_vector<float>({2}, {1, 2}).to(Device{kind(), 5});
    FAIL() << "a tensor went to vulkan:5";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ProviderUnavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find(provider() + ":0 "), std::string::npos) << e.what();
  }
}

TEST(DeviceProviders, ProviderNamesWithAnIndex) {
  EXPECT_EQ(parse_provider_name("vulkan:12").base, "vulkan");
  EXPECT_EQ(parse_provider_name("vulkan:12").index, 12);
  EXPECT_EQ(parse_provider_name("cpu-ref").index, -1);
  for (const char* bad : {"vulkan:", "vulkan:x", "vulkan:-1", "vulkan: 1", "vulkan:99999"})
    EXPECT_THROW(parse_provider_name(bad), Error) << bad;
  try {
    create_provider("cpu:0");
    FAIL() << "cpu:0 was created";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("takes no index"), std::string::npos) << e.what();
  }
}

TEST_P(DeviceProvider, PlainAndIndexedNamesOfOneDeviceAreListedOnce) {
  const std::string plain = create_provider(provider())->device().str();
  try {
    load(relu_hardmax_neg(), {provider(), plain, "cpu"});
    FAIL() << provider() + " and " << plain << " both listed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("same device"), std::string::npos) << e.what();
  }
}

// One device per process: with two devices, the one not in use is refused with both named.
TEST_P(DeviceProvider, ASecondDeviceIsRefusedNamingBoth) {
  const Device used = create_provider(provider())->device();
  if (device_count() < 2) GTEST_SKIP() << "one " << provider() << " device here";
  const int other = used.index == 0 ? 1 : 0;
  const ProviderStatus st = create_provider(provider() + ":" + std::to_string(other))->probe();
  EXPECT_FALSE(st.usable);
  EXPECT_NE(st.reason.find(used.str()), std::string::npos) << st.reason;
  EXPECT_NE(st.reason.find(provider() + ":" + std::to_string(other)), std::string::npos)
      << st.reason;
}

TEST_P(DeviceProvider, FallsBackToCpuWithAReport) {
  const Tensor x = test::random_tensor({4, 37});
  Session vk = load(relu_hardmax_neg(), {provider(), "cpu"});
  Session cpu = load(relu_hardmax_neg(), {"cpu"});
  const Placement& pl = vk.placement();
  ASSERT_EQ(pl.nodes.size(), 3u);
  EXPECT_EQ(pl.nodes[0].provider, provider());
  EXPECT_EQ(pl.nodes[1].provider, "cpu");
  EXPECT_EQ(pl.nodes[2].provider, provider());
  ASSERT_EQ(pl.fallbacks.size(), 1u);
  EXPECT_EQ(pl.fallbacks[0].op, "Hardmax");
  EXPECT_NE(pl.fallbacks[0].reason.find(provider()), std::string::npos) << pl.fallbacks[0].reason;
  for (int run = 0; run < 3; ++run) {
    const std::vector<Value> got = vk.run({{"x", Value(x)}});
    const std::vector<Value> want = cpu.run({{"x", Value(x)}});
    expect_near(got[0].tensor().to_vector<float>(), want[0].tensor().to_vector<float>());
  }
  EXPECT_EQ(vk.placement().device_copies, 3);  // x in, hardmax's input out and its output back
}

TEST_P(DeviceProvider, StrictListFailsWithTheReason) {
  try {
    load(relu_hardmax_neg(), {provider()});
    FAIL() << "a model with Hardmax loaded on vulkan alone";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp) << e.what();
    EXPECT_NE(std::string(e.what()).find("Hardmax"), std::string::npos) << e.what();
  }
}

TEST_P(DeviceProvider, RefusesOtherDtypesAndRanks) {
  test::ModelBuilder b(17);
  b.input("a", {2, 3}, onnx::TensorProto::INT64).input("b", {2, 3}, onnx::TensorProto::INT64);
  b.input("c", {1, 1, 1, 1, 1, 1, 2}).input("d", {1, 1, 1, 1, 1, 1, 2});
  b.output("s", {2, 3}, onnx::TensorProto::INT64).output("t", {1, 1, 1, 1, 1, 1, 2});
  b.node("Add", {"a", "b"}, {"s"}, "add_int").node("Add", {"c", "d"}, {"t"}, "add_rank7");
  Session s = load(b, {provider(), "cpu"});
  ASSERT_EQ(s.placement().fallbacks.size(), 2u);
  EXPECT_NE(s.placement().fallbacks[0].reason.find("dtype int64"), std::string::npos)
      << s.placement().fallbacks[0].reason;
  EXPECT_NE(s.placement().fallbacks[1].reason.find("rank 7"), std::string::npos)
      << s.placement().fallbacks[1].reason;
}

TEST_P(DeviceProvider, LongChainAcrossRuns) {
  // More dispatches than one descriptor pool holds (the context flushes and recycles it), and a
  // weight (an initializer) that 550 kernels each upload at creation.
  constexpr int kNodes = 1100;
  test::ModelBuilder b(17);
  b.input("x", {3, 33}).output("y", {3, 33});
  std::vector<float> w(33);
  for (int i = 0; i < 33; ++i) w[i] = 0.001f * static_cast<float>(i);
  b.initializer("w", {33}, w);
  std::string prev = "x";
  for (int i = 0; i < kNodes; ++i) {
    const std::string out = i + 1 == kNodes ? "y" : "v" + std::to_string(i);
    if (i % 2 == 0) b.node("Neg", {prev}, {out});
    else
      b.node("Add", {prev, "w"}, {out});
    prev = out;
  }
  Session vk = load(b, {provider()});
  Session cpu = load(b, {"cpu-ref"});
  EXPECT_EQ(vk.placement().providers.size(), 1u);
  for (int run = 0; run < 2; ++run) {
    const Tensor x = test::random_tensor({3, 33}, 5 + run);
    const std::vector<Value> got = vk.run({{"x", Value(x)}});
    const std::vector<Value> want = cpu.run({{"x", Value(x)}});
    EXPECT_EQ(got[0].tensor().device(), dev0());
    expect_near(got[0].tensor().to_vector<float>(), want[0].tensor().to_vector<float>());
  }
}

TEST_P(DeviceProvider, WeightsGoToTheDeviceOnceAtLoad) {
  // Gemm's B and C and Add's operand are initializers: uploaded when the kernels are created and
  // reported prepacked, so a run copies only x to the device. Without that, each run would copy
  // all three (device_copies 4).
  test::ModelBuilder b(17);
  b.input("x", {3, 8}).output("y", {3, 5});
  std::vector<float> w(40), c(5), d(15);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  for (size_t i = 0; i < c.size(); ++i) c[i] = 0.5f - 0.2f * static_cast<float>(i);
  for (size_t i = 0; i < d.size(); ++i) d[i] = 0.01f * static_cast<float>(i);
  b.initializer("w", {8, 5}, w).initializer("c", {5}, c).initializer("d", {3, 5}, d);
  b.node("Gemm", {"x", "w", "c"}, {"g"}, "gemm").node("Add", {"g", "d"}, {"y"}, "add");
  Session vk = load(b, {provider()});
  Session cpu = load(b, {"cpu-ref"});
  for (int run = 0; run < 3; ++run) {
    const Tensor x = test::random_tensor({3, 8}, 9 + run);
    const std::vector<Value> got = vk.run({{"x", Value(x)}});
    const std::vector<Value> want = cpu.run({{"x", Value(x)}});
    expect_near(got[0].tensor().to_vector<float>(), want[0].tensor().to_vector<float>());
  }
  EXPECT_EQ(vk.placement().device_copies, 1);
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceProvider);

}  // namespace
}  // namespace polyinfer
