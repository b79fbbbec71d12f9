// The cost model (runtime/cost.h), the activation-memory prediction (plan/memory_sim.h), the
// roofline (plan/planner.h) and the import options plan relies on.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "infer/infer.h"
#include "model_builder.h"
#include "onnx/import.h"
#include "opt/optimizer.h"
#include "plan/memory_sim.h"
#include "plan/planner.h"
#include "polyinfer/session.h"
#include "runtime/cost.h"

namespace polyinfer {
namespace {

ir::Graph graph_of(const test::ModelBuilder& b) {
  const std::string bytes = b.bytes();
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(m);
  return *m.graph;
}

const ir::Node& node_named(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

test::ModelBuilder conv_model() {
  test::ModelBuilder b;
  b.input("x", {1, 3, 8, 8}).output("y", {1, 4, 8, 8});
  b.initializer("w", {4, 3, 3, 3}, std::vector<float>(108, 0.1f));
  b.node("Conv", {"x", "w"}, {"y"}, "conv");
  auto* n = b.proto().mutable_graph()->mutable_node(0);
  auto* pads = n->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  return b;
}

TEST(PlanCost, ConvCountsMacsAndItsBytes) {
  const ir::Graph g = graph_of(conv_model());
  const NodeCost c = estimate_cost(node_named(g, "conv"), g);
  EXPECT_EQ(c.cls, OpClass::Conv);
  EXPECT_TRUE(c.known);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * (4 * 8 * 8) * 3 * 9);  // 2 x outputs x C_in x kernel
  EXPECT_DOUBLE_EQ(c.input_bytes, 3 * 64 * 4);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 108 * 4);
  EXPECT_DOUBLE_EQ(c.output_bytes, 4 * 64 * 4);
  // Priced at fp16 activations and int8 weights.
  const NodeCost h =
      estimate_cost(node_named(g, "conv"), g, [](DType, bool w) { return w ? 1.0 : 2.0; });
  EXPECT_DOUBLE_EQ(h.bytes(), 3 * 64 * 2 + 108 * 1 + 4 * 64 * 2);
  EXPECT_DOUBLE_EQ(h.flops, c.flops);
}

TEST(PlanCost, GatherReadsOnlyTheRowsItPicksAndViewsMoveNothing) {
  test::ModelBuilder b;
  b.input("ids", {1, 3}, /*int64*/ 7).output("y", {12, 16});
  b.initializer("table", {1000, 16}, std::vector<float>(16000, 0.f));
  b.initializer("shape", {2}, {12, 16});
  b.node("Gather", {"table", "ids"}, {"e"}, "gather");
  b.node("Cast", {"shape"}, {"shape64"}, "cast");
  auto* cast = b.proto().mutable_graph()->mutable_node(1);
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(7);
  b.node("Concat", {"e", "e", "e", "e"}, {"c"}, "concat");
  auto* concat = b.proto().mutable_graph()->mutable_node(2);
  auto* axis = concat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  b.node("Reshape", {"c", "shape64"}, {"y"}, "reshape");
  const ir::Graph g = graph_of(b);
  const NodeCost gather = estimate_cost(node_named(g, "gather"), g);
  EXPECT_EQ(gather.cls, OpClass::DataMovement);
  EXPECT_DOUBLE_EQ(gather.weight_bytes, 3 * 16 * 4);  // 3 rows, not the 64 KB table
  EXPECT_DOUBLE_EQ(gather.flops, 0);
  const NodeCost reshape = estimate_cost(node_named(g, "reshape"), g);
  EXPECT_EQ(reshape.cls, OpClass::View);
  EXPECT_DOUBLE_EQ(reshape.bytes(), 0);
}

TEST(PlanCost, AnOperatorWithoutAModelIsMemoryOnly) {
  test::ModelBuilder b;
  b.input("x", {2, 5}).output("y", {2, 5});
  b.node("Hardmax", {"x"}, {"h"}, "hardmax").node("NonZero", {"h"}, {"nz"}, "nz");
  b.node("Identity", {"h"}, {"y"}, "id");
  const ir::Graph g = graph_of(b);
  const NodeCost c = estimate_cost(node_named(g, "nz"), g);
  EXPECT_TRUE(c.memory_only);
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.input_bytes, 10 * 4);
  EXPECT_FALSE(c.known);  // NonZero's output count depends on the data
  EXPECT_EQ(estimate_cost(node_named(g, "hardmax"), g).cls, OpClass::Softmax);
}

