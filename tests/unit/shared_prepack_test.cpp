// Prepacked weights shared across a session (runtime/shared_prepack.h, KernelInfo::
// shared_prepack): the cache makes each packing once, even under concurrent kernel creation,
// and in a session every node that packs one weight alike holds the same copy ("+shared" in its
// impl) and still computes what the reference kernels do (`cpu-ref`).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gemm_tiles.h"
#include "model_builder.h"
#include "opt_test_util.h"
#include "oracle.h"
#include "providers/cpu/fast/avx2_util.h"
#include "runtime/shared_prepack.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;
using test::random_values;

bool shared(const std::string& impl) { return impl.find("+shared") != std::string::npos; }

TEST(SharedPrepacks, MakesEachPackingOnceAcrossThreads) {
  SharedPrepacks cache;
  const int graph = 0;  // an identity only
  std::atomic<int> made{0};
  const auto make = [&] {
    // The first maker takes its time: the other threads ask meanwhile.
    if (++made == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return Tensor::from_vector<float>({2}, {1.f, 2.f});
  };
  std::vector<std::shared_ptr<const Tensor>> got(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] { got[t] = cache.get(&graph, "w", "k", make); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(made.load(), 1);
  for (const auto& g : got) EXPECT_EQ(g.get(), got[0].get());

  // Another key, another weight, another graph: packed on their own.
  const int other = 0;
  EXPECT_NE(cache.get(&graph, "w", "k2", make).get(), got[0].get());
  EXPECT_NE(cache.get(&graph, "v", "k", make).get(), got[0].get());
  EXPECT_NE(cache.get(&other, "w", "k", make).get(), got[0].get());
  EXPECT_EQ(made.load(), 4);
}

TEST(SharedPrepacks, HoldsNothingNoKernelHoldsAndForgetsAFailedPacking) {
  SharedPrepacks cache;
  const int graph = 0;
  int made = 0;
  const auto make = [&] {
    ++made;
    return Tensor::from_vector<float>({1}, {3.f});
  };
  cache.get(&graph, "w", "k", make);  // dropped at once: the next asker packs again
  const auto held = cache.get(&graph, "w", "k", make);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(cache.get(&graph, "w", "k", make).get(), held.get());
  EXPECT_EQ(made, 2);

  const auto fail = []() -> Tensor { throw std::runtime_error("no"); };
  EXPECT_THROW(cache.get(&graph, "x", "k", fail), std::runtime_error);
  EXPECT_EQ(cache.get(&graph, "x", "k", make)->data<float>()[0], 3.f);
}

// An exporter's unrolled RNN (captcha_crnn's shape, small): per step
// h = Tanh(Gemm(x_t, Wih, bih, transB) + Gemm(h, Whh, bhh, transB)), every step reading the same
// two weights. Besides: `alpha` reads Wih with alpha 0.5 (another packing), `plain` reads Whh
// as MatMul's [K, N] (another again), each alone under its key.
constexpr int kSteps = 8, kIn = 64, kHidden = 40;

std::string unrolled_rnn() {
  ModelBuilder m(17);
  m.initializer("Wih", {kHidden, kIn}, random_values(kHidden * kIn, 3, -0.2f, 0.2f));
  m.initializer("bih", {kHidden}, random_values(kHidden, 4));
  m.initializer("Whh", {kHidden, kHidden}, random_values(kHidden * kHidden, 5, -0.2f, 0.2f));
  m.initializer("bhh", {kHidden}, random_values(kHidden, 6));
  const auto gemm = [&m](const std::string& a, const std::string& w, const std::string& b,
                         const std::string& y, float alpha = 1.f) {
    m.node("Gemm", {a, w, b}, {y}, y);
    test::set_int(test::last_node(m), "transB", 1);
    if (alpha != 1.f) test::set_float(test::last_node(m), "alpha", alpha);
  };
  std::string h = "h0";
  m.input("h0", {1, kHidden});
  for (int t = 0; t < kSteps; ++t) {
    const std::string s = std::to_string(t), x = "x" + s;
    m.input(x, {1, kIn});
    gemm(x, "Wih", "bih", "in" + s);
    gemm(h, "Whh", "bhh", "rec" + s);
    m.node("Add", {"in" + s, "rec" + s}, {"pre" + s}, "pre" + s);
    m.node("Tanh", {"pre" + s}, {"h" + std::to_string(t + 1)}, "h" + std::to_string(t + 1));
    h = "h" + std::to_string(t + 1);
  }
  gemm("x0", "Wih", "bih", "alpha", 0.5f);
  m.node("MatMul", {h, "Whh"}, {"plain"}, "plain");
  m.output(h, {}).output("alpha", {}).output("plain", {});
  return m.bytes();
}

std::map<std::string, Value> rnn_feed() {
  std::map<std::string, Value> feed;
  feed["h0"] = test::random_tensor({1, kHidden}, 7, -1.f, 1.f);
  for (int t = 0; t < kSteps; ++t)
    feed["x" + std::to_string(t)] = test::random_tensor({1, kIn}, 10 + t, -1.f, 1.f);
  return feed;
}

// Runs the model on `cpu` with `o` and on `cpu-ref`, checks the outputs agree, and returns each
// Gemm/MatMul node's impl by node name.
std::map<std::string, std::string> run_rnn(SessionOptions o, int threads) {
  const std::string bytes = unrolled_rnn();
  SessionOptions ref;
  o.optimization_level = ref.optimization_level = 0;
  o.threads = threads;
  ref.providers = {"cpu-ref"};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  Session r = Session::load_bytes(bytes.data(), bytes.size(), ref);
  const auto feed = rnn_feed();
  EXPECT_LT(test::max_rel_diff(s.run(feed), r.run(feed)), 1e-5);
  std::map<std::string, std::string> impls;
  for (const auto& n : s.placement().nodes)
    if (n.op == "Gemm" || n.op == "MatMul") impls[n.node] = n.impl;
  return impls;
}

// Every step's Gemm shares its weight's packing; the two nodes that pack them otherwise do not.
void expect_shared_steps(const std::map<std::string, std::string>& impls) {
  ASSERT_EQ(impls.size(), 2u * kSteps + 2);
  for (int t = 0; t < kSteps; ++t) {
    EXPECT_TRUE(shared(impls.at("in" + std::to_string(t)))) << impls.at("in" + std::to_string(t));
    EXPECT_TRUE(shared(impls.at("rec" + std::to_string(t)))) << impls.at("rec" + std::to_string(t));
  }
  EXPECT_FALSE(shared(impls.at("alpha"))) << impls.at("alpha");
  EXPECT_FALSE(shared(impls.at("plain"))) << impls.at("plain");
}

TEST(SharedPrepack, UnrolledRnnStepsSharePackedGemmWeights) {
  if (!fast::avx2::supported()) GTEST_SKIP() << "the packed MatMul needs AVX2 and FMA";
  for (const test::Tile& tile : test::gemm_tiles()) {
    // 2 threads: kernels are created on two threads at once (40 nodes).
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(tile.isa) + ", " + std::to_string(threads) + " threads");
      const auto impls = run_rnn(tile.session(), threads);
      expect_shared_steps(impls);
      EXPECT_EQ(impls.at("in0"), tile.impl("packed") + "+shared");
    }
  }
}

