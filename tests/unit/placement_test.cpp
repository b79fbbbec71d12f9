// Placement rules 2-5 of docs/design.md, checked with a fake second provider that runs only Neg
// on a device of its own, and a provider that is never usable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "core/device_registry.h"
#include "model_builder.h"
#include "polyinfer/session.h"
#include "runtime/provider.h"

namespace polyinfer {
namespace {

const Device kFakeDevice{DeviceKind::Custom, 7};

class FakeAllocator final : public Allocator {
 public:
  Device device() const override { return kFakeDevice; }
  void* allocate(size_t bytes) override { return std::malloc(bytes ? bytes : 1); }
  void deallocate(void* p, size_t) override { std::free(p); }
};

void copy_bytes(const void* src, void* dst, size_t n) { std::memcpy(dst, src, n); }

class FakeProvider final : public RegistryProvider {
 public:
  std::string name() const override { return "fake"; }
  Device device() const override { return kFakeDevice; }
  ProviderStatus probe() const override { return {true, ""}; }
  std::shared_ptr<Allocator> allocator() const override { return alloc_; }

 private:
  std::shared_ptr<Allocator> alloc_ = std::make_shared<FakeAllocator>();
};

class BrokenProvider final : public RegistryProvider {
 public:
  std::string name() const override { return "broken"; }
  Device device() const override { return {DeviceKind::Custom, 8}; }
  ProviderStatus probe() const override { return {false, "no broken device on this machine"}; }
  std::shared_ptr<Allocator> allocator() const override { return host_allocator(); }
};

class FakeNeg final : public Kernel {
 public:
  explicit FakeNeg(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    // The executor must have copied the input onto this provider's device.
    PI_CHECK(x.device() == kFakeDevice, Internal, "FakeNeg got an input on ", x.device().str());
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = -x.data<float>()[i];
  }
};

// y = sign(x); its impl says whether the session let its float32 products use TF32
// (SessionOptions::allow_tf32 reaches kernels through KernelInfo::allow_tf32).
class FakeSign final : public Kernel {
 public:
  explicit FakeSign(const KernelInfo& info) : tf32_(info.allow_tf32()) {}
  std::string impl() const override { return tf32_ ? "fake+tf32" : "fake"; }
  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    for (int64_t i = 0; i < x.numel(); ++i)
      y.data<float>()[i] = float((x.data<float>()[i] > 0) - (x.data<float>()[i] < 0));
  }

 private:
  bool tf32_;
};

PI_REGISTER_KERNEL("fake", "", Neg, 1, 99, FakeNeg);
PI_REGISTER_KERNEL("fake", "", Sign, 1, 99, FakeSign);
const bool fake_registered = register_provider("fake", [] {
  register_device(kFakeDevice, {std::make_shared<FakeAllocator>(), &copy_bytes, &copy_bytes});
  return std::unique_ptr<Provider>(new FakeProvider());
});
const bool broken_registered =
    register_provider("broken", [] { return std::unique_ptr<Provider>(new BrokenProvider()); });

std::string neg_abs_neg() {
  return test::ModelBuilder()
      .input("x", {2})
      .output("y", {2})
      .node("Neg", {"x"}, {"a"}, "neg1")
      .node("Abs", {"a"}, {"b"}, "abs")
      .node("Neg", {"b"}, {"y"}, "neg2")
      .bytes();
}

Session load(const std::string& bytes, std::vector<std::string> providers,
             bool allow_missing = false) {
  SessionOptions o;
  o.providers = std::move(providers);
  o.allow_missing = allow_missing;
  o.optimization_level = 0;  // no pass may touch these models
  return Session::load_bytes(bytes.data(), bytes.size(), o);
}

TEST(Placement, NodesGoToTheFirstProviderThatCanRunThemAndFallbacksAreReported) {
  Session s = load(neg_abs_neg(), {"fake", "cpu"});
  auto out = s.run({{"x", Tensor::from_vector<float>({2}, {1.5f, -2})}});
  EXPECT_EQ(out[0].tensor().device(), kFakeDevice);
  // -|-x| = -|x|
  EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{-1.5f, -2}));

  const Placement& p = s.placement();
  ASSERT_EQ(p.providers.size(), 2u);
  EXPECT_EQ(p.providers[0].provider, "fake");
  EXPECT_EQ(p.providers[0].nodes, 2);
  EXPECT_EQ(p.providers[1].provider, "cpu");
  EXPECT_EQ(p.providers[1].nodes, 1);
  ASSERT_EQ(p.fallbacks.size(), 1u);
  EXPECT_EQ(p.fallbacks[0].node, "abs");
  EXPECT_EQ(p.fallbacks[0].provider, "cpu");
  EXPECT_NE(p.fallbacks[0].reason.find("no fake kernel for Abs"), std::string::npos);
  // x: host → fake; a: fake → host (Abs on cpu); b: host → fake.
  EXPECT_EQ(p.device_copies, 3);
  EXPECT_NE(p.summary().find("fake 2/3 nodes (67% of FLOPs)"), std::string::npos) << p.summary();
  EXPECT_EQ(p.flops_basis, "static shapes");
  EXPECT_NEAR(p.providers[0].flops_share, 2.0 / 3.0, 1e-9);
  EXPECT_NE(p.summary().find("1 fell back"), std::string::npos) << p.summary();
}