// Operators of the newer opsets and com.microsoft have FLOP models: MatMulNBits is 2·M·N·K and
// reads its packed weights whole; DeformConv is Conv's multiply-adds plus one bilinear sample per
// input channel, tap and output position (four corners' multiply-adds and the mask: 9).
TEST(PlanCost, MatMulNBitsAndDeformConvCountTheirWork) {
  test::ModelBuilder b(22);
  auto* ms = b.proto().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  b.input("a", {1, 5, 64}).output("y", {1, 5, 32});
  b.int_initializer("w4", {32, 2, 16}, /*uint8*/ 2, std::vector<int32_t>(1024, 0x88));
  b.initializer("scales", {64}, std::vector<float>(64, 0.1f));
  b.node("MatMulNBits", {"a", "w4", "scales"}, {"y"}, "nbits");
  auto* nb = test::last_node(b);
  nb->set_domain("com.microsoft");
  test::set_int(nb, "K", 64);
  test::set_int(nb, "N", 32);
  test::set_int(nb, "bits", 4);
  test::set_int(nb, "block_size", 32);
  b.input("x", {1, 4, 8, 8}).input("offset", {1, 18, 8, 8}).output("z", {1, 6, 8, 8});
  b.initializer("dw", {6, 2, 3, 3}, std::vector<float>(108, 0.1f));
  b.node("DeformConv", {"x", "dw", "offset"}, {"z"}, "deform");
  test::set_int(test::last_node(b), "group", 2);
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  const ir::Graph g = graph_of(b);

  const NodeCost mm = estimate_cost(node_named(g, "nbits"), g);
  EXPECT_EQ(mm.cls, OpClass::MatMul);
  EXPECT_TRUE(mm.known);
  EXPECT_FALSE(mm.memory_only);
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 5 * 32 * 64);     // 2 x M x N x K
  EXPECT_DOUBLE_EQ(mm.weight_bytes, 1024 + 64 * 4);  // packed 4-bit weights and their scales

  const NodeCost dc = estimate_cost(node_named(g, "deform"), g);
  EXPECT_EQ(dc.cls, OpClass::Conv);
  EXPECT_TRUE(dc.known);
  // 2 x 384 outputs x 2 channels per group x 9 taps, and 64 positions x 4 channels x 9 taps
  // samples of 9 operations.
  EXPECT_DOUBLE_EQ(dc.flops, 2.0 * 384 * 2 * 9 + 64.0 * 4 * 9 * 9);
}

// The prediction must equal what a session's first run plans: same order, same size classes,
// same packing. Views share their source's buffer; the output escapes the arena.
TEST(PlanMemory, PredictedArenaEqualsTheSessionsPlannedArena) {
  test::ModelBuilder b;
  b.input("x", {64, 300}).output("y", {300, 64});
  b.initializer("shape", {2}, {300, 64});
  b.node("Relu", {"x"}, {"a"}, "relu")
      .node("Neg", {"a"}, {"n"}, "neg")
      .node("Sigmoid", {"n"}, {"s"}, "sig")
      .node("Add", {"a", "s"}, {"c"}, "add")
      .node("Exp", {"c"}, {"e"}, "exp")
      .node("Mul", {"e", "c"}, {"m"}, "mul")
      .node("Cast", {"shape"}, {"shape64"}, "cast")
      .node("Reshape", {"m", "shape64"}, {"r"}, "reshape")
      .node("Abs", {"r"}, {"y"}, "abs");
  auto* cast = b.proto().mutable_graph()->mutable_node(6);
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(7);
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.optimization_level = 0;
  o.threads = 1;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  std::vector<float> x(64 * 300, 0.5f);
  s.run({{"x", Tensor::from_vector<float>({64, 300}, x)}});
  s.run({{"x", Tensor::from_vector<float>({64, 300}, x)}});

  const plan::ActivationMemory m = plan::simulate_activation_memory(graph_of(b));
  EXPECT_TRUE(m.unknown.empty());
  EXPECT_GT(m.arena_bytes, 0u);
  EXPECT_EQ(m.arena_bytes, s.memory_arena_bytes());
  EXPECT_EQ(m.output_bytes, 64u * 300 * 4);
  EXPECT_LE(m.peak_live_bytes, m.arena_bytes);
  EXPECT_LT(m.arena_bytes, m.total_bytes);  // buffers were reused
}

