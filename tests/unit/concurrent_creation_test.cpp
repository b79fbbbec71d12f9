// Kernels created on several threads (runtime/partitioner.h): a session that runs on N threads
// creates its kernels on up to N when its providers allow it, with the same placement, outputs
// and first error as one thread would give, and weights shared by kernels on different threads
// freed only after their last reader.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "model_builder.h"
#include "polyinfer/session.h"
#include "runtime/provider.h"

namespace polyinfer {
namespace {

// Records which threads created its kernels; each creation takes a millisecond, so that a
// second thread surely gets some of a 40-node graph.
struct Creators {
  std::mutex mu;
  std::set<std::thread::id> ids;
  void add() {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return ids.size();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu);
    ids.clear();
  }
};
Creators& creators() {
  static Creators c;
  return c;
}

template <bool kConcurrent> class TimedProvider final : public RegistryProvider {
 public:
  std::string name() const override { return kConcurrent ? "timed-concurrent" : "timed-serial"; }
  Device device() const override { return Device::cpu(); }
  ProviderStatus probe() const override { return {true, ""}; }
  std::shared_ptr<Allocator> allocator() const override { return host_allocator(); }
  bool concurrent_kernel_creation() const override { return kConcurrent; }
};

class TimedNeg final : public Kernel {
 public:
  explicit TimedNeg(const KernelInfo&) { creators().add(); }
  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = -x.data<float>()[i];
  }
};

PI_REGISTER_KERNEL("timed-concurrent", "", Neg, 1, 99, TimedNeg);
PI_REGISTER_KERNEL("timed-serial", "", Neg, 1, 99, TimedNeg);
const bool registered =
    register_provider("timed-concurrent",
                      [] { return std::unique_ptr<Provider>(new TimedProvider<true>()); }) &&
    register_provider("timed-serial",
                      [] { return std::unique_ptr<Provider>(new TimedProvider<false>()); });

// x -> Neg x40 -> y; nodes named n0..n39, with the ops at `foreign` replaced by an op no
// provider has.
std::string neg_chain(std::set<int> foreign = {}) {
  test::ModelBuilder b;
  b.input("x", {4}).output("y", {4});
  for (int i = 0; i < 40; ++i)
    b.node(foreign.count(i) ? "NoSuchOp" : "Neg", {i == 0 ? "x" : "v" + std::to_string(i - 1)},
           {i == 39 ? "y" : "v" + std::to_string(i)}, "n" + std::to_string(i));
  return b.bytes();
}

Session load(const std::string& bytes, std::vector<std::string> providers, int threads,
             int level = 0) {
  SessionOptions o;
  o.providers = std::move(providers);
  o.threads = threads;
  o.optimization_level = level;
  return Session::load_bytes(bytes.data(), bytes.size(), o);
}

TEST(ConcurrentCreation, KernelsAreCreatedOnTheSessionsThreadsWhenTheProviderAllowsIt) {
  const std::string model = neg_chain();
  struct Case {
    std::string provider;
    int threads;
    size_t creators;
  };
  for (const Case& c : {Case{"timed-concurrent", 2, 2}, Case{"timed-concurrent", 1, 1},
                        Case{"timed-serial", 2, 1}}) {
    creators().clear();
    Session s = load(model, {c.provider}, c.threads);
    EXPECT_EQ(creators().count(), c.creators) << c.provider << " at " << c.threads << " threads";
    // An even number of negations: the input comes back, whichever thread made which kernel.
    auto out = s.run({{"x", Tensor::from_vector<float>({4}, {1, -2, 3, -4})}});
    EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{1, -2, 3, -4}));
    ASSERT_EQ(s.placement().nodes.size(), 40u);
    for (size_t i = 0; i < 40; ++i) EXPECT_EQ(s.placement().nodes[i].node, "n" + std::to_string(i));
  }
}

TEST(ConcurrentCreation, TheErrorReportedIsTheFirstFailingNodeInOrder) {
  // Several attempts, as which thread meets which node first varies between them.
  for (int attempt = 0; attempt < 10; ++attempt) {
    try {
      load(neg_chain({20, 21}), {"timed-concurrent"}, 2);
      FAIL() << "expected UnsupportedOp";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp);
      const std::string msg = e.what();
      EXPECT_NE(msg.find("NoSuchOp 'n20'"), std::string::npos) << msg;
    }
  }
}

// 24 convolutions on the CPU provider, some sharing a weight: the shared ones are prepacked by
// two kernels that may be created on different threads, and freed after the second. Outputs
// match the reference provider's.
TEST(ConcurrentCreation, ConvolutionsSharingWeightsMatchTheReference) {
  test::ModelBuilder b;
  b.input("x", {1, 8, 6, 6}).output("y", {1, 8, 6, 6});
  for (int i = 0; i < 24; ++i) {
    // Every third convolution reads the weight of the one before it.
    const int w = i % 3 == 2 ? i - 1 : i;
    if (w == i)
      b.initializer("w" + std::to_string(i), {8, 8, 3, 3},
                    test::random_values(8 * 8 * 9, 100 + i, -0.2f, 0.2f));
    b.node("Conv", {i == 0 ? "x" : "c" + std::to_string(i - 1), "w" + std::to_string(w)},
           {i == 23 ? "y" : "c" + std::to_string(i)}, "conv" + std::to_string(i));
    auto* attr = b.proto().mutable_graph()->mutable_node()->rbegin()->add_attribute();
    attr->set_name("pads");
    attr->set_type(onnx::AttributeProto::INTS);
    for (int k = 0; k < 4; ++k) attr->add_ints(1);
  }
  const std::string model = b.bytes();
  const Tensor x = Tensor::from_vector<float>({1, 8, 6, 6}, test::random_values(288, 7));
  const auto want = load(model, {"cpu-ref"}, 1).run({{"x", x}})[0].tensor().to_vector<float>();
  float scale = 0;
  for (float v : want) scale = std::max(scale, std::abs(v));
  ASSERT_GT(scale, 1e-3f) << "the chain must not fade to zero, or the check proves nothing";
  for (int level : {0, 3}) {
    Session s = load(model, {"cpu"}, 2, level);
    const auto got = s.run({{"x", x}})[0].tensor().to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4f * scale) << "element " << i << " at level " << level;
  }
}

}  // namespace
}  // namespace polyinfer
