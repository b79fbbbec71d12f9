// Runs of one session from many threads at once (runtime/executor.h): on CPU providers they
// overlap on different nodes, a kernel never serves two runs at once, every run's outputs are
// those of a run alone, and the memory pool's arena serves one run while the others take the
// caching pool.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "model_builder.h"
#include "polyinfer/io.h"
#include "polyinfer/session.h"
#include "runtime/memory_pool.h"
#include "runtime/provider.h"

namespace polyinfer {
namespace {

// How many runs are inside any Probe kernel now, and the most seen at once.
std::atomic<int> g_inside{0}, g_most_inside{0};
// The most runs seen inside one Probe kernel at once (must stay 1).
std::atomic<int> g_most_in_one{0};

class ProbeProvider final : public RegistryProvider {
 public:
  std::string name() const override { return "probe"; }
  Device device() const override { return Device::cpu(); }
  ProviderStatus probe() const override { return {true, ""}; }
  std::shared_ptr<Allocator> allocator() const override { return host_allocator(); }
};

// y = -x, after 2 ms inside the kernel, counting who else is inside.
class ProbeNeg final : public Kernel {
 public:
  explicit ProbeNeg(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    const int mine = ++in_this_;
    g_most_in_one.store(std::max(g_most_in_one.load(), mine));
    const int all = ++g_inside;
    g_most_inside.store(std::max(g_most_inside.load(), all));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = -x.data<float>()[i];
    --g_inside;
    --in_this_;
  }

 private:
  std::atomic<int> in_this_{0};
};

PI_REGISTER_KERNEL("probe", "", Neg, 1, 99, ProbeNeg);
const bool registered =
    register_provider("probe", [] { return std::unique_ptr<Provider>(new ProbeProvider()); });

TEST(ConcurrentRuns, RunsOverlapOnDifferentNodesAndNeverShareAKernel) {
  ASSERT_TRUE(registered);
  test::ModelBuilder b;
  b.input("x", {3}).output("y", {3});
  for (int i = 0; i < 4; ++i)
    b.node("Neg", {i == 0 ? "x" : "v" + std::to_string(i - 1)},
           {i == 3 ? "y" : "v" + std::to_string(i)}, "n" + std::to_string(i));
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.providers = {"probe"};
  o.optimization_level = 0;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  g_most_inside = 0, g_most_in_one = 0;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 6; ++r) {
        const float v = static_cast<float>(t * 100 + r);
        auto out = s.run({{"x", Tensor::from_vector<float>({3}, {v, -v, 1})}});
        // Four negations: the input comes back.
        if (out[0].tensor().to_vector<float>() != std::vector<float>{v, -v, 1}) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(g_most_in_one.load(), 1) << "two runs were inside one kernel at once";
  // Four threads through a four-node chain of 2 ms nodes: while one run is in a node, another
  // waits for it in the node before, or runs in another one.
  EXPECT_GE(g_most_inside.load(), 2) << "the runs took turns instead of overlapping";
}

// The digits CNN (fused convolutions, pooling, Gemm: oneDNN and fast kernels with per-shape
// plans) from eight threads at once, each with its own images and batch sizes: every output
// equals the one-thread run's, bit for bit.
TEST(ConcurrentRuns, DigitsFromEightThreadsMatchTheRunsAlone) {
  const std::string dir = std::string(POLYINFER_SOURCE_DIR) + "/examples/digits/";
  SessionOptions o;
  o.providers = {"cpu"};
  o.threads = 1;
  Session s = Session::load(dir + "digits_cnn.onnx", o);
  const Tensor all = read_npy(dir + "test_x.npy");
  const int64_t image = all.numel() / all.dim(0);
  auto batch = [&](int64_t first, int64_t n) {
    std::vector<float> px(all.data<float>() + first * image,
                          all.data<float>() + (first + n) * image);
    return Tensor::from_vector<float>({n, all.dim(1), all.dim(2), all.dim(3)}, px);
  };
  // Batches of 1, 2 and 3 images: plans for three shapes, made while other runs use them.
  struct Job {
    int64_t first, n;
    std::vector<float> expected;
  };
  std::vector<Job> jobs;
  for (int64_t i = 0; i < 48; ++i) jobs.push_back({i * 3, 1 + i % 3, {}});
  {
    Session alone = Session::load(dir + "digits_cnn.onnx", o);
    for (Job& j : jobs)
      j.expected = alone.run({{"pixels", batch(j.first, j.n)}})[0].tensor().to_vector<float>();
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round)
        for (size_t k = t; k < jobs.size(); k += 8) {
          const Job& j = jobs[k];
          auto got = s.run({{"pixels", batch(j.first, j.n)}})[0].tensor().to_vector<float>();
          if (got != j.expected) ++wrong;
        }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0) << "runs disagreed with the same images run alone";
  // One of the runs recorded the pool's plan while the others took the pool.
  EXPECT_GT(s.memory_arena_bytes(), 0u);
}

// The arena serves the run that began first; a run begun meanwhile on another thread is served
// by the caching pool, unrecorded, and the first run's replay stays whole.
TEST(ConcurrentRuns, TheArenaServesOneRunAndOthersTakeThePool) {
  MemoryPool pool(host_allocator());
  auto chain = [&](size_t bytes) {
    void* prev = pool.allocate(bytes);
    for (int i = 0; i < 5; ++i) {
      void* next = pool.allocate(bytes);
      pool.deallocate(prev, bytes);
      prev = next;
    }
    pool.deallocate(prev, bytes);
  };
  pool.begin_run();
  chain(4096);
  pool.end_run();
  ASSERT_EQ(pool.stats().arena, 2u * 4096u);
  pool.begin_run();  // this thread holds the arena
  std::thread other([&] {
    pool.begin_run();
    chain(1000);  // other sizes: had they been recorded or replayed, the plan would break
    pool.end_run();
  });
  other.join();
  chain(4096);
  pool.end_run();
  EXPECT_EQ(pool.stats().planned_allocs, 6u);
  // The plan is whole: the next run replays it again.
  pool.begin_run();
  chain(4096);
  pool.end_run();
  EXPECT_EQ(pool.stats().planned_allocs, 12u);
}

}  // namespace
}  // namespace polyinfer