plan::Target fake_target() {
  plan::Target t;
  t.id = "fake";
  t.name = "Fake chip";
  t.peak[plan::Precision::FP32] = {1e9, true, false, "test", ""};
  t.peak[plan::Precision::FP16] = {4e9, true, false, "test", ""};
  t.bandwidth = {1e8, true, false, "test", ""};
  t.memory = {1e6, true, false, "test", ""};
  t.node_overhead = {1e-6, true, false, "test", ""};
  return t;
}

TEST(PlanRoofline, EachNodeTakesTheLongerOfComputeAndMemoryPlusItsOverhead) {
  const ir::Graph g = graph_of(conv_model());
  const plan::Analysis a = plan::analyze(g, g, plan::Precision::FP32);
  const plan::Target t = fake_target();
  const plan::Prediction p = plan::predict(a, t, g, nullptr);
  const double flops = 2.0 * 256 * 27, bytes = (192 + 108 + 256) * 4.0;
  EXPECT_DOUBLE_EQ(a.flops, flops);
  EXPECT_DOUBLE_EQ(a.bytes, bytes);
  EXPECT_DOUBLE_EQ(p.seconds, std::max(flops / 1e9, bytes / 1e8) + 1e-6);
  EXPECT_EQ(p.bound, "memory");  // 13.8 us of arithmetic, 22.2 us of bytes
  EXPECT_NEAR(p.intensity, flops / bytes, 1e-12);
  EXPECT_DOUBLE_EQ(p.ridge, 10);  // 1 GFLOP/s over 100 MB/s
  ASSERT_EQ(p.classes.size(), 1u);
  EXPECT_EQ(p.classes[0].cls, OpClass::Conv);
  EXPECT_TRUE(p.fits);
}

TEST(PlanRoofline, Int4WeightsCarryTheirBlockScalesAndComputeAtTheFp16Peak) {
  const ir::Graph g = graph_of(conv_model());
  const plan::Analysis a = plan::analyze(g, g, plan::Precision::INT4);
  EXPECT_DOUBLE_EQ(a.parameters, 108);
  EXPECT_DOUBLE_EQ(a.weight_bytes, 108 * (0.5 + 2.0 / 32));
  const plan::Target t = fake_target();
  const plan::Prediction p = plan::predict(a, t, g, nullptr);
  EXPECT_DOUBLE_EQ(p.peak, 4e9);
  EXPECT_EQ(p.peak_precision, plan::Precision::FP16);
  const double bytes = (192 + 256) * 2.0 + 108 * (0.5 + 2.0 / 32);
  EXPECT_DOUBLE_EQ(a.bytes, bytes);
  EXPECT_DOUBLE_EQ(p.seconds, std::max(2.0 * 256 * 27 / 4e9, bytes / 1e8) + 1e-6);
}

TEST(PlanRoofline, WhatDoesNotFitSaysSoAndUnknownFiguresAreNotGuessed) {
  const ir::Graph g = graph_of(conv_model());
  const plan::Analysis a = plan::analyze(g, g, plan::Precision::FP32);
  plan::Target t = fake_target();
  t.memory.value = 100;  // bytes: the weights alone are 432
  EXPECT_FALSE(plan::predict(a, t, g, nullptr).fits);
  t.peak.clear();
  t.bandwidth = {};
  const plan::Prediction p = plan::predict(a, t, g, nullptr);
  EXPECT_DOUBLE_EQ(p.peak, 0);
  EXPECT_DOUBLE_EQ(p.seconds, 1e-6);  // only the overhead is known
  EXPECT_GE(p.notes.size(), 2u);
}

TEST(PlanImport, InputShapesAndSymbolsFlowThroughShapeInference) {
  test::ModelBuilder b;
  b.input("x", {-1, 3}).output("y", {-1, 3});
  b.node("Relu", {"x"}, {"a"}, "relu").node("Neg", {"a"}, {"y"}, "neg");
  const std::string bytes = b.bytes();
  ImportOptions o;
  o.dim_values["N"] = 7;
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "", o);
  infer::infer_types(m);
  const ir::TypeInfo* t = m.graph->type_of("a");
  ASSERT_TRUE(t && t->has_shape);
  EXPECT_EQ(t->dims, (Shape{7, 3}));
  o.dim_values.clear();
  o.input_shapes["x"] = {5, 3};
  m = import_onnx_bytes(bytes.data(), bytes.size(), "", o);
  infer::infer_types(m);
  EXPECT_EQ(m.graph->type_of("a")->dims, (Shape{5, 3}));
  o.input_shapes = {{"z", {1}}};
  try {
    import_onnx_bytes(bytes.data(), bytes.size(), "", o);
    FAIL() << "expected an error for an unknown input";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no input 'z' (its inputs: x)"), std::string::npos)
        << e.what();
  }
}

