// The Slice kernel of each device provider (a strided copy: copy.comp, copy.cl; device_util.h)
// against cpu-ref: starts/ends/axes/steps as attributes (opset 1), as run-time inputs and as
// constants (10+); negative axes, starts, ends and steps, clamping past either end, empty results,
// a workgroup tail, rank 6, int64 data; and the refusals falling back with their reasons. Copies
// are exact: tolerance 0.
#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceSlice : public test::DeviceTest {};

Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>({n}, v);
}

struct SliceCase {
  Shape shape;
  std::vector<int64_t> starts, ends, axes, steps;  // axes/steps empty: left out
};

const std::vector<SliceCase>& slice_cases() {
  static const std::vector<SliceCase> cases = {
      {{10}, {2}, {7}, {}, {}},
      {{10}, {-3}, {1000}, {}, {}},                     // negative start, end past the end
      {{10}, {8}, {1}, {0}, {-2}},                      // backwards
      {{10}, {-1}, {-1000}, {0}, {-1}},                 // the whole axis reversed
      {{10}, {5}, {5}, {}, {}},                         // empty
      {{3, 5, 7}, {1, -6}, {3, 100}, {1, -1}, {2, 3}},  // negative axis, step past the end
      {{3, 5, 7}, {2, 4, 6}, {-100, -100, -100}, {0, 1, 2}, {-1, -2, -3}},
      {{4, 257}, {0, 1}, {4, 256}, {}, {}},  // a tail past one workgroup
      {{2, 3, 1, 4, 5, 3}, {1, 3, 0}, {2, 0, 5}, {0, 3, 4}, {1, -1, 2}},  // rank 6
  };
  return cases;
}

TEST_P(DeviceSlice, RunTimeInputs) {
  for (const SliceCase& c : slice_cases()) {
    auto o = OracleOp("Slice", 13).providers({provider()}).random(c.shape);
    o.input(ints(c.starts)).input(ints(c.ends));
    if (!c.axes.empty() || !c.steps.empty()) o.input(c.axes.empty() ? Tensor() : ints(c.axes));
    if (!c.steps.empty()) o.input(ints(c.steps));
    EXPECT_EQ(o.check(0, 0).provider, provider()) << shape_str(c.shape);
  }
}

TEST_P(DeviceSlice, ConstantInputs) {
  for (const SliceCase& c : slice_cases()) {
    std::vector<Tensor> in = {test::random_tensor(c.shape), ints(c.starts), ints(c.ends),
                              c.axes.empty() ? Tensor() : ints(c.axes),
                              c.steps.empty() ? Tensor() : ints(c.steps)};
    const auto r = test::check_with_constants(OracleOp("Slice", 13), in,
                                              {false, true, true, true, true}, {provider()});
    EXPECT_EQ(r.provider, provider()) << shape_str(c.shape);
  }
}

TEST_P(DeviceSlice, Attributes) {
  for (const SliceCase& c : slice_cases()) {
    if (!c.steps.empty()) continue;  // opset 1 has no steps
    auto o = OracleOp("Slice", 1).providers({provider()}).random(c.shape);
    o.attr("starts", c.starts).attr("ends", c.ends);
    if (!c.axes.empty()) o.attr("axes", c.axes);
    EXPECT_EQ(o.check(0, 0).provider, provider()) << shape_str(c.shape);
  }
  auto o = OracleOp("Slice", 1).providers({provider()}).random({4, 6});
  o.attr("starts", std::vector<int64_t>{-2, 1})
      .attr("ends", std::vector<int64_t>{100, -1})
      .attr("axes", std::vector<int64_t>{1, 0});
  EXPECT_EQ(o.check(0, 0).provider, provider());
}

// Integer data (the Slices of shape arithmetic) runs on the device, equal to cpu-ref.
TEST_P(DeviceSlice, Int64Data) {
  const auto r = OracleOp("Slice", 13)
                     .providers({provider(), "cpu"})
                     .input(Tensor::from_vector<int64_t>({5}, {1, -2, 3, int64_t{1} << 45, 5}))
                     .input(ints({-1}))
                     .input(ints({0}))
                     .input(ints({0}))
                     .input(ints({-2}))
                     .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceSlice, RefusalsFallBackWithTheReason) {
  const auto r = test::check_with_constants(
      OracleOp("Slice", 13), {test::random_tensor({2, 1, 1, 1, 1, 1, 3}), ints({1}), ints({3})},
      {false, true, true}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("rank 7"), std::string::npos) << r.reason;
}

// More elements than 2 workgroups of 256 cover: the copy kernel's grid-stride loop.
TEST_P(DeviceSlice, PastTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 2);
  auto o = OracleOp("Slice", 13).providers({provider()}).random({40, 61});
  o.input(ints({39, 1})).input(ints({-1000, 60})).input(ints({0, 1})).input(ints({-1, 2}));
  EXPECT_EQ(o.check(0, 0).provider, provider());
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceSlice);

}  // namespace
}  // namespace polyinfer
