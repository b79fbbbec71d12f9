// The optimizer and the kernels inside subgraphs (If, Loop, Scan bodies; docs/optimizer.md,
// "Subgraphs"): each body is optimized in its enclosing graph's scope, its rewrites are checked
// here by the body's operators after optimize(), and every model is run on `cpu` (fast kernels) at
// levels 1-3 against `cpu-ref` at level 0, the oracle.
#include <gtest/gtest.h>

#include "opt_test_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;

using test::attach;
using test::body_of;

Value boolean(bool v) { return Value(Tensor::scalar<bool>(v)); }

// "FusedGemm Identity": a graph's operators in order, for failure messages.
std::string ops(const ir::Graph& g) {
  std::string s;
  for (const auto& n : g.nodes) s += (s.empty() ? "" : " ") + n.op_type;
  return s;
}

// Largest difference over float outputs (relative to max(1, |want|)); other dtypes must be
// equal.
double max_diff(const std::vector<Value>& got, const std::vector<Value>& want) {
  EXPECT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const Tensor& a = got[i].tensor();
    const Tensor& b = want[i].tensor();
    EXPECT_EQ(a.shape(), b.shape()) << "output " << i;
    EXPECT_EQ(a.dtype(), b.dtype()) << "output " << i;
    if (a.shape() != b.shape() || a.dtype() != b.dtype()) return 1e9;
    if (a.dtype() != DType::Float32) {
      EXPECT_EQ(a.to_vector<int64_t>(), b.to_vector<int64_t>()) << "output " << i;
      continue;
    }
    worst = std::max(worst, test::max_rel_diff({got[i]}, {want[i]}));
  }
  return worst;
}

// The model on `cpu` at levels 1-3 agrees with `cpu-ref` at level 0.
void expect_matches_reference(const std::string& bytes, const std::map<std::string, Value>& in,
                              double tol = 1e-4) {
  const auto want = test::run_model(bytes, 0, in, "cpu-ref");
  for (int level = 1; level <= 3; ++level)
    EXPECT_LE(max_diff(test::run_model(bytes, level, in, "cpu"), want), tol) << "level " << level;
}

void conv_attrs(onnx::NodeProto* n) {
  test::set_ints(n, "kernel_shape", {3, 3});
  test::set_ints(n, "pads", {1, 1, 1, 1});
}

// An If whose branches hold Conv + Relu (weights in the branch) and Conv + Clip: each branch
// becomes one fused convolution, and the session runs them on the fast kernels.
std::string if_conv_model() {
  ModelBuilder b(13);
  b.input("x", {1, 3, 8, 8}).input("c", {}, 9).output("y", {1, 4, 8, 8});
  b.node("If", {"c"}, {"y"}, "branch");
  onnx::NodeProto* node = test::last_node(b);
  ModelBuilder then_b(13), else_b(13);
  then_b.output("t_out", {1, 4, 8, 8});
  test::random_initializer(then_b, "tw", {4, 3, 3, 3}, 1);
  test::random_initializer(then_b, "tb", {4}, 2);
  then_b.node("Conv", {"x", "tw", "tb"}, {"t_conv"}, "t_conv");
  conv_attrs(test::last_node(then_b));
  then_b.node("Relu", {"t_conv"}, {"t_out"}, "t_relu");
  else_b.output("e_out", {1, 4, 8, 8});
  test::random_initializer(else_b, "ew", {4, 3, 3, 3}, 3);
  else_b.initializer("lo", {}, {0.f}).initializer("hi", {}, {6.f});
  else_b.node("Neg", {"x"}, {"e_neg"}, "e_neg");
  else_b.node("Conv", {"e_neg", "ew"}, {"e_conv"}, "e_conv");
  conv_attrs(test::last_node(else_b));
  else_b.node("Clip", {"e_conv", "lo", "hi"}, {"e_out"}, "e_clip");
  attach(node, "then_branch", then_b);
  attach(node, "else_branch", else_b);
  return b.bytes();
}

