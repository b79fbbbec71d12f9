// Session::profile(): one record per top-level node with its placement, call counts that follow
// the runs (and reset_profile()), FLOPs from static shapes or the first run. No timing claims
// beyond "not negative": the machine may be loaded.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

// x[N,3] · W[3,4] → Relu → + b → y. Optimization off, so that the nodes stay as written.
Session small_model(bool profile, int64_t batch) {
  test::ModelBuilder b;
  b.input("x", {batch, 3}).output("y", {batch, 4});
  b.initializer("w", {3, 4}, std::vector<float>(12, 0.5f));
  b.initializer("b", {4}, {1, 2, 3, 4});
  b.node("MatMul", {"x", "w"}, {"xw"}, "mm");
  b.node("Relu", {"xw"}, {"r"}, "relu");
  b.node("Add", {"r", "b"}, {"y"}, "bias");
  SessionOptions o;
  o.optimization_level = 0;
  o.profile = profile;
  const std::string bytes = b.bytes();
  return Session::load_bytes(bytes.data(), bytes.size(), o);
}

std::map<std::string, Value> feeds(int64_t batch) {
  return {
      {"x", Value(Tensor::from_vector<float>({batch, 3}, std::vector<float>(batch * 3, 1.0f)))}};
}

TEST(Profile, EveryNodeAppearsWithItsPlacementAndCallsFollowTheRuns) {
  Session s = small_model(true, 2);
  for (int i = 0; i < 3; ++i) s.run(feeds(2));
  const auto prof = s.profile();
  const auto& nodes = s.placement().nodes;
  ASSERT_EQ(prof.size(), 3u);
  ASSERT_EQ(nodes.size(), 3u);
  const char* names[] = {"mm", "relu", "bias"};
  const char* ops[] = {"MatMul", "Relu", "Add"};
  for (size_t i = 0; i < prof.size(); ++i) {
    EXPECT_EQ(prof[i].node, names[i]);
    EXPECT_EQ(prof[i].op, ops[i]);
    EXPECT_EQ(prof[i].provider, nodes[i].provider);
    EXPECT_EQ(prof[i].impl, nodes[i].impl);
    EXPECT_EQ(prof[i].calls, 3) << prof[i].node;
    EXPECT_GE(prof[i].total_ms, 0.0) << prof[i].node;
  }
  // MatMul [2,3]x[3,4]: 2*3*4 multiply-adds; elementwise ops one per output element.
  EXPECT_DOUBLE_EQ(prof[0].flops, 2.0 * 2 * 3 * 4);
  EXPECT_DOUBLE_EQ(prof[1].flops, 8.0);
  EXPECT_DOUBLE_EQ(prof[2].flops, 8.0);
}

TEST(Profile, ResetZeroesTheCountsAndLaterRunsCountAgain) {
  Session s = small_model(true, 2);
  s.run(feeds(2));
  s.reset_profile();
  for (const auto& r : s.profile()) {
    EXPECT_EQ(r.calls, 0) << r.node;
    EXPECT_EQ(r.total_ms, 0.0) << r.node;
  }
  s.run(feeds(2));
  s.run(feeds(2));
  for (const auto& r : s.profile()) EXPECT_EQ(r.calls, 2) << r.node;
}

TEST(Profile, OffByDefaultListsNodesWithFlopsButNoTimings) {
  Session s = small_model(false, 2);
  s.run(feeds(2));
  const auto prof = s.profile();
  ASSERT_EQ(prof.size(), 3u);
  for (const auto& r : prof) {
    EXPECT_EQ(r.calls, 0) << r.node;
    EXPECT_EQ(r.total_ms, 0.0) << r.node;
  }
  EXPECT_DOUBLE_EQ(prof[0].flops, 48.0);
}

// Each kernel's creation time, profiling on or off. A model this small has its kernels created
// one after another (no helper threads below 16 nodes) inside the session's kernel phase, so
// their sum fits in it: a time in the wrong unit would not.
TEST(Profile, KernelCreationTimesAddUpWithinTheKernelPhase) {
  for (bool profile : {false, true}) {
    Session s = small_model(profile, 2);
    double sum = 0;
    for (const auto& r : s.profile()) {
      EXPECT_GE(r.create_ms, 0.0) << r.node;
      sum += r.create_ms;
    }
    EXPECT_GT(sum, 0.0);
    EXPECT_LE(sum, s.creation_times().kernels_ms);
  }
}

TEST(Profile, DynamicShapesGetTheirFlopsFromTheFirstRun) {
  Session s = small_model(true, -1);
  const auto before = s.profile();
  ASSERT_EQ(before.size(), 3u);
  EXPECT_LT(before[0].flops, 0) << "the batch is not known before a run";
  s.run(feeds(5));
  const auto after = s.profile();
  EXPECT_DOUBLE_EQ(after[0].flops, 2.0 * 5 * 3 * 4);
  EXPECT_DOUBLE_EQ(after[2].flops, 20.0);
  EXPECT_EQ(after[0].calls, 1);
}

TEST(Profile, SubgraphNodesFollowTheNodeThatRunsThem) {
  test::ModelBuilder b;
  b.input("c", {}, 9).input("x", {2}).output("y", {2});
  auto* ifn = b.proto().mutable_graph()->add_node();
  ifn->set_op_type("If");
  ifn->set_name("branch");
  ifn->add_input("c");
  ifn->add_output("y");
  for (const char* attr : {"then_branch", "else_branch"}) {
    auto* a = ifn->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(attr);
    auto* n = g->add_node();
    n->set_op_type(attr[0] == 't' ? "Neg" : "Identity");
    n->set_name(std::string(attr) + "_op");
    n->add_input("x");  // from the outer scope
    n->add_output("out");
    auto* o = g->add_output();
    o->set_name("out");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(1);
    o->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  }
  SessionOptions opts;
  opts.optimization_level = 0;
  opts.profile = true;
  const std::string bytes = b.bytes();
  Session s = Session::load_bytes(bytes.data(), bytes.size(), opts);
  const Value x(Tensor::from_vector<float>({2}, {1, -2}));
  for (bool c : {true, false, true}) {
    Tensor cond = Tensor::empty(DType::Bool, {});
    cond.data<bool>()[0] = c;
    s.run({{"c", Value(cond)}, {"x", x}});
  }
  // The If, then each branch's node, named with where it sits; the If keeps the time outside
  // its branches' kernels, so the rows add up to the run.
  const auto prof = s.profile();
  ASSERT_EQ(prof.size(), 3u);
  EXPECT_EQ(prof[0].node, "branch");
  EXPECT_EQ(prof[0].op, "If");
  EXPECT_EQ(prof[0].calls, 3);
  EXPECT_EQ(prof[1].node, "then_branch_op (in branch.then_branch)");
  EXPECT_EQ(prof[1].op, "Neg");
  EXPECT_EQ(prof[1].calls, 2);
  EXPECT_EQ(prof[2].node, "else_branch_op (in branch.else_branch)");
  EXPECT_EQ(prof[2].calls, 1);
  s.reset_profile();
  EXPECT_EQ(s.profile()[1].calls, 0) << "reset reaches the bodies";
}

}  // namespace
}  // namespace polyinfer
