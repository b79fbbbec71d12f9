// Session::run() waits for providers that queue work (Provider::synchronize) before it returns,
// and profiling waits after each of their kernels, so times are the work and not its queueing.
// A test provider counts the calls.
#include <gtest/gtest.h>

#include <atomic>

#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"
#include "runtime/provider.h"

namespace polyinfer {
namespace {

std::atomic<int> g_syncs{0};

// Relu on the host, in a provider that says it queues work.
class ReluKernel final : public Kernel {
 public:
  explicit ReluKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    const float* a = x.data<float>();
    float* b = y.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) b[i] = a[i] < 0 ? 0 : a[i];
  }
};
PI_REGISTER_KERNEL("test-queued", "", Relu, 6, 23, ReluKernel);

class QueuedProvider final : public RegistryProvider {
 public:
  std::string name() const override { return "test-queued"; }
  Device device() const override { return Device::cpu(); }
  ProviderStatus probe() const override { return {true, ""}; }
  std::shared_ptr<Allocator> allocator() const override { return host_allocator(); }
  void synchronize() const override { ++g_syncs; }
};
const bool registered = register_provider(
    "test-queued", [] { return std::unique_ptr<Provider>(new QueuedProvider()); });

TEST(SessionSync, RunWaitsForQueuedProvidersAndProfilingPerKernel) {
  test::ModelBuilder b(17);
  b.input("x", {2, 3}).output("y", {2, 3});
  b.node("Relu", {"x"}, {"r"}, "r1").node("Relu", {"r"}, {"y"}, "r2");
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.providers = {"test-queued"};
  o.optimization_level = 0;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  g_syncs = 0;
  s.run({{"x", test::random_tensor({2, 3})}});
  EXPECT_EQ(g_syncs, 1) << "one wait at the end of a run";
  o.profile = true;
  Session profiled = Session::load_bytes(bytes.data(), bytes.size(), o);
  g_syncs = 0;
  profiled.run({{"x", test::random_tensor({2, 3})}});
  EXPECT_EQ(g_syncs, 3) << "profiling: one wait per kernel, then the run's";
}

}  // namespace
}  // namespace polyinfer