TEST(OptSubgraph, IfBranchesFuseConvAndActivation) {
  const std::string bytes = if_conv_model();
  Model m = test::import_bytes(bytes);
  const opt::OptimizeReport r = opt::optimize(*m.graph, 2);
  const ir::Graph& t = body_of(*m.graph, "If", "then_branch");
  const ir::Graph& e = body_of(*m.graph, "If", "else_branch");
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.nodes[0].op_type, "FusedConv");
  EXPECT_EQ(opt::attr_string(t.nodes[0], "activation", ""), "Relu");
  EXPECT_EQ(t.nodes[0].outputs[0], "t_out") << "a body's outputs keep their names";
  EXPECT_EQ(test::count_op(e, "FusedConv", opt::kPolyDomain), 1);
  EXPECT_EQ(test::count_op(e, "Clip"), 0);
  EXPECT_TRUE(r.polyinfer_only);
  EXPECT_TRUE(m.graph->opsets.count(opt::kPolyDomain)) << "the top level declares a body's domain";
  EXPECT_EQ(r.nodes_before, 6);
  EXPECT_EQ(r.nodes_after, 4);
  for (bool c : {true, false})
    expect_matches_reference(
        bytes, {{"x", Value(test::random_tensor({1, 3, 8, 8}, 5))}, {"c", boolean(c)}});
}

// The body's nodes are profiled with the kernels the top level would get, and the If keeps only
// the time outside its bodies.
TEST(OptSubgraph, BodyNodesGetTheFastKernelsAndAppearInTheProfile) {
  const std::string bytes = if_conv_model();
  SessionOptions o;
  o.providers = {"cpu"};
  o.threads = 1;
  o.optimization_level = 2;
  o.profile = true;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  s.run({{"x", Value(test::random_tensor({1, 3, 8, 8}, 5))}, {"c", boolean(true)}});
  const auto prof = s.profile();
  ASSERT_EQ(prof.size(), 4u);  // If; then: FusedConv; else: Neg, FusedConv
  EXPECT_EQ(prof[0].op, "If");
  EXPECT_EQ(prof[1].op, "ai.polyinfer.FusedConv");
  EXPECT_EQ(prof[1].node, "t_conv (in branch.then_branch)");
  EXPECT_EQ(prof[1].calls, 1);
  EXPECT_EQ(prof[3].op, "ai.polyinfer.FusedConv");
  EXPECT_EQ(prof[3].calls, 0) << "the else branch did not run";
  EXPECT_EQ(prof[1].impl.rfind("reference", 0), std::string::npos) << prof[1].impl;
  EXPECT_EQ(prof[3].impl.rfind("reference", 0), std::string::npos) << prof[3].impl;
}