TEST(SharedPrepack, UnrolledRnnStepsShareOnednnWeights) {
  SessionOptions o;
  o.cpu.kernels["packed_matmul"] = KernelSwitch::Off;
  const auto impls = run_rnn(o, 1);
  EXPECT_EQ(impls.at("in0").rfind("onednn", 0), 0u) << impls.at("in0");
  expect_shared_steps(impls);
}

// A Loop body's Gemm reads the enclosing graph's weight, which a node outside reads too: one
// packing for both.
TEST(SharedPrepack, LoopBodySharesTheEnclosingGraphsWeight) {
  if (!fast::avx2::supported()) GTEST_SKIP() << "the packed MatMul needs AVX2 and FMA";
  ModelBuilder b(13);
  b.input("v0", {2, 16}).output("v", {2, 16}).output("outside", {2, 16});
  b.int64_initializer("trips", {}, {3});
  b.initializer("w", {16, 16}, random_values(16 * 16, 21, -0.3f, 0.3f));
  b.node("Gemm", {"v0", "w"}, {"outside"}, "outside");
  b.node("Loop", {"trips", "", "v0"}, {"v"}, "loop");
  ModelBuilder body(13);
  body.input("i", {}, 7).input("cond_in", {}, 9).input("v_in", {2, 16});
  body.output("cond_out", {}, 9).output("v_out", {2, 16});
  body.node("Identity", {"cond_in"}, {"cond_out"}, "cond");
  body.node("Gemm", {"v_in", "w"}, {"mm"}, "inside");
  body.node("Tanh", {"mm"}, {"v_out"}, "tanh");
  auto* g = test::last_node(b)->add_attribute();
  g->set_name("body");
  g->set_type(onnx::AttributeProto::GRAPH);
  *g->mutable_g() = body.proto().graph();
  const std::string bytes = b.bytes();

  SessionOptions o, ref;
  o.optimization_level = ref.optimization_level = 0;
  ref.providers = {"cpu-ref"};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  Session r = Session::load_bytes(bytes.data(), bytes.size(), ref);
  std::map<std::string, Value> feed{{"v0", test::random_tensor({2, 16}, 8, -1.f, 1.f)}};
  EXPECT_LT(test::max_rel_diff(s.run(feed), r.run(feed)), 1e-5);
  int gemms = 0;
  for (const auto& row : s.profile()) {
    if (row.op != "Gemm") continue;
    ++gemms;
    EXPECT_TRUE(shared(row.impl)) << row.node << ": " << row.impl;
  }
  EXPECT_EQ(gemms, 2);
}

}  // namespace
}  // namespace polyinfer
