// ShuffleNet's channel shuffle as one operator: the fuse-channel-shuffle pass
// (src/opt/channel_shuffle_fusion.cpp) on models built from standard ops, checked against the
// unoptimized model on the reference kernels; and the fast ConcatChannelShuffle kernel against
// the reference one (src/providers/cpu/{fast,ops}/channel_shuffle.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "infer/infer.h"
#include "model_builder.h"
#include "onnx/import.h"
#include "opt/optimize_model.h"
#include "oracle.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;
using test::OracleOp;
using test::random_values;

void int64s(ModelBuilder& m, const std::string& name, std::vector<int64_t> v) {
  m.int64_initializer(name, {static_cast<int64_t>(v.size())}, v);
}

struct Unit {
  int64_t groups = 2;                               // branches concatenated and shuffled
  int64_t cg = 20;                                  // channels per branch
  std::vector<std::pair<int64_t, int64_t>> slices;  // channel ranges the next unit reads
};

// Branches Conv(x) of cg channels each → Concat → Reshape [N, G, cg, H, W] → Transpose
// [0, 2, 1, 3, 4] → Reshape [N, G * cg, H, W] (torch's shuffle, NCHW); then Slices of the
// channels, the last one convolved, all concatenated into y. Without slices the shuffled tensor
// is convolved.
std::string shuffle_model(const Unit& u) {
  const int64_t N = 2, H = 5, W = 7, C = u.groups * u.cg;
  ModelBuilder m(13);
  m.input("x", {N, 3, H, W}).output("y", {-1, -1, -1, -1});
  std::vector<std::string> branches;
  for (int64_t g = 0; g < u.groups; ++g) {
    const std::string w = "w" + std::to_string(g), b = "b" + std::to_string(g);
    m.initializer(w, {u.cg, 3, 1, 1}, random_values(u.cg * 3, 40 + static_cast<uint32_t>(g)));
    m.node("Conv", {"x", w}, {b}, "conv" + std::to_string(g));
    branches.push_back(b);
  }
  m.node("Concat", branches, {"cat"}, "concat");
  auto* a =
      m.proto().mutable_graph()->mutable_node(m.proto().graph().node_size() - 1)->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  int64s(m, "split", {N, u.groups, u.cg, H, W});
  int64s(m, "merge", {N, -1, H, W});
  m.node("Reshape", {"cat", "split"}, {"r1"}, "reshape1");
  m.node("Transpose", {"r1"}, {"t"}, "transpose");
  auto* p =
      m.proto().mutable_graph()->mutable_node(m.proto().graph().node_size() - 1)->add_attribute();
  p->set_name("perm");
  p->set_type(onnx::AttributeProto::INTS);
  for (int64_t d : {0, 2, 1, 3, 4}) p->add_ints(d);
  m.node("Reshape", {"t", "merge"}, {"shuffled"}, "reshape2");
  int64s(m, "ax", {1});
  std::vector<std::string> parts;
  for (size_t i = 0; i < u.slices.size(); ++i) {
    const std::string s = std::to_string(i);
    int64s(m, "s" + s, {u.slices[i].first});
    int64s(m, "e" + s, {u.slices[i].second});
    m.node("Slice", {"shuffled", "s" + s, "e" + s, "ax"}, {"part" + s}, "slice" + s);
    parts.push_back("part" + s);
  }
  const std::string last = parts.empty() ? "shuffled" : parts.back();
  const int64_t cl = parts.empty() ? C : u.slices.back().second - u.slices.back().first;
  m.initializer("wl", {8, cl, 1, 1}, random_values(8 * cl, 49));
  m.node("Conv", {last, "wl"}, {"cl"}, "conv_last");
  if (!parts.empty()) parts.pop_back();
  parts.push_back("cl");
  if (parts.size() == 1) {
    m.node("Identity", {"cl"}, {"y"}, "out");
  } else {
    m.node("Concat", parts, {"y"}, "join");
    auto* j =
        m.proto().mutable_graph()->mutable_node(m.proto().graph().node_size() - 1)->add_attribute();
    j->set_name("axis");
    j->set_type(onnx::AttributeProto::INT);
    j->set_i(1);
  }
  return m.bytes();
}

Tensor run(const std::string& bytes, int level, const std::string& provider, const Tensor& x) {
  SessionOptions o;
  o.optimization_level = level;
  o.providers = {provider};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  return s.run({{"x", x}})[0].tensor();
}

// Fused nodes and their output counts after the level-3 optimizer.
std::vector<size_t> fused_outputs(const std::string& bytes) {
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(m);
  opt::optimize_model(m, 3);
  std::vector<size_t> out;
  for (const auto& n : m.graph->nodes)
    if (n.op_type == "ConcatChannelShuffle") out.push_back(n.outputs.size());
  return out;
}