// A body reads the enclosing graph's weights (as PyTorch exports a loop's) and a value the
// enclosing graph computes. The weights are constants inside the body too: MatMul + Add fuse
// and a Mul of two constants folds; the computed value is never folded, and no outer name moves.
std::string outer_scope_model() {
  ModelBuilder b(13);
  b.input("x", {4, 16}).input("c", {}, 9).output("y", {4, 8});
  test::random_initializer(b, "W", {16, 8}, 11);
  test::random_initializer(b, "bias", {8}, 12);
  b.initializer("k", {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  b.node("Relu", {"x"}, {"s"}, "outer_relu");
  b.node("If", {"c"}, {"y"}, "branch");
  onnx::NodeProto* node = test::last_node(b);
  ModelBuilder then_b(13), else_b(13);
  then_b.output("t_out", {4, 8});
  then_b.initializer("two", {}, {2.f});
  then_b.node("MatMul", {"s", "W"}, {"t_mm"}, "t_mm");
  then_b.node("Add", {"t_mm", "bias"}, {"t_add"}, "t_add");
  then_b.node("Mul", {"k", "two"}, {"t_k2"}, "t_k2");  // both constant: folds
  then_b.node("Add", {"t_add", "t_k2"}, {"t_out"}, "t_out");
  else_b.output("e_out", {4, 8});
  else_b.node("MatMul", {"x", "W"}, {"e_mm"}, "e_mm");
  else_b.node("Mul", {"e_mm", "k"}, {"e_out"}, "e_mul");
  attach(node, "then_branch", then_b);
  attach(node, "else_branch", else_b);
  return b.bytes();
}

TEST(OptSubgraph, BodySeesOuterWeightsAsConstantsAndOuterValuesAsValues) {
  const std::string bytes = outer_scope_model();
  Model m = test::import_bytes(bytes);
  opt::optimize(*m.graph, 2);
  const ir::Graph& t = body_of(*m.graph, "If", "then_branch");
  EXPECT_EQ(test::count_op(t, "Mul"), 0) << "k * two is folded inside the body";
  // 2-D with a constant weight and bias: MatMul + Add become a Gemm (matmul-add-gemm), which
  // needs the outer value's rank: the enclosing graph's type of it is seen in the body too.
  ASSERT_EQ(test::count_op(t, "Gemm"), 1) << ops(t);
  EXPECT_EQ(test::count_op(t, "MatMul"), 0) << ops(t);
  for (const auto& n : t.nodes)
    if (n.op_type == "Gemm") {
      EXPECT_EQ(n.inputs[0], "s") << "the computed outer value is read as it was";
      EXPECT_EQ(n.inputs[1], "W");
    }
  EXPECT_EQ(test::count_op(*m.graph, "Relu"), 1) << "the outer value the body reads stays";
  EXPECT_TRUE(m.graph->initializers.count("W"));
  const ir::Node& ifn = m.graph->nodes.back();
  EXPECT_EQ(std::count(ifn.implicit_inputs.begin(), ifn.implicit_inputs.end(), "s"), 1);
  for (bool c : {true, false})
    expect_matches_reference(bytes,
                             {{"x", Value(test::random_tensor({4, 16}, 6))}, {"c", boolean(c)}});
  // The fused product inside the body prepacks the enclosing graph's weight: not the reference.
  SessionOptions o;
  o.providers = {"cpu"};
  o.optimization_level = 2;
  o.profile = true;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  for (const auto& r : s.profile()) {
    if (r.op == "Gemm") {
      EXPECT_EQ(r.impl.rfind("reference", 0), std::string::npos) << r.node << ": " << r.impl;
    }
  }
}

// Loop(M, "", v) whose body is MatMul + Add + the erf GELU decomposition (constants as Constant
// nodes and initializers): one FusedGemm with a Gelu activation after optimize (2-D: MatMul + Add
// is a Gemm first).
std::string loop_gelu_model() {
  ModelBuilder b(13);
  b.input("v0", {2, 8}).output("v", {2, 8}).output("trace", {3, 2, 8});
  b.int64_initializer("trips", {}, {3});
  b.node("Loop", {"trips", "", "v0"}, {"v", "trace"}, "loop");
  onnx::NodeProto* node = test::last_node(b);
  ModelBuilder body(13);
  body.input("i", {}, 7).input("cond_in", {}, 9).input("v_in", {2, 8});
  body.output("cond_out", {}, 9).output("v_out", {2, 8}).output("scan", {2, 8});
  test::random_initializer(body, "w", {8, 8}, 21, -0.5f, 0.5f);
  test::random_initializer(body, "b", {8}, 22);
  body.initializer("sqrt2", {}, {1.4142135f}).initializer("one", {}, {1.f});
  body.node("Constant", {}, {"half"}, "half");
  auto* half = test::last_node(body)->add_attribute();
  half->set_name("value");
  half->set_type(onnx::AttributeProto::TENSOR);
  half->mutable_t()->set_data_type(1);
  half->mutable_t()->add_float_data(0.5f);
  body.node("Identity", {"cond_in"}, {"cond_out"}, "cond");
  body.node("MatMul", {"v_in", "w"}, {"mm"}, "mm");
  body.node("Add", {"mm", "b"}, {"pre"}, "bias");
  body.node("Div", {"pre", "sqrt2"}, {"g1"}, "g1");
  body.node("Erf", {"g1"}, {"g2"}, "g2");
  body.node("Add", {"g2", "one"}, {"g3"}, "g3");
  body.node("Mul", {"pre", "g3"}, {"g4"}, "g4");
  body.node("Mul", {"g4", "half"}, {"v_out"}, "g5");
  body.node("Neg", {"v_out"}, {"scan"}, "scan");
  attach(node, "body", body);
  return b.bytes();
}

TEST(OptSubgraph, LoopBodyFusesMatMulBiasAndGelu) {
  const std::string bytes = loop_gelu_model();
  Model m = test::import_bytes(bytes);
  opt::optimize(*m.graph, 2);
  const ir::Graph& body = body_of(*m.graph, "Loop", "body");
  ASSERT_EQ(test::count_op(body, "FusedGemm", opt::kPolyDomain), 1) << ops(body);
  for (const auto& n : body.nodes) {
    if (n.op_type == "FusedGemm") {
      EXPECT_EQ(opt::attr_string(n, "activation", ""), "Gelu");
    }
  }
  EXPECT_EQ(test::count_op(body, "Erf"), 0);
  EXPECT_EQ(test::count_op(body, "MatMul"), 0);
  EXPECT_EQ(test::count_op(body, "Constant"), 0);
  ASSERT_EQ(body.inputs.size(), 3u);
  EXPECT_EQ(body.inputs[2].name, "v_in") << "formal inputs keep their names";
  ASSERT_EQ(body.outputs.size(), 3u);
  EXPECT_EQ(body.outputs[0].name, "cond_out");
  EXPECT_EQ(body.outputs[1].name, "v_out");
  expect_matches_reference(bytes, {{"v0", Value(test::random_tensor({2, 8}, 7))}});
}

// A Loop whose carried value grows by a row per iteration: Shape of it inside the body is not a
// constant, whatever the first iteration's shape is.
TEST(OptSubgraph, LoopBodyWhoseShapesChangePerIteration) {
  ModelBuilder b(13);
  b.input("v0", {1, 3}).input("row", {1, 3}).output("v", {-1, 3}).output("shapes", {4, 2}, 7);
  b.int64_initializer("trips", {}, {4});
  b.node("Loop", {"trips", "", "v0"}, {"v", "shapes"}, "loop");
  onnx::NodeProto* node = test::last_node(b);
  ModelBuilder body(13);
  body.input("i", {}, 7).input("cond_in", {}, 9).input("v_in", {-1, 3});
  body.output("cond_out", {}, 9).output("v_out", {-1, 3}).output("shape", {2}, 7);
  body.initializer("scale", {1, 3}, {1, 2, 3});
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.node("Mul", {"row", "scale"}, {"scaled"});  // `row` from the enclosing graph
  body.node("Relu", {"scaled"}, {"r"});
  body.node("Concat", {"v_in", "r"}, {"v_out"}, "grow");
  test::set_int(test::last_node(body), "axis", 0);
  body.node("Shape", {"v_in"}, {"shape"});
  attach(node, "body", body);
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  opt::optimize(*m.graph, 3);
  EXPECT_EQ(test::count_op(body_of(*m.graph, "Loop", "body"), "Shape"), 1);
  const std::map<std::string, Value> in = {{"v0", Value(test::random_tensor({1, 3}, 8))},
                                           {"row", Value(test::random_tensor({1, 3}, 9))}};
  expect_matches_reference(bytes, in);
  const auto got = test::run_model(bytes, 3, in, "cpu");
  EXPECT_EQ(got[0].tensor().shape(), (Shape{5, 3}));
  EXPECT_EQ(got[1].tensor().to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 2, 3, 3, 3, 4, 3}));
}

