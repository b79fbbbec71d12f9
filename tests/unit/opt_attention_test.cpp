// fuse-attention (src/opt/attention_fusion.cpp) and the fast Attention kernel
// (providers/cpu/fast/attention.cpp): the per-head pattern becomes one Attention node that
// computes what the pattern does, and the fast kernel (on each GEMM tile) agrees with the
// reference one (which computes in double) over odd sizes, threads and the cases it hands back.
#include <cmath>
#include <cstdlib>

#include "gemm_tiles.h"
#include "opt_test_util.h"
#include "providers/cpu/fast/avx2_util.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;

const std::string kPoly = "ai.polyinfer";

struct Block {
  int opset = 17;
  int64_t B = 2, Sq = 5, Sk = 5, H = 3, D = 8, Dv = 8;
  std::string scale = "Mul";  // "Mul", "Div" or "" (no scaling node)
  bool two_step_k = false;    // Kᵀ as [0, 2, 1, 3] then [0, 1, 3, 2]
  int64_t softmax_axis = -1;
};

// q [B, Sq, H·D], k [B, Sk, H·D], v [B, Sk, H·Dv] → y [B, Sq, H·Dv], head by head as an
// exporter writes it.
ModelBuilder attention_block(const Block& c) {
  ModelBuilder b(c.opset);
  b.input("q", {c.B, c.Sq, c.H * c.D}).input("k", {c.B, c.Sk, c.H * c.D});
  b.input("v", {c.B, c.Sk, c.H * c.Dv}).output("y", {c.B, c.Sq, c.H * c.Dv});
  b.int64_initializer("qs", {4}, {c.B, c.Sq, c.H, c.D});
  b.int64_initializer("ks", {4}, {c.B, c.Sk, c.H, c.D});
  b.int64_initializer("vs", {4}, {c.B, c.Sk, c.H, c.Dv});
  b.int64_initializer("ys", {3}, {c.B, c.Sq, c.H * c.Dv});
  b.initializer("c", {}, {c.scale == "Div" ? 8.f : 0.125f});
  b.node("Reshape", {"q", "qs"}, {"q4"}).node("Transpose", {"q4"}, {"qh"});
  test::set_ints(test::last_node(b), "perm", {0, 2, 1, 3});
  b.node("Reshape", {"k", "ks"}, {"k4"});
  if (c.two_step_k) {
    b.node("Transpose", {"k4"}, {"kh"});
    test::set_ints(test::last_node(b), "perm", {0, 2, 1, 3});
    b.node("Transpose", {"kh"}, {"kt"});
    test::set_ints(test::last_node(b), "perm", {0, 1, 3, 2});
  } else {
    b.node("Transpose", {"k4"}, {"kt"});
    test::set_ints(test::last_node(b), "perm", {0, 2, 3, 1});
  }
  b.node("Reshape", {"v", "vs"}, {"v4"}).node("Transpose", {"v4"}, {"vh"});
  test::set_ints(test::last_node(b), "perm", {0, 2, 1, 3});
  b.node("MatMul", {"qh", "kt"}, {"s"});
  std::string scores = "s";
  if (!c.scale.empty()) {
    b.node(c.scale, {"s", "c"}, {"s2"});
    scores = "s2";
  }
  b.node("Softmax", {scores}, {"p"});
  test::set_int(test::last_node(b), "axis", c.softmax_axis);
  b.node("MatMul", {"p", "vh"}, {"o"}).node("Transpose", {"o"}, {"ot"});
  test::set_ints(test::last_node(b), "perm", {0, 2, 1, 3});
  b.node("Reshape", {"ot", "ys"}, {"y"}, "merge");
  return b;
}

TEST(OptAttention, PerHeadPatternBecomesOneNode) {
  for (const char* scale : {"Mul", "Div", ""}) {
    for (bool two_step : {false, true}) {
      Block c;
      c.scale = scale;
      c.two_step_k = two_step;
      SCOPED_TRACE(std::string("scale '") + scale + "', two-step Kᵀ " + (two_step ? "yes" : "no"));
      auto pass = opt::make_attention_fusion();
      // The reference Attention computes in double; the unfused graph in float32.
      Model m = test::run_pass_and_compare(attention_block(c).bytes(), *pass, 1, 1e-5);
      ASSERT_EQ(m.graph->nodes.size(), 1u);
      const ir::Node& n = m.graph->nodes[0];
      EXPECT_EQ(n.op_type, "Attention");
      EXPECT_EQ(n.domain, kPoly);
      EXPECT_EQ(n.name, "merge");
      EXPECT_EQ(n.inputs, (std::vector<std::string>{"q", "k", "v"}));
      EXPECT_EQ(opt::attr_int(n, "q_num_heads", 0), 3);
      EXPECT_EQ(opt::attr_int(n, "kv_num_heads", 0), 3);
      EXPECT_FLOAT_EQ(opt::attr_float(n, "scale", 0), std::string(scale).empty() ? 1.f : 0.125f);
    }
  }
}

TEST(OptAttention, StandardOperatorFromOpset23) {
  Block c;
  c.opset = 23;
  auto pass = opt::make_attention_fusion();
  Model m = test::run_pass_and_compare(attention_block(c).bytes(), *pass, 1, 1e-5);
  EXPECT_EQ(test::count_op(*m.graph, "Attention", ""), 1);
}

TEST(OptAttention, CrossAttentionAndOtherValueWidth) {
  Block c;
  c.Sq = 4;
  c.Sk = 9;
  c.Dv = 16;
  auto pass = opt::make_attention_fusion();
  Model m = test::run_pass_and_compare(attention_block(c).bytes(), *pass, 1, 1e-5);
  EXPECT_EQ(test::count_op(*m.graph, "Attention", kPoly), 1);
}

