// Transpose cancellation (src/opt/transpose_cancellation.cpp): Transpose → order-agnostic chain
// → Transpose cancels or becomes one Transpose. Each case runs the pass alone and compares the
// rewritten model (exported and loaded again) with the original on cpu-ref; the tf2onnx 1-D
// convolution runs through the whole optimizer against the reference.
#include <gtest/gtest.h>

#include "opt_test_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;

void perm(ModelBuilder& b, std::vector<int64_t> p) {
  test::set_ints(test::last_node(b), "perm", p);
}

int transposes(const ir::Graph& g) { return test::count_op(g, "Transpose"); }

TEST(OptTranspose, InversePairAroundElementWiseNodesCancels) {
  ModelBuilder b(13);
  b.input("x", {2, 3, 4}).output("y", {2, 3, 4});
  b.initializer("half", {}, {0.5f});
  b.initializer("lo", {}, {-1.f}).initializer("hi", {}, {1.f});
  b.node("Transpose", {"x"}, {"t"}, "t0");
  perm(b, {0, 2, 1});
  b.node("Relu", {"t"}, {"r"});
  b.node("Mul", {"half", "r"}, {"m"});  // the constant first
  b.node("Clip", {"m", "lo", "hi"}, {"c"});
  b.node("Transpose", {"c"}, {"y"}, "t1");
  perm(b, {0, 2, 1});
  // y is a graph output: the second Transpose cannot go (its name must stay) — nothing changes.
  auto pass = opt::make_transpose_cancellation();
  Model kept = test::run_pass_and_compare(b.bytes(), *pass, 0, 0);
  EXPECT_EQ(transposes(*kept.graph), 2);
  // Read by a node instead: both go, and the chain reads x.
  b.proto().mutable_graph()->mutable_output(0)->set_name("z");
  b.node("Neg", {"y"}, {"z"});
  Model m = test::run_pass_and_compare(b.bytes(), *pass, 1, 0);
  EXPECT_EQ(transposes(*m.graph), 0);
  EXPECT_EQ(m.graph->nodes[0].op_type, "Relu");
  EXPECT_EQ(m.graph->nodes[0].inputs[0], "x");
  EXPECT_EQ(m.graph->nodes.back().inputs[0], "c");
}

TEST(OptTranspose, PairThatDoesNotCancelBecomesOneTranspose) {
  ModelBuilder b(13);
  b.input("x", {2, 3, 4, 5}).output("z", {2, 3, 5, 4});
  b.node("Transpose", {"x"}, {"t"}, "t0");
  perm(b, {0, 2, 1, 3});
  b.node("Sigmoid", {"t"}, {"s"});
  b.node("Transpose", {"s"}, {"u"}, "t1");
  perm(b, {0, 1, 3, 2});
  b.node("Identity", {"u"}, {"z"});
  auto pass = opt::make_transpose_cancellation();
  Model m = test::run_pass_and_compare(b.bytes(), *pass, 1, 0);
  ASSERT_EQ(transposes(*m.graph), 1);
  for (const auto& n : m.graph->nodes)
    if (n.op_type == "Transpose") {
      EXPECT_EQ(opt::attr_ints(n, "perm"), (std::vector<int64_t>{0, 2, 3, 1}));
      EXPECT_EQ(n.inputs[0], "s");
    }
}