// Scan over 5 steps of an RNN-like body: Relu(MatMul(h + x_t, W) + b) becomes one FusedGemm.
TEST(OptSubgraph, ScanBodyFusesMatMulBiasRelu) {
  ModelBuilder b(11);
  b.input("h0", {1, 8}).input("xs", {5, 1, 8}).output("h", {1, 8}).output("ys", {5, 1, 8});
  b.node("Scan", {"h0", "xs"}, {"h", "ys"}, "scan");
  onnx::NodeProto* node = test::last_node(b);
  test::set_int(node, "num_scan_inputs", 1);
  ModelBuilder body(11);
  body.input("h_in", {1, 8}).input("x_t", {1, 8});
  body.output("h_out", {1, 8}).output("y_t", {1, 8});
  test::random_initializer(body, "w", {8, 8}, 31, -0.5f, 0.5f);
  test::random_initializer(body, "bb", {8}, 32);
  body.node("Add", {"h_in", "x_t"}, {"sum"});
  body.node("MatMul", {"sum", "w"}, {"mm"});
  body.node("Add", {"mm", "bb"}, {"pre"});
  body.node("Relu", {"pre"}, {"h_out"});
  body.node("Identity", {"h_out"}, {"y_t"});
  attach(node, "body", body);
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  opt::optimize(*m.graph, 2);
  const ir::Graph& g = body_of(*m.graph, "Scan", "body");
  EXPECT_EQ(test::count_op(g, "FusedGemm", opt::kPolyDomain), 1) << ops(g);
  EXPECT_EQ(test::count_op(g, "Relu"), 0);
  expect_matches_reference(bytes, {{"h0", Value(test::random_tensor({1, 8}, 10, -1, 1))},
                                   {"xs", Value(test::random_tensor({5, 1, 8}, 11, -1, 1))}});
}