TEST(OptAttention, LeavesWhatItCannotFuse) {
  {  // the scores are also a graph output
    ModelBuilder b = attention_block(Block{});
    b.output("s", {2, 3, 5, 5});
    Model m = test::import_bytes(b.bytes());
    EXPECT_EQ(opt::make_attention_fusion()->run(*m.graph), 0);
  }
  {  // a softmax over another axis
    Block c;
    c.softmax_axis = 2;
    Model m = test::import_bytes(attention_block(c).bytes());
    EXPECT_EQ(opt::make_attention_fusion()->run(*m.graph), 0);
  }
  {  // opset 11's Softmax flattens from axis 1 by default: not attention's
    Block c;
    c.opset = 11;
    ModelBuilder b = attention_block(c);
    for (auto& n : *b.proto().mutable_graph()->mutable_node())
      if (n.op_type() == "Softmax") n.clear_attribute();
    Model m = test::import_bytes(b.bytes());
    EXPECT_EQ(opt::make_attention_fusion()->run(*m.graph), 0);
  }
}

TEST(OptAttention, LevelThreeOnlyAndTheWholeOptimizer) {
  const std::string bytes = attention_block(Block{}).bytes();
  Model two = test::import_bytes(bytes);
  opt::optimize(*two.graph, 2);
  EXPECT_EQ(test::count_op(*two.graph, "Attention", kPoly), 0);
  Model three = test::import_bytes(bytes);
  const auto r = opt::optimize(*three.graph, 3);
  EXPECT_EQ(three.graph->nodes.size(), 1u) << r.summary();
}

// The session at level 3 on `cpu` (the fast kernel, or the reference where it declines) against
// the unfused graph on cpu-ref.
std::string fast_vs_reference(const Block& c, int threads, SessionOptions o = {}) {
  const std::string bytes = attention_block(c).bytes();
  const auto in = test::random_inputs(bytes);
  o.threads = threads;
  o.optimization_level = 3;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  const auto got = s.run(in);
  EXPECT_LE(test::max_rel_diff(got, test::run_model(bytes, 0, in)), 2e-6);
  const Placement& p = s.placement();
  EXPECT_EQ(p.nodes.size(), 1u);
  return p.nodes.empty() ? "" : p.nodes[0].impl;
}

TEST(FastAttention, MatchesTheUnfusedGraph) {
  if (!fast::avx2::supported()) GTEST_SKIP() << "the fast Attention kernel needs AVX2 and FMA";
  // Odd query and key counts (tails of the 6- and 8-row tiles, of 8, 16 and 32 keys), a head
  // size of 24 (a panel and a half of V on the 16-wide tile, three quarters of one on the
  // 32-wide), cross attention, BERT-base's head; on each tile this CPU runs.
  std::vector<Block> cases(5);
  cases[1].Sq = 13, cases[1].Sk = 13, cases[1].D = 24, cases[1].Dv = 24, cases[1].B = 1;
  cases[2].Sq = 3, cases[2].Sk = 37, cases[2].H = 2, cases[2].scale = "Div";
  cases[3].B = 1, cases[3].Sq = 128, cases[3].Sk = 128, cases[3].H = 2, cases[3].D = 64;
  cases[3].Dv = 64;
  cases[4].Sq = 50, cases[4].Sk = 1, cases[4].scale = "";
  for (const test::Tile& tile : test::gemm_tiles()) {
    for (size_t i = 0; i < cases.size(); ++i)
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(tile.impl("attention") + ", case " + std::to_string(i) + ", " +
                     std::to_string(threads) + " threads");
        EXPECT_EQ(fast_vs_reference(cases[i], threads, tile.session()), tile.impl("attention"));
      }
  }
}

TEST(FastAttention, HandsTheReferenceWhatItDoesNotCover) {
  if (!fast::avx2::supported()) GTEST_SKIP() << "the fast Attention kernel needs AVX2 and FMA";
  Block c;
  c.Dv = 6;  // not a multiple of 8: declined at run time
  EXPECT_EQ(fast_vs_reference(c, 2), "reference (fast path declined)");
  SessionOptions off;
  off.cpu.kernels["attention"] = KernelSwitch::Off;
  EXPECT_EQ(fast_vs_reference(Block{}, 1, off), "reference");
}

// The operator itself, as a model may hold it: no scale attribute means 1/sqrt(D).
TEST(FastAttention, DefaultScaleIsOneOverRootHeadSize) {
  if (!fast::avx2::supported()) GTEST_SKIP() << "the fast Attention kernel needs AVX2 and FMA";
  ModelBuilder b(17);
  auto* op = b.proto().add_opset_import();
  op->set_domain(kPoly);
  op->set_version(1);
  b.input("q", {1, 7, 32}).input("k", {1, 9, 32}).input("v", {1, 9, 16}).output("y", {});
  b.node("Attention", {"q", "k", "v"}, {"y"}, "att");
  test::last_node(b)->set_domain(kPoly);
  test::set_int(test::last_node(b), "q_num_heads", 2);
  test::set_int(test::last_node(b), "kv_num_heads", 2);
  const std::string bytes = b.bytes();
  const auto in = test::random_inputs(bytes);
  for (const test::Tile& tile : test::gemm_tiles()) {
    SessionOptions o = tile.session();
    o.optimization_level = 0;
    Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
    EXPECT_LE(test::max_rel_diff(s.run(in), test::run_model(bytes, 0, in)), 2e-6);
    EXPECT_EQ(s.placement().nodes.at(0).impl, tile.impl("attention"));
  }
}

}  // namespace
}  // namespace polyinfer
