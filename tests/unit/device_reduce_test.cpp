// The reductions of each device provider (every Reduce*, reduce.comp and reduce.cl;
// device_util.h) against cpu-ref: every axis set of a rank-3 input with and without keepdims,
// negative axes, long reductions, empty reductions, NaN, LogSumExp of large and infinite inputs,
// the axes input as a constant, and the refusals (axes computed at run time,
// noop_with_empty_axes).
//
// Tolerance: max and min are exact. Sums run in float32 here and in double on the CPU: n terms
// in [-3, 3] carry a float32 rounding error of about sqrt(n) ulps of the running sum and at most
// n; atol 1e-6 * n (1e-3 for 1000 terms, a partial sum of ~50 having ulps of 4e-6) covers it,
// and a dropped or repeated element (an error of order 1) does not pass. Products, norms and
// logarithms are held to a relative 1e-5: float32 rounding of at most 105 factors is ~105 ulps
// (6e-6) of the result, and sqrt/log halve or shrink relative errors.
#include <cmath>
#include <limits>

#include "device_util.h"
#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

using test::OracleOp;

const std::vector<std::string> kAllOps = {
    "ReduceSum", "ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",
    "ReduceL1",  "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

class DeviceReduce : public test::DeviceTest {
 protected:
  // The attribute form of axes: ReduceSum before 13, the others before 18.
  OracleOp reduce(const std::string& op) const {
    return on_device(op, op == "ReduceSum" ? 11 : 13);
  }
};

TEST_P(DeviceReduce, EveryAxisSet) {
  const std::vector<std::vector<int64_t>> axes_sets = {{},   {0},    {1},      {2},
                                                       {-1}, {0, 2}, {-3, -2}, {0, 1, 2}};
  for (const std::string& op : kAllOps)
    for (const auto& axes : axes_sets)
      for (int64_t keep : {0, 1}) {
        auto o = reduce(op).attr("keepdims", keep);
        if (!axes.empty()) o.attr("axes", axes);
        auto r = o.random({3, 5, 7}).check(1e-6 * 105, 1e-5);
        EXPECT_EQ(r.provider, provider()) << op << " keepdims " << keep << " axes " << axes.size();
      }
}

TEST_P(DeviceReduce, LongEmptyAndNaN) {
  for (const std::string& op : kAllOps) {
    // 1000 factors in [-3, 3] over- or underflow float32; near 1 they do not.
    auto r =
        op == "ReduceProd"
            ? reduce(op)
                  .attr("axes", std::vector<int64_t>{1})
                  .random({4, 1000}, 0.9f, 1.1f)
                  .check(1e-6, 1e-4)
            : reduce(op).attr("axes", std::vector<int64_t>{1}).random({4, 1000}).check(1e-3, 1e-5);
    EXPECT_EQ(r.provider, provider()) << op;
    // Reducing an empty axis: 0, NaN, -inf, +inf, 1 as on the CPU.
    r = reduce(op).attr("axes", std::vector<int64_t>{1}).random({2, 0, 3}).check();
    EXPECT_EQ(r.provider, provider()) << op << " empty";
    std::vector<float> v(12, 1.5f);
    v[5] = std::numeric_limits<float>::quiet_NaN();
    r = reduce(op)
            .attr("axes", std::vector<int64_t>{1})
            .input(Tensor::from_vector<float>({3, 4}, v))
            .check();
    EXPECT_EQ(r.provider, provider()) << op << " NaN";
  }
}

// exp(x) overflows float32 from x = 89: the shift by the maximum keeps these finite, and an
// infinite maximum is the result itself.
TEST_P(DeviceReduce, LogSumExpOfLargeAndInfiniteInputs) {
  const float inf = std::numeric_limits<float>::infinity();
  auto r =
      reduce("ReduceLogSumExp")
          .attr("axes", std::vector<int64_t>{1})
          .input(Tensor::from_vector<float>({3, 3}, {500, 499, 498, -inf, -inf, -inf, 1, inf, 2}))
          .check(1e-4, 1e-6);
  EXPECT_EQ(r.provider, provider());
  // LogSum of a negative sum is NaN, of a zero sum -inf (C's log, which OpenCL follows; GLSL
  // leaves both undefined).
  r = reduce("ReduceLogSum")
          .attr("axes", std::vector<int64_t>{1})
          .input(Tensor::from_vector<float>({2, 2}, {-1, -2, 1, -1}))
          .check();
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceReduce, ConstantAxesInput) {
  for (const auto& [op, opset] : std::vector<std::pair<std::string, int>>{{"ReduceSum", 13},
                                                                          {"ReduceMean", 18},
                                                                          {"ReduceMax", 18},
                                                                          {"ReduceLogSumExp", 18},
                                                                          {"ReduceL2", 18}}) {
    test::ModelBuilder b(opset);
    b.input("x", {2, 3, 4}).output("y", {2, 4});
    b.int64_initializer("axes", {1}, {-2});
    b.node(op, {"x", "axes"}, {"y"}, "reduce");
    auto* n = b.proto().mutable_graph()->mutable_node(0);
    auto* keep = n->add_attribute();
    keep->set_name("keepdims");
    keep->set_type(onnx::AttributeProto::INT);
    keep->set_i(0);
    const std::string bytes = b.bytes();
    SessionOptions o;
    o.optimization_level = 0;
    o.providers = {provider()};
    Session dev = Session::load_bytes(bytes.data(), bytes.size(), o);
    o.providers = {"cpu-ref"};
    Session ref = Session::load_bytes(bytes.data(), bytes.size(), o);
    const Tensor x = test::random_tensor({2, 3, 4});
    const Tensor got = dev.run({{"x", Value(x)}}).at(0).tensor();
    const Tensor want = ref.run({{"x", Value(x)}}).at(0).tensor();
    EXPECT_EQ(got.shape(), want.shape()) << op;
    const auto g = got.to_vector<float>(), w = want.to_vector<float>();
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-5) << op << " " << i;
    EXPECT_EQ(dev.placement().device_copies, 1);  // x; the axes stay on the host
  }
}

TEST_P(DeviceReduce, RefusalsFallBack) {
  auto r = OracleOp("ReduceSum", 13)
               .providers({provider(), "cpu"})
               .random({3, 4})
               .input(Tensor::from_vector<int64_t>({1}, {1}))
               .check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, "cpu");
  r = OracleOp("ReduceMean", 13)
          .providers({provider(), "cpu"})
          .attr("noop_with_empty_axes", int64_t{1})
          .random({3, 4})
          .check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, "cpu");
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceReduce);

}  // namespace
}  // namespace polyinfer