// An If inside a Loop body. Its branch reads a value the Loop body computes (dead-node
// elimination there must keep it) and a weight of the top level, two scopes up; both bodies are
// optimized.
TEST(OptSubgraph, NestedBodiesAreOptimizedWithTheirScopes) {
  ModelBuilder b(13);
  b.input("v0", {2, 8}).input("c", {}, 9).output("v", {2, 8});
  b.int64_initializer("trips", {}, {2});
  test::random_initializer(b, "W", {8, 8}, 41, -0.5f, 0.5f);
  b.node("Loop", {"trips", "", "v0"}, {"v"}, "loop");
  onnx::NodeProto* loop = test::last_node(b);
  ModelBuilder body(13);
  body.input("i", {}, 7).input("cond_in", {}, 9).input("v_in", {2, 8});
  body.output("cond_out", {}, 9).output("v_out", {2, 8});
  body.initializer("k", {8}, {1, 0.5f, 0.25f, 2, 1, 1, 1, 1});
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.node("Mul", {"v_in", "k"}, {"u"}, "only_read_inside");  // read by the If's branches only
  body.node("If", {"c"}, {"v_out"}, "inner");
  onnx::NodeProto* inner = test::last_node(body);
  ModelBuilder then_b(13), else_b(13);
  then_b.output("t_out", {2, 8});
  test::random_initializer(then_b, "tb", {8}, 42);
  then_b.node("MatMul", {"u", "W"}, {"t_mm"});
  then_b.node("Add", {"t_mm", "tb"}, {"t_pre"});
  then_b.node("Relu", {"t_pre"}, {"t_out"});
  else_b.output("e_out", {2, 8});
  else_b.node("Neg", {"u"}, {"e_out"});
  attach(inner, "then_branch", then_b);
  attach(inner, "else_branch", else_b);
  attach(loop, "body", body);
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  opt::optimize(*m.graph, 2);
  const ir::Graph& lb = body_of(*m.graph, "Loop", "body");
  EXPECT_EQ(test::count_op(lb, "Mul"), 1) << "u stays: a nested body reads it";
  const ir::Graph& t = body_of(lb, "If", "then_branch");
  ASSERT_EQ(t.nodes.size(), 1u) << ops(t);
  EXPECT_EQ(t.nodes[0].op_type, "FusedGemm");
  EXPECT_EQ(t.nodes[0].inputs[0], "u");
  EXPECT_EQ(t.nodes[0].inputs[1], "W");
  for (bool c : {true, false})
    expect_matches_reference(
        bytes, {{"v0", Value(test::random_tensor({2, 8}, 12, -1, 1))}, {"c", boolean(c)}});
}

}  // namespace
}  // namespace polyinfer
