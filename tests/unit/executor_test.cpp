// The executor's run-to-run state (runtime/executor.h): value slots kept from run to run with
// the constants bound once, node scopes made once, inputs and outputs passed by address. Runs
// must not see each other: other shapes, a failed run and subgraph scopes all give what a
// fresh session gives, and a run's outputs belong to the caller alone.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

// y = relu((x + c) * x) + x - x * 0.5, over a dynamic length: constants, the graph input read
// by several nodes, and intermediates that die at their reader (lent to the next output).
std::string chain_model() {
  test::ModelBuilder b;
  b.input("x", {-1}).output("y", {-1}).output("mid", {-1});
  b.initializer("c", {1}, {0.25f}).initializer("half", {}, {0.5f});
  b.node("Add", {"x", "c"}, {"t0"});
  b.node("Mul", {"t0", "x"}, {"t1"});
  b.node("Relu", {"t1"}, {"mid"});
  b.node("Add", {"mid", "x"}, {"t3"});
  b.node("Mul", {"x", "half"}, {"t4"});
  b.node("Sub", {"t3", "t4"}, {"y"});
  return b.bytes();
}

std::vector<float> ramp(int64_t n, float start) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + 0.01f * static_cast<float>(i);
  return v;
}

TEST(Executor, ReusedAcrossRunsOfChangingShapesItGivesWhatAFreshSessionGives) {
  const std::string bytes = chain_model();
  SessionOptions opts;
  opts.optimization_level = 0;  // every node runs as written
  Session kept = Session::load_bytes(bytes.data(), bytes.size(), opts);
  std::vector<std::vector<Value>> earlier;
  const std::vector<int64_t> lengths = {5, 3, 1000, 1, 5, 40000};
  for (size_t r = 0; r < lengths.size(); ++r) {
    SCOPED_TRACE("run " + std::to_string(r) + ", length " + std::to_string(lengths[r]));
    const Tensor x = Tensor::from_vector<float>({lengths[r]}, ramp(lengths[r], -1.5f + r));
    std::vector<Value> got = kept.run({{"x", x}});
    Session fresh = Session::load_bytes(bytes.data(), bytes.size(), opts);
    const std::vector<Value> want = fresh.run({{"x", x}});
    ASSERT_EQ(got.size(), 2u);
    for (size_t k = 0; k < 2; ++k)
      EXPECT_EQ(got[k].tensor().to_vector<float>(), want[k].tensor().to_vector<float>());
    earlier.push_back(std::move(got));
  }
  // Later runs wrote nothing over the outputs of earlier ones.
  for (size_t r = 0; r < lengths.size(); ++r) {
    const Tensor x = Tensor::from_vector<float>({lengths[r]}, ramp(lengths[r], -1.5f + r));
    Session fresh = Session::load_bytes(bytes.data(), bytes.size(), opts);
    EXPECT_EQ(earlier[r][0].tensor().to_vector<float>(),
              fresh.run({{"x", x}})[0].tensor().to_vector<float>())
        << "run " << r;
  }
}

TEST(Executor, KeepsNothingOfARunOnceItReturns) {
  const std::string bytes = chain_model();
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  for (int r = 0; r < 3; ++r) {
    std::vector<Value> out = s.run({{"x", Tensor::from_vector<float>({8}, ramp(8, 0.5f))}});
    // "mid" is a graph output that another node reads too: the slot gave it up all the same.
    for (const Value& v : out) EXPECT_TRUE(v.tensor().sole_owner()) << "run " << r;
  }
}

TEST(Executor, AFailedRunLeavesNothingForTheNext) {
  test::ModelBuilder b;
  b.input("x", {-1}).input("z", {4}).output("y", {4});
  b.node("Neg", {"x"}, {"t"});
  b.node("Add", {"t", "z"}, {"y"}, "add");
  const std::string bytes = b.bytes();
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  const Tensor z = Tensor::from_vector<float>({4}, {1, 2, 3, 4});
  for (int r = 0; r < 2; ++r) {
    // [3] + [4] does not broadcast: the second node throws, naming itself.
    try {
      s.run({{"x", Tensor::from_vector<float>({3}, {1, 1, 1})}, {"z", z}});
      ADD_FAILURE() << "a run that cannot broadcast returned";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("add"), std::string::npos) << e.what();
    }
    std::vector<Value> out =
        s.run({{"x", Tensor::from_vector<float>({4}, {1, 1, 1, 1})}, {"z", z}});
    EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{0, 1, 2, 3}));
    EXPECT_TRUE(out[0].tensor().sole_owner());
  }
}

// An If whose branches read x and a constant from the enclosing graph: the node's scope, made
// once, holds this run's x on every run.
TEST(Executor, SubgraphScopesSeeEachRunsValues) {
  test::ModelBuilder b;
  b.input("c", {}, 9).input("x", {2}).output("y", {2});
  b.initializer("k", {2}, {10, 20});
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
    n->set_op_type(attr[0] == 't' ? "Add" : "Sub");
    n->set_name(std::string(attr) + "_op");
    n->add_input("x");  // both from the outer scope
    n->add_input("k");
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
  for (int r = 0; r < 4; ++r) {
    const bool c = r % 2 == 0;
    Tensor cond = Tensor::empty(DType::Bool, {});
    *cond.data<bool>() = c;
    const float v = static_cast<float>(r);
    std::vector<Value> out = s.run({{"c", cond}, {"x", Tensor::from_vector<float>({2}, {v, -v})}});
    const std::vector<float> want =
        c ? std::vector<float>{v + 10, 20 - v} : std::vector<float>{v - 10, -v - 20};
    EXPECT_EQ(out[0].tensor().to_vector<float>(), want) << "run " << r;
  }
  // Profiling counts each run once: the If four times, each branch's node twice.
  const std::vector<NodeProfile> p = s.profile();
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].calls, 4);
  EXPECT_EQ(p[1].calls + p[2].calls, 4);
  EXPECT_EQ(p[1].calls, 2);
}

}  // namespace
}  // namespace polyinfer