TEST(Placement, AllowTf32ReachesTheKernels) {
  const std::string m = test::ModelBuilder()
                            .input("x", {3})
                            .output("y", {3})
                            .node("Sign", {"x"}, {"y"}, "sign")
                            .bytes();
  for (bool tf32 : {false, true}) {
    SessionOptions o;
    o.providers = {"fake"};
    o.optimization_level = 0;
    o.allow_tf32 = tf32;
    Session s = Session::load_bytes(m.data(), m.size(), o);
    ASSERT_EQ(s.placement().nodes.size(), 1u);
    EXPECT_EQ(s.placement().nodes[0].impl, tf32 ? "fake+tf32" : "fake");
    const auto y = s.run({{"x", Tensor::from_vector<float>({3}, {-2, 0, 5})}});
    EXPECT_EQ(y[0].tensor().to(Device::cpu()).to_vector<float>(), (std::vector<float>{-1, 0, 1}));
  }
}

TEST(Placement, DynamicShapesGetTheirFlopSharesFromTheFirstRun) {
  const std::string m = test::ModelBuilder()
                            .input("x", {-1})
                            .output("y", {-1})
                            .node("Neg", {"x"}, {"a"}, "neg1")
                            .node("Abs", {"a"}, {"b"}, "abs")
                            .node("Neg", {"b"}, {"y"}, "neg2")
                            .bytes();
  Session s = load(m, {"fake", "cpu"});
  EXPECT_EQ(s.placement().flops_basis, "");
  EXPECT_NE(s.placement().summary().find("FLOP shares known after the first run"),
            std::string::npos);
  s.run({{"x", Tensor::from_vector<float>({4}, {1, 2, 3, 4})}});
  EXPECT_EQ(s.placement().flops_basis, "first run");
  EXPECT_NEAR(s.placement().providers[0].flops_share, 2.0 / 3.0, 1e-9);
}

TEST(Placement, ANodeNoListedProviderSupportsIsAnErrorThatSuggestsCpu) {
  try {
    load(neg_abs_neg(), {"fake"});
    FAIL() << "expected UnsupportedOp";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Abs 'abs'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("fake: no fake kernel for Abs"), std::string::npos) << msg;
    EXPECT_NE(msg.find("add cpu"), std::string::npos) << msg;
  }
}

TEST(Placement, AnUnusableProviderIsAnErrorUnlessMissingOnesAreAllowed) {
  try {
    load(neg_abs_neg(), {"broken", "cpu"});
    FAIL() << "expected ProviderUnavailable";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ProviderUnavailable);
    EXPECT_NE(std::string(e.what()).find("no broken device on this machine"), std::string::npos);
  }
  Session s = load(neg_abs_neg(), {"broken", "fake", "cpu"}, /*allow_missing=*/true);
  ASSERT_EQ(s.placement().skipped.size(), 1u);
  EXPECT_EQ(s.placement().skipped[0].provider, "broken");
  EXPECT_NE(s.placement().summary().find("skipped broken"), std::string::npos);
}

TEST(Placement, UnknownProviderNamesTheBuiltInOnes) {
  try {
    load(neg_abs_neg(), {"tpu"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos);
  }
}

}  // namespace
}  // namespace polyinfer