// An exporter's recorded shapes (value_info, outputs) describe its batch of 1; a new batch
// replaces them instead of stopping inference at the first conflict.
TEST(PlanImport, ANewBatchReplacesTheExportersRecordedShapes) {
  test::ModelBuilder b;
  b.input("x", {1, 3}).output("y", {1, 3});
  b.node("Relu", {"x"}, {"a"}, "relu").node("Neg", {"a"}, {"y"}, "neg");
  auto* vi = b.proto().mutable_graph()->add_value_info();
  vi->set_name("a");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_value(1);
  tt->mutable_shape()->add_dim()->set_dim_value(3);
  const std::string bytes = b.bytes();
  ImportOptions o;
  o.input_shapes["x"] = {8, 3};
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "", o);
  infer::infer_types(m);
  EXPECT_TRUE(m.notes.empty()) << m.notes.front();
  EXPECT_EQ(m.graph->type_of("a")->dims, (Shape{8, 3}));
  EXPECT_EQ(m.graph->type_of("y")->dims, (Shape{8, 3}));
  o.input_shapes["x"] = {8, 3, 1};
  EXPECT_THROW(import_onnx_bytes(bytes.data(), bytes.size(), "", o), Error);  // rank 3 for rank 2
}

void int64_initializer(test::ModelBuilder& b, const std::string& name, std::vector<int64_t> dims,
                       std::vector<int64_t> values) {
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(7);
  for (auto d : dims) t->add_dims(d);
  for (auto v : values) t->add_int64_data(v);
}

// A channel split as torch exports it: the Slice's end comes from Shape → Gather → Div, whose
// values inference carries to the Slice, so the shapes after it are known before any folding.
TEST(PlanImport, ShapesBehindAShapeSubgraphAreInferred) {
  test::ModelBuilder b;
  b.input("x", {1, 6, 2, 2}).output("y", {-1, -1, -1, -1});
  int64_initializer(b, "one", {}, {1});
  int64_initializer(b, "two", {}, {2});
  int64_initializer(b, "zero1", {1}, {0});
  int64_initializer(b, "axes", {1}, {1});
  int64_initializer(b, "axes0", {1}, {0});
  b.node("Shape", {"x"}, {"s"}, "shape")
      .node("Gather", {"s", "one"}, {"c"}, "gather")
      .node("Div", {"c", "two"}, {"h"}, "div")
      .node("Unsqueeze", {"h", "axes0"}, {"hv"}, "unsq")
      .node("Slice", {"x", "zero1", "hv", "axes"}, {"sl"}, "slice")
      .node("Relu", {"sl"}, {"y"}, "relu");
  const std::string bytes = b.bytes();
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  const ir::TypeInfo* declared = m.graph->type_of("y");
  ASSERT_TRUE(declared);
  EXPECT_TRUE(!declared->has_shape || declared->dims[1] < 0) << declared->str();
  infer::infer_types(m);
  EXPECT_EQ(m.graph->type_of("y")->dims, (Shape{1, 3, 2, 2}));
}

// Without reading external data, the weights' shapes are known and their file is still
// checked (a file too short for the tensor stays an error).
TEST(PlanImport, ExternalDataCanBeCheckedWithoutBeingRead) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("pi_plan_ext_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  test::ModelBuilder b;
  b.input("x", {2, 4}).output("y", {2, 3});
  auto* w = b.proto().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(1);
  w->add_dims(4);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("w.bin");
  b.node("MatMul", {"x", "w"}, {"y"}, "mm");
  std::ofstream(dir / "w.bin", std::ios::binary) << std::string(48, '\x01');
  const std::string bytes = b.bytes();
  ImportOptions o;
  o.read_external_data = false;
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), dir.string(), o);
  EXPECT_EQ(m.graph->initializers.at("w").shape(), (Shape{4, 3}));
  Model read = import_onnx_bytes(bytes.data(), bytes.size(), dir.string());
  EXPECT_EQ(static_cast<const uint8_t*>(read.graph->initializers.at("w").raw_data())[0], 1);
  std::ofstream(dir / "w.bin", std::ios::binary | std::ios::trunc) << std::string(40, '\x01');
  EXPECT_THROW(import_onnx_bytes(bytes.data(), bytes.size(), dir.string(), o), Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace polyinfer
