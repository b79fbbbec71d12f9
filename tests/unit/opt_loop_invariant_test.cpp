// Loop-invariant code motion (src/opt/loop_invariant_motion.cpp): loop-carried values a body
// returns unchanged become reads of the Loop's initial values, and body nodes whose inputs are
// all invariant move before the Loop. Checked by the graphs' structure and by running every
// model on `cpu` at levels 1-3 against `cpu-ref` at level 0, the oracle.
#include <gtest/gtest.h>

#include <algorithm>

#include "opt_test_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::attach;
using test::body_of;
using test::ModelBuilder;

std::string ops(const ir::Graph& g) {
  std::string s;
  for (const auto& n : g.nodes) s += (s.empty() ? "" : " ") + n.op_type;
  return s;
}

void expect_matches_reference(const std::string& bytes, const std::map<std::string, Value>& in) {
  const auto want = test::run_model(bytes, 0, in, "cpu-ref");
  for (int level = 1; level <= 3; ++level) {
    const auto got = test::run_model(bytes, level, in, "cpu");
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].tensor().shape(), want[i].tensor().shape()) << "output " << i;
      EXPECT_LE(test::max_rel_diff({got[i]}, {want[i]}), 1e-5)
          << "output " << i << " level " << level;
    }
  }
}

// As Paddle exports a decoder: Loop(M, "", h0, W, X) where the body returns the weight W and the
// encoder output X unchanged and updates h:
//   h_out = Tanh(MatMul(h_in, Transpose(W_in)) + MatMul(X_in, W2)),  scan = h_out.
// W is a top-level weight, X = Relu(x) is computed, W2 is the body's own. `m` is the trip count
// (an input, so a run may make it 0) unless `trips` is given as a constant.
std::string decoder_model(int64_t trips = -1) {
  ModelBuilder b(13);
  b.input("h0", {2, 8}).input("x", {2, 8});
  if (trips < 0) b.input("m", {}, 7);
  b.output("h", {2, 8}).output("w_final", {8, 8}).output("x_final", {2, 8});
  b.output("trace", {-1, 2, 8});
  if (trips >= 0) test::int64_initializer(b, "m", {}, {trips});
  test::random_initializer(b, "W", {8, 8}, 51, -0.5f, 0.5f);
  b.node("Relu", {"x"}, {"X"}, "encoder");
  b.node("Loop", {"m", "", "h0", "W", "X"}, {"h", "w_final", "x_final", "trace"}, "loop");
  onnx::NodeProto* loop = test::last_node(b);
  ModelBuilder body(13);
  body.input("i", {}, 7).input("cond_in", {}, 9);
  body.input("h_in", {2, 8}).input("W_in", {8, 8}).input("X_in", {2, 8});
  body.output("cond_out", {}, 9).output("h_out", {2, 8}).output("W_in", {8, 8});
  body.output("X_in", {2, 8}).output("scan", {2, 8});
  test::random_initializer(body, "W2", {8, 8}, 52, -0.5f, 0.5f);
  body.node("Identity", {"cond_in"}, {"cond_out"}, "cond");
  body.node("Transpose", {"W_in"}, {"Wt"}, "wt");
  test::set_ints(test::last_node(body), "perm", {1, 0});
  body.node("MatMul", {"h_in", "Wt"}, {"a"}, "state");
  body.node("MatMul", {"X_in", "W2"}, {"xp"}, "project");
  body.node("Add", {"a", "xp"}, {"pre"}, "sum");
  body.node("Tanh", {"pre"}, {"h_out"}, "act");
  body.node("Identity", {"h_out"}, {"scan"}, "trace");
  attach(loop, "body", body);
  return b.bytes();
}

std::map<std::string, Value> decoder_inputs(int64_t trips) {
  std::map<std::string, Value> in = {{"h0", Value(test::random_tensor({2, 8}, 61, -1, 1))},
                                     {"x", Value(test::random_tensor({2, 8}, 62, -1, 1))}};
  if (trips >= 0) in["m"] = Value(Tensor::scalar<int64_t>(trips));
  return in;
}

