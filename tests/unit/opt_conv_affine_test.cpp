// conv-channel-affine: a per-output-channel constant Add/Sub/Mul/Div after a Conv folds into its
// weights and bias; what does not broadcast along the channels alone, or is not the Conv's only
// reader, stays. Reference kernels on both sides (run_pass_and_compare).
#include "opt_test_util.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;

// x [2, 3, 7, 6] → Conv (4 output channels, optionally with a bias) → c.
ModelBuilder conv_model(bool bias) {
  ModelBuilder b(13);
  b.input("x", {2, 3, 7, 6}).output("y", {2, 4, 7, 6});
  test::random_initializer(b, "w", {4, 3, 3, 3}, 1);
  test::random_initializer(b, "b", {4}, 2);
  b.node("Conv",
         bias ? std::vector<std::string>{"x", "w", "b"} : std::vector<std::string>{"x", "w"}, {"c"},
         "conv");
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  return b;
}

// Paddle's form: a Conv without bias, then Add of the bias reshaped to [1, M, 1, 1], then Relu.
TEST(OptConvAffine, TheBiasAddedAfterAConvBecomesItsBias) {
  for (bool bias : {false, true}) {
    SCOPED_TRACE(bias ? "Conv with a bias" : "Conv without");
    ModelBuilder b = conv_model(bias);
    test::random_initializer(b, "k", {1, 4, 1, 1}, 3);
    b.node("Add", {"c", "k"}, {"a"}).node("Relu", {"a"}, {"y"});
    auto pass = opt::make_conv_channel_affine_folding();
    Model m = test::run_pass_and_compare(b.bytes(), *pass, 1, 1e-6);
    EXPECT_EQ(test::count_op(*m.graph, "Add"), 0);
    ASSERT_EQ(m.graph->nodes.size(), 2u);
    EXPECT_EQ(m.graph->nodes[0].op_type, "Conv");
    EXPECT_EQ(m.graph->nodes[0].inputs.size(), 3u);
    EXPECT_EQ(m.graph->nodes[0].outputs[0], "a");
  }
}

// Every operator and constant form: Add with the Conv second, Sub of a rank-3 [M, 1, 1], Mul by
// a scalar, Div by a [1, M, 1, 1]; a chain folds link by link in one run.
TEST(OptConvAffine, AddSubMulDivFoldInAChain) {
  ModelBuilder b = conv_model(true);
  test::random_initializer(b, "k_add", {1, 4, 1, 1}, 3);
  test::random_initializer(b, "k_sub", {4, 1, 1}, 4);
  b.initializer("k_mul", {}, {1.5f});
  test::random_initializer(b, "k_div", {1, 4, 1, 1}, 5, 0.5f, 2.0f);
  b.node("Add", {"k_add", "c"}, {"a"}).node("Sub", {"a", "k_sub"}, {"s"});
  b.node("Mul", {"s", "k_mul"}, {"m"}).node("Div", {"m", "k_div"}, {"y"});
  auto pass = opt::make_conv_channel_affine_folding();
  // Scaled weights round differently from scaling the output: ~1e-6 of the output's scale.
  Model m = test::run_pass_and_compare(b.bytes(), *pass, 4, 2e-6);
  ASSERT_EQ(m.graph->nodes.size(), 1u);
  EXPECT_EQ(m.graph->nodes[0].op_type, "Conv");
  EXPECT_EQ(m.graph->nodes[0].outputs[0], "y");
}

// Left alone: the constant minus the Conv, a constant that varies along a spatial axis, a Div by
// a zero channel, a computed operand, and a Conv output that something else reads too.
TEST(OptConvAffine, WhatIsNotAPerChannelAffineMapStays) {
  ModelBuilder b = conv_model(true);
  b.input("z", {2, 4, 7, 6}).output("y2", {2, 4, 7, 6}).output("y3", {2, 4, 7, 6});
  b.output("y4", {2, 4, 7, 6}).output("y5", {2, 4, 7, 6}).output("c2", {2, 4, 7, 6});
  test::random_initializer(b, "k", {1, 4, 1, 1}, 3);
  test::random_initializer(b, "k_w", {1, 1, 1, 6}, 4);
  b.initializer("k_zero", {1, 4, 1, 1}, {1.f, 0.f, 2.f, 3.f});
  test::random_initializer(b, "w2", {4, 3, 3, 3}, 6);
  test::random_initializer(b, "w3", {4, 3, 3, 3}, 7);
  test::random_initializer(b, "w4", {4, 3, 3, 3}, 8);
  test::random_initializer(b, "w5", {4, 3, 3, 3}, 9);
  auto conv = [&](const std::string& w, const std::string& out) {
    b.node("Conv", {"x", w}, {out});
    test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  };
  b.node("Sub", {"k", "c"}, {"y"});
  conv("w2", "c2_");
  b.node("Add", {"c2_", "k_w"}, {"y2"});
  conv("w3", "c3");
  b.node("Div", {"c3", "k_zero"}, {"y3"});
  conv("w4", "c4");
  b.node("Add", {"c4", "z"}, {"y4"});
  conv("w5", "c5");
  b.node("Add", {"c5", "k"}, {"y5"}).node("Relu", {"c5"}, {"c2"});
  Model m = test::import_bytes(b.bytes());
  EXPECT_EQ(opt::make_conv_channel_affine_folding()->run(*m.graph), 0);
}

}  // namespace
}  // namespace polyinfer