void expect_same_as_unoptimized(const std::string& bytes) {
  const Tensor x = Tensor::from_vector<float>({2, 3, 5, 7}, random_values(2 * 3 * 5 * 7, 7));
  const Tensor want = run(bytes, 0, "cpu-ref", x);
  for (const char* provider : {"cpu", "cpu-ref"}) {
    SCOPED_TRACE(provider);
    const Tensor got = run(bytes, 3, provider, x);
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i],
                  1e-5f * (1 + std::fabs(want.data<float>()[i])))
          << "at " << i;
  }
}

TEST(ChannelShuffleFusion, TheShuffleAndTheSplitBecomeOneNode) {
  Unit u;
  u.slices = {{0, 20}, {20, 40}};  // ShuffleNetV2's halves
  EXPECT_EQ(fused_outputs(shuffle_model(u)), (std::vector<size_t>{2}));
  expect_same_as_unoptimized(shuffle_model(u));
  u.slices = {{20, 40}, {0, 20}};  // the halves read in the other order
  EXPECT_EQ(fused_outputs(shuffle_model(u)), (std::vector<size_t>{2}));
  expect_same_as_unoptimized(shuffle_model(u));
}

TEST(ChannelShuffleFusion, WithoutASplitTheShuffledTensorIsTheOutput) {
  Unit u;  // the shuffle read by a convolution (a ShuffleNetV2 stage's last unit)
  EXPECT_EQ(fused_outputs(shuffle_model(u)), (std::vector<size_t>{1}));
  expect_same_as_unoptimized(shuffle_model(u));
  u.groups = 3;  // three groups: the reference kernel's case
  u.cg = 5;
  EXPECT_EQ(fused_outputs(shuffle_model(u)), (std::vector<size_t>{1}));
  expect_same_as_unoptimized(shuffle_model(u));
}

TEST(ChannelShuffleFusion, UnequalPartsStaySlices) {
  Unit u;
  u.slices = {{0, 12}, {12, 40}};
  EXPECT_EQ(fused_outputs(shuffle_model(u)), (std::vector<size_t>{1}));
  expect_same_as_unoptimized(shuffle_model(u));
}

OracleOp shuffle_op(const Shape& x, int groups, int outputs) {
  OracleOp op("ConcatChannelShuffle", 1, "ai.polyinfer");
  for (int g = 0; g < groups; ++g) op.random(x);
  op.outputs(outputs);
  return op;
}

TEST(FastConcatChannelShuffle, MatchesTheReference) {
  struct Case {
    Shape x;
    int groups, outputs;
    bool fast;
  };
  const std::vector<Case> cases = {
      {{1, 28, 28, 58}, 2, 2, true},  // ShuffleNetV2's first stage: 29 pairs per half
      {{2, 3, 3, 16}, 2, 1, true},    // whole vectors only
      {{5, 3}, 2, 2, false},          // 3 channels per half: pairs split between halves
      {{4, 4, 6}, 3, 2, false},       // three groups
      {{7, 2, 13}, 2, 1, true},       // odd channels, one output
  };
  for (const auto& c : cases)
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(shape_str(c.x) + " groups " + std::to_string(c.groups) + " outputs " +
                   std::to_string(c.outputs) + " threads " + std::to_string(threads));
      const auto r = shuffle_op(c.x, c.groups, c.outputs).threads(threads).check(0, 0);
      EXPECT_EQ(r.impl.rfind("fast:", 0) == 0, c.fast) << r.impl;
    }
}

// The reference kernel from its definition, on numbers one can follow.
TEST(ConcatChannelShuffle, InterleavesTheGroupsThenSplits) {
  SessionOptions o;
  o.providers = {"cpu-ref"};
  OracleOp op("ConcatChannelShuffle", 1, "ai.polyinfer");
  op.input(Tensor::from_vector<float>({1, 4}, {0, 1, 2, 3}))
      .input(Tensor::from_vector<float>({1, 4}, {10, 11, 12, 13}))
      .outputs(2);
  const std::string bytes = op.model();
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  const auto out = s.run({{"in0", Tensor::from_vector<float>({1, 4}, {0, 1, 2, 3})},
                          {"in1", Tensor::from_vector<float>({1, 4}, {10, 11, 12, 13})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{0, 10, 1, 11}));
  EXPECT_EQ(out[1].tensor().to_vector<float>(), (std::vector<float>{2, 12, 3, 13}));
}

}  // namespace
}  // namespace polyinfer