TEST(OptLoopInvariant, CarriedWeightsBecomeConstantsAndInvariantNodesMoveOut) {
  const std::string bytes = decoder_model();
  Model m = test::import_bytes(bytes);
  const opt::OptimizeReport r = opt::optimize(*m.graph, 2);
  int moved = 0;
  for (const auto& [name, n] : r.rewrites)
    if (name == "loop-invariants") moved = n;
  // W and X become outer reads (2); Transpose(W) and MatMul(X, W2) move out (2).
  EXPECT_EQ(moved, 4);
  const ir::Graph& g = *m.graph;
  const ir::Graph& body = body_of(g, "Loop", "body");
  EXPECT_EQ(test::count_op(body, "Transpose"), 0) << ops(body);
  EXPECT_EQ(test::count_op(g, "Transpose"), 0) << "Transpose(W) folded before the Loop";
  EXPECT_EQ(test::count_op(g, "MatMul"), 1)
      << "MatMul(X, W2) runs once, before the Loop: " << ops(g);
  // The body's remaining product reads the folded weight from outside: a constant there.
  int products = 0;
  for (const auto& n : body.nodes) {
    if (n.op_type != "MatMul" && n.op_type != "FusedMatMul") continue;
    ++products;
    EXPECT_EQ(n.inputs[0], "h_in");
    EXPECT_TRUE(g.initializers.count(n.inputs[1])) << n.inputs[1] << " is a top-level constant";
  }
  EXPECT_EQ(products, 1) << ops(body);
  // The formal inputs are still returned as they came: the Loop's outputs do not change.
  ASSERT_EQ(body.inputs.size(), 5u);
  ASSERT_EQ(body.outputs.size(), 5u);
  EXPECT_EQ(body.outputs[2].name, body.inputs[3].name);
  EXPECT_EQ(body.outputs[3].name, body.inputs[4].name);
  EXPECT_TRUE(opt::is_topological(g));
  for (int64_t trips : {1, 3}) expect_matches_reference(bytes, decoder_inputs(trips));
}

// M = 0 at run time: the moved nodes run once and their results go unread; the Loop returns
// its initial values and an empty trace.
TEST(OptLoopInvariant, ZeroTripsReturnTheInitialValues) {
  const std::string bytes = decoder_model();
  const auto in = decoder_inputs(0);
  expect_matches_reference(bytes, in);
  const auto got = test::run_model(bytes, 3, in, "cpu");
  EXPECT_EQ(got[0].tensor().to_vector<float>(), in.at("h0").tensor().to_vector<float>());
  EXPECT_EQ(got[3].tensor().shape(), (Shape{0, 2, 8}));
}

// A Loop whose trip count is the constant 0 is left as it is.
TEST(OptLoopInvariant, ConstantZeroTripLoopIsLeftAlone) {
  Model m = test::import_bytes(decoder_model(0));
  auto pass = opt::make_loop_invariant_motion();
  EXPECT_EQ(pass->run(*m.graph), 0);
  expect_matches_reference(decoder_model(0), decoder_inputs(-1));
}

// The pass alone, exported and loaded again: valid ONNX computing what the original does.
TEST(OptLoopInvariant, RewrittenModelIsValidOnnx) {
  auto pass = opt::make_loop_invariant_motion();
  Model m = test::run_pass_and_compare(decoder_model(3), *pass, 4, 1e-6);
  const ir::Graph& body = body_of(*m.graph, "Loop", "body");
  EXPECT_EQ(test::count_op(body, "Transpose"), 0);
  EXPECT_EQ(test::count_op(*m.graph, "Transpose"), 1) << "moved; folding is another pass's";
}

