// oneDNN primitives created on one thread and run on another: the session's kernel-creation
// helper threads, or a user who creates a session on one thread and runs it on another. With
// oneDNN 2.6's library-managed scratchpad, a Winograd convolution (oneDNN's own, on AVX-512
// CPUs) made that way crashed or ran garbage code; every oneDNN kernel now passes a scratchpad
// of the running thread (onednn::add_thread_scratchpad). On CPUs where oneDNN has no Winograd
// kernel the same convolutions run its direct kernels, and the test still checks the results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

#include "model_builder.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;
using test::random_values;

// Two branches, each a 3x3 stride-1 convolution on one of Inception-v3's 35x35 shapes and a run
// of Relus: 20 nodes, so the session creates kernels on a helper thread as well as its own.
// Without the fix this test crashed in 6 runs of 6 on a Zen 4 machine (oneDNN's
// jit_fp32_wino_2x3 and jit_wino_4x3 kernels).
struct Branch {
  int64_t ci, co;
};
const Branch kBranches[] = {{64, 96}, {96, 96}};
constexpr int kRelus = 9;

std::string model_bytes() {
  ModelBuilder m(13);
  for (int b = 0; b < 2; ++b) {
    const std::string k = std::to_string(b);
    const int64_t ci = kBranches[b].ci, co = kBranches[b].co;
    m.input("x" + k, {1, ci, 35, 35}).output("y" + k, {});
    m.initializer("w" + k, {co, ci, 3, 3}, random_values(co * ci * 9, 3 + b, -0.1f, 0.1f));
    m.node("Conv", {"x" + k, "w" + k}, {"c" + k}, "conv" + k);
    test::set_ints(test::last_node(m), "pads", {1, 1, 1, 1});
    std::string in = "c" + k;
    for (int r = 0; r < kRelus; ++r) {
      const std::string out = r + 1 == kRelus ? "y" + k : "r" + k + "_" + std::to_string(r);
      m.node("Relu", {in}, {out});
      in = out;
    }
  }
  return m.bytes();
}

TEST(OnednnThreads, ASessionCreatedOnAnotherThreadRunsCorrectly) {
  const std::string bytes = model_bytes();
  std::map<std::string, Value> feed;
  for (int b = 0; b < 2; ++b) {
    const int64_t ci = kBranches[b].ci;
    feed["x" + std::to_string(b)] =
        Tensor::from_vector<float>({1, ci, 35, 35}, random_values(ci * 35 * 35, 10 + b));
  }
  SessionOptions ref_options;
  ref_options.providers = {"cpu-ref"};
  Session ref = Session::load_bytes(bytes.data(), bytes.size(), ref_options);
  const std::vector<Value> want = ref.run(feed);
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    std::optional<Session> s;
    std::thread([&] {
      SessionOptions o;
      o.threads = threads;
      // oneDNN's convolutions rather than polyinfer's Winograd, which would take these.
      o.cpu.kernels["winograd"] = KernelSwitch::Off;
      s.emplace(Session::load_bytes(bytes.data(), bytes.size(), o));
    }).join();  // the creating thread is gone before the first run
    bool onednn = false;
    for (const auto& n : s->placement().nodes) onednn = onednn || n.impl.rfind("onednn:", 0) == 0;
    EXPECT_TRUE(onednn);
    for (int run = 0; run < 3; ++run) {
      const std::vector<Value> got = s->run(feed);
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < got.size(); ++o) {
        const std::vector<float> g = got[o].tensor().to_vector<float>(),
                                 w = want[o].tensor().to_vector<float>();
        ASSERT_EQ(g.size(), w.size());
        for (size_t i = 0; i < g.size(); ++i)
          ASSERT_NEAR(g[i], w[i], 1e-4f * (1.f + std::fabs(w[i]))) << "output " << o << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace polyinfer