// A per-channel float bias is permuted with the value; Squeeze and Unsqueeze axes renumbered.
TEST(OptTranspose, BiasSqueezeAndUnsqueezeInTheChain) {
  for (int opset : {13, 11}) {
    SCOPED_TRACE(opset);
    ModelBuilder b(opset);
    b.input("x", {2, 3, 1, 4}).output("z", {2, 4, 3});
    b.initializer("bias", {3}, {0.5f, -1.f, 2.f});
    if (opset >= 13) test::int64_initializer(b, "ax", {1}, {1});
    b.node("Transpose", {"x"}, {"t"}, "t0");  // [2, 1, 4, 3]
    perm(b, {0, 2, 3, 1});
    if (opset >= 13) {
      b.node("Squeeze", {"t", "ax"}, {"sq"});
    } else {
      b.node("Squeeze", {"t"}, {"sq"});
      test::set_ints(test::last_node(b), "axes", {1});
    }
    b.node("Add", {"sq", "bias"}, {"a"});  // [2, 4, 3] + [3]
    b.node("Relu", {"a"}, {"r"});
    b.node("Transpose", {"r"}, {"u"}, "t1");
    perm(b, {0, 2, 1});  // [2, 3, 4]
    if (opset >= 13) {
      test::int64_initializer(b, "ax0", {1}, {-1});
      b.node("Unsqueeze", {"u", "ax0"}, {"un"});
    } else {
      b.node("Unsqueeze", {"u"}, {"un"});
      test::set_ints(test::last_node(b), "axes", {3});
    }
    b.node("Transpose", {"un"}, {"back"}, "t2");  // [2, 3, 4, 1] → [2, 4, 3, 1]
    perm(b, {0, 2, 1, 3});
    test::int64_initializer(b, "shape", {3}, {2, 4, 3});
    b.node("Reshape", {"back", "shape"}, {"z"});
    auto pass = opt::make_transpose_cancellation();
    // t0 … t1 cancels ([0, 2, 3, 1], Squeeze, then [0, 2, 1]); t2 stays: a Reshape reads it.
    Model m = test::run_pass_and_compare(b.bytes(), *pass, 1, 1e-6);
    EXPECT_EQ(transposes(*m.graph), 1);
    const auto again = pass->run(*m.graph);
    EXPECT_EQ(again, 0) << "t2 meets no Transpose after it";
  }
}

TEST(OptTranspose, ChainsThatMustStay) {
  ModelBuilder b(13);
  b.input("x", {2, 3, 4}).output("z", {2, 3, 4}).output("r", {2, 4, 3});
  b.initializer("w", {3, 3}, test::random_values(9, 5));
  b.node("Transpose", {"x"}, {"t"}, "t0");
  perm(b, {0, 2, 1});
  b.node("Relu", {"t"}, {"r"});  // a graph output in the middle
  b.node("Transpose", {"r"}, {"u"}, "t1");
  perm(b, {0, 2, 1});
  b.node("Transpose", {"x"}, {"t2"}, "t2");
  perm(b, {0, 2, 1});
  b.node("MatMul", {"t2", "w"}, {"mm"});  // not order-agnostic
  b.node("Transpose", {"mm"}, {"t3"}, "t3");
  perm(b, {0, 2, 1});
  b.node("Add", {"u", "t3"}, {"z"});
  auto pass = opt::make_transpose_cancellation();
  Model m = test::run_pass_and_compare(b.bytes(), *pass, 0, 0);
  EXPECT_EQ(transposes(*m.graph), 4);
}

// tf2onnx's 1-D convolution: Unsqueeze → Transpose to NCHW → Conv → Transpose back → Squeeze →
// bias Add → Relu → Transpose to [N, C, W]. At level 3 the layout's Transposes meet the model's:
// none is left but the one producing the output.
TEST(OptTranspose, Tf2OnnxConv1dLosesItsTransposesAtLevel3) {
  ModelBuilder b(13);
  b.input("x", {2, 9, 4}).output("y", {2, 6, 9});
  b.initializer("w", {6, 4, 1, 3}, test::random_values(72, 9));
  b.initializer("bias", {6}, test::random_values(6, 10));
  test::int64_initializer(b, "ax", {1}, {1});
  b.node("Unsqueeze", {"x", "ax"}, {"x4"});  // [2, 1, 9, 4] (NHWC)
  b.node("Transpose", {"x4"}, {"nchw"}, "to_nchw");
  perm(b, {0, 3, 1, 2});
  b.node("Conv", {"nchw", "w"}, {"c"}, "conv");
  test::set_ints(test::last_node(b), "pads", {0, 1, 0, 1});
  b.node("Transpose", {"c"}, {"nhwc"}, "to_nhwc");
  perm(b, {0, 2, 3, 1});
  b.node("Squeeze", {"nhwc", "ax"}, {"s"});  // [2, 9, 6]
  b.node("Add", {"s", "bias"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  b.node("Transpose", {"r"}, {"y"}, "out");
  perm(b, {0, 2, 1});
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  opt::optimize(*m.graph, 3);
  EXPECT_EQ(transposes(*m.graph), 1);
  const std::map<std::string, Value> in = {{"x", Value(test::random_tensor({2, 9, 4}, 11))}};
  const auto want = test::run_model(bytes, 0, in, "cpu-ref");
  for (int level = 1; level <= 3; ++level)
    EXPECT_LE(test::max_rel_diff(test::run_model(bytes, level, in, "cpu"), want), 1e-5)
        << "level " << level;
}

}  // namespace
}  // namespace polyinfer