// What stays in the body: a random operator, a node whose output the body returns, a node with
// a subgraph, and anything reading the updated state.
TEST(OptLoopInvariant, VariantRandomReturnedAndSubgraphNodesStay) {
  ModelBuilder b(13);
  b.input("h0", {2, 4}).input("x", {2, 4}).input("c", {}, 9);
  b.output("h", {2, 4}).output("x_final", {2, 4}).output("negs", {3, 2, 4});
  b.output("noise", {3, 2, 4}).output("picked", {3, 2, 4});
  test::int64_initializer(b, "m", {}, {3});
  b.node("Loop", {"m", "", "h0", "x"}, {"h", "x_final", "negs", "noise", "picked"}, "loop");
  onnx::NodeProto* loop = test::last_node(b);
  ModelBuilder body(13);
  body.input("i", {}, 7).input("cond_in", {}, 9).input("h_in", {2, 4}).input("x_in", {2, 4});
  body.output("cond_out", {}, 9).output("h_out", {2, 4}).output("x_in", {2, 4});
  body.output("neg", {2, 4}).output("noise_t", {2, 4}).output("pick", {2, 4});
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.node("Add", {"h_in", "x_in"}, {"h_out"}, "update");   // reads the state: stays
  body.node("Neg", {"x_in"}, {"neg"}, "returned");           // a formal output: stays
  body.node("RandomNormalLike", {"x_in"}, {"r"}, "random");  // random: stays
  body.node("Mul", {"r", "r"}, {"noise_t"}, "square");       // reads the random value
  body.node("If", {"c"}, {"pick"}, "branch");                // has a subgraph: stays
  onnx::NodeProto* inner = test::last_node(body);
  ModelBuilder then_b(13), else_b(13);
  then_b.output("t", {2, 4});
  then_b.node("Abs", {"x_in"}, {"t"});
  else_b.output("e", {2, 4});
  else_b.node("Neg", {"x_in"}, {"e"});
  attach(inner, "then_branch", then_b);
  attach(inner, "else_branch", else_b);
  attach(loop, "body", body);
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  auto pass = opt::make_loop_invariant_motion();
  EXPECT_EQ(pass->run(*m.graph), 1) << "x becomes an outer read; no node moves";
  const ir::Graph& lb = body_of(*m.graph, "Loop", "body");
  for (const char* op : {"Add", "Neg", "RandomNormalLike", "Mul", "If"})
    EXPECT_EQ(test::count_op(lb, op), 1) << op << " in " << ops(lb);
  // The If's branches read the outer x now, and the Loop lists it among its implicit inputs.
  const ir::Graph& then_g = body_of(lb, "If", "then_branch");
  EXPECT_EQ(then_g.nodes[0].inputs[0], "x");
  const ir::Node& ln = m.graph->nodes.back();
  EXPECT_NE(std::find(ln.implicit_inputs.begin(), ln.implicit_inputs.end(), "x"),
            ln.implicit_inputs.end());
  // Outputs other than the random ones agree with the reference (the noise is a new draw).
  for (bool c : {true, false}) {
    const std::map<std::string, Value> in = {{"h0", Value(test::random_tensor({2, 4}, 71))},
                                             {"x", Value(test::random_tensor({2, 4}, 72))},
                                             {"c", Value(Tensor::scalar<bool>(c))}};
    const auto want = test::run_model(bytes, 0, in, "cpu-ref");
    const auto got = test::run_model(bytes, 3, in, "cpu");
    for (size_t o : {0, 1, 2, 4})
      EXPECT_LE(test::max_rel_diff({got[o]}, {want[o]}), 1e-6) << "output " << o;
    EXPECT_EQ(got[3].tensor().shape(), (Shape{3, 2, 4}));
  }
}

// A body that defines a value named like the Loop's initial value would hide the outer value
// from its nodes: that carried input is left as it is.
TEST(OptLoopInvariant, BodyHidingTheOuterNameKeepsTheCarriedInput) {
  ModelBuilder b(13);
  b.input("h0", {2, 4}).input("x", {2, 4}).output("h", {2, 4}).output("x_final", {2, 4});
  test::int64_initializer(b, "m", {}, {2});
  b.node("Loop", {"m", "", "h0", "x"}, {"h", "x_final"}, "loop");
  onnx::NodeProto* loop = test::last_node(b);
  ModelBuilder body(13);
  body.input("i", {}, 7).input("cond_in", {}, 9).input("h_in", {2, 4}).input("x_in", {2, 4});
  body.output("cond_out", {}, 9).output("h_out", {2, 4}).output("x_in", {2, 4});
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.node("Neg", {"h_in"}, {"x"}, "hides");
  body.node("Add", {"x", "x_in"}, {"h_out"}, "update");
  attach(loop, "body", body);
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  auto pass = opt::make_loop_invariant_motion();
  EXPECT_EQ(pass->run(*m.graph), 0);
  EXPECT_EQ(body_of(*m.graph, "Loop", "body").inputs[3].name, "x_in");
  expect_matches_reference(bytes, {{"h0", Value(test::random_tensor({2, 4}, 81))},
                                   {"x", Value(test::random_tensor({2, 4}, 82))}});
}

}  // namespace
}  // namespace polyinfer
