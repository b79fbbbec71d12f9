// opt::optimize_model: type inference (src/infer/) again after folding, where shapes were left
// unknown that folding settles (opt/optimize_model.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "infer/infer.h"
#include "model_builder.h"
#include "onnx/import.h"
#include "opt/optimize_model.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

// A channel split as torch exports it (ShuffleNetV2): the Slice's end comes from
// Shape -> Gather -> Div, whose values inference carries to the Slice. Then a 1x1 convolution of
// the 3 channels kept.
std::string channel_split_model() {
  test::ModelBuilder b;
  b.input("x", {1, 6, 4, 4}).output("y", {-1, -1, -1, -1});
  b.int64_initializer("one", {}, {1})
      .int64_initializer("two", {}, {2})
      .int64_initializer("zero1", {1}, {0})
      .int64_initializer("axes", {1}, {1})
      .int64_initializer("axes0", {1}, {0});
  b.initializer("w", {2, 3, 1, 1}, {1, 2, 3, 4, 5, 6});
  b.node("Shape", {"x"}, {"s"}, "shape")
      .node("Gather", {"s", "one"}, {"c"}, "gather")
      .node("Div", {"c", "two"}, {"h"}, "div")
      .node("Unsqueeze", {"h", "axes0"}, {"hv"}, "unsq")
      .node("Slice", {"x", "zero1", "hv", "axes"}, {"sl"}, "slice")
      .node("Conv", {"sl", "w"}, {"y"}, "conv");
  return b.bytes();
}

// The same split computed through floats (Cast -> Div -> Cast), which inference does not carry:
// the shapes after it wait for folding, then inference runs again and knows them.
std::string float_split_model() {
  test::ModelBuilder b;
  b.input("x", {1, 6, 4, 4}).output("y", {-1, -1, -1, -1});
  b.int64_initializer("one", {}, {1})
      .int64_initializer("zero1", {1}, {0})
      .int64_initializer("axes", {1}, {1})
      .int64_initializer("axes0", {1}, {0});
  b.initializer("two", {}, {2.f});
  b.initializer("w", {2, 3, 1, 1}, {1, 2, 3, 4, 5, 6});
  b.node("Shape", {"x"}, {"s"}, "shape").node("Gather", {"s", "one"}, {"c"}, "gather");
  b.node("Cast", {"c"}, {"cf"}, "to_float");
  test::set_int(test::last_node(b), "to", 1);
  b.node("Div", {"cf", "two"}, {"hf"}, "div").node("Cast", {"hf"}, {"h"}, "to_int");
  test::set_int(test::last_node(b), "to", 7);
  b.node("Unsqueeze", {"h", "axes0"}, {"hv"}, "unsq")
      .node("Slice", {"x", "zero1", "hv", "axes"}, {"sl"}, "slice")
      .node("Conv", {"sl", "w"}, {"y"}, "conv");
  return b.bytes();
}

int rewrites_of(const opt::OptimizeReport& r, const std::string& pass) {
  for (const auto& [name, n] : r.rewrites)
    if (name == pass) return n;
  return -1;  // not run
}

TEST(OptimizeModel, ShapesBehindAShapeSubgraphAreKnownBeforeFolding) {
  const std::string bytes = channel_split_model();
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(m);
  EXPECT_FALSE(opt::has_unknown_shapes(*m.graph));
  EXPECT_EQ(m.graph->type_of("y")->dims, (Shape{1, 2, 4, 4}));
  EXPECT_EQ(rewrites_of(opt::optimize_model(m, 3), "infer-types"), -1);
}

TEST(OptimizeModel, ShapesBehindAFoldedShapeSubgraphAreInferredAgain) {
  const std::string bytes = float_split_model();
  for (int level : {1, 3}) {
    Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
    infer::infer_types(m);
    ASSERT_TRUE(opt::has_unknown_shapes(*m.graph));
    const opt::OptimizeReport r = opt::optimize_model(m, level);
    EXPECT_FALSE(opt::has_unknown_shapes(*m.graph)) << "level " << level;
    EXPECT_GT(rewrites_of(r, "infer-types"), 0) << r.summary();
    EXPECT_GT(rewrites_of(r, "shape-folding"), 0) << r.summary();
    const ir::TypeInfo* y = m.graph->type_of("y");
    ASSERT_TRUE(y);
    EXPECT_EQ(y->dims, (Shape{1, 2, 4, 4})) << y->str();
  }
}

TEST(OptimizeModel, LevelZeroAndKnownShapesRunNoInference) {
  const std::string split = float_split_model();
  Model m0 = import_onnx_bytes(split.data(), split.size(), "");
  infer::infer_types(m0);
  EXPECT_EQ(rewrites_of(opt::optimize_model(m0, 0), "infer-types"), -1);
  EXPECT_TRUE(opt::has_unknown_shapes(*m0.graph));

  // A named (dynamic) batch is not an unknown shape: folding cannot settle it.
  test::ModelBuilder b;
  b.input("x", {-1, 3}).output("y", {-1, 3});
  b.node("Relu", {"x"}, {"r"}, "relu").node("Neg", {"r"}, {"y"}, "neg");
  const std::string bytes = b.bytes();
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(m);
  EXPECT_FALSE(opt::has_unknown_shapes(*m.graph));
  EXPECT_EQ(rewrites_of(opt::optimize_model(m, 3), "infer-types"), -1);
}

// The session sees the shapes at creation: the convolution behind the split has its FLOPs before
// any run, and the outputs equal those of the unoptimized graph.
TEST(OptimizeModel, ASessionKnowsTheShapesBehindTheSplitAtCreation) {
  const std::string bytes = channel_split_model();
  SessionOptions o;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  const auto prof = s.profile();
  const auto conv =
      std::find_if(prof.begin(), prof.end(), [](const NodeProfile& p) { return p.node == "conv"; });
  ASSERT_NE(conv, prof.end());
  EXPECT_DOUBLE_EQ(conv->flops, 2.0 * 2 * 3 * 4 * 4);

  std::vector<float> xv(96);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 7) - 3.f;
  const Tensor x = Tensor::from_vector<float>({1, 6, 4, 4}, xv);
  o.optimization_level = 0;
  Session plain = Session::load_bytes(bytes.data(), bytes.size(), o);
  const Tensor y = s.run({{"x", Value(x)}})[0].tensor();
  const Tensor ref = plain.run({{"x", Value(x)}})[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{1, 2, 4, 4}));
  ASSERT_EQ(ref.shape(), y.shape());
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], ref.data<float>()[i]);
}

}  // namespace
}  // namespace polyinfer
