// The Split kernel of each device provider (strided copies: copy.comp, copy.cl; device_util.h)
// against cpu-ref: sizes by attribute (11), by run-time and constant input (1, 13), equal parts,
// num_outputs (18) with a smaller last part, empty parts, negative axes, int64 data; and the
// refusal of rank 7 falling back with its reason. Copies are exact: tolerance 0.
#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceSplit : public test::DeviceTest {};

Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>({n}, v);
}

TEST_P(DeviceSplit, Attribute) {
  for (int64_t axis : {0, 1, -1, -3}) {
    auto r = OracleOp("Split", 11)
                 .providers({provider()})
                 .attr("axis", axis)
                 .attr("split", std::vector<int64_t>{1, 0, 2})
                 .random({3, 3, 3})
                 .outputs(3)
                 .check(0, 0);
    EXPECT_EQ(r.provider, provider()) << axis;
  }
  // Equal parts, one per output.
  EXPECT_EQ(OracleOp("Split", 11)
                .providers({provider()})
                .attr("axis", int64_t{1})
                .random({2, 258, 3})
                .outputs(2)
                .check(0, 0)
                .provider,
            provider());
}

TEST_P(DeviceSplit, Inputs) {
  for (int64_t axis : {2, -2}) {
    auto r = OracleOp("Split", 13)
                 .providers({provider()})
                 .attr("axis", axis)
                 .random({2, 5, 7})
                 .input(axis == 2 ? ints({3, 4}) : ints({3, 2}))
                 .outputs(2)
                 .check(0, 0);
    EXPECT_EQ(r.provider, provider()) << axis;
    const auto c = test::check_with_constants(
        OracleOp("Split", 13).attr("axis", axis),
        {test::random_tensor({2, 5, 7}), axis == 2 ? ints({3, 4}) : ints({3, 2})}, {false, true},
        {provider()}, 0, 0, 2);
    EXPECT_EQ(c.provider, provider()) << axis;
  }
  // num_outputs (18): 7 into 3 parts is 3, 3, 1.
  auto r = OracleOp("Split", 18)
               .providers({provider()})
               .attr("axis", int64_t{-1})
               .attr("num_outputs", int64_t{3})
               .random({4, 7})
               .outputs(3)
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  // Opset 1 takes the sizes from an input too.
  r = OracleOp("Split", 1)
          .providers({provider()})
          .random({6, 2})
          .input(ints({2, 4}))
          .outputs(2)
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

// Integer data runs on the device, equal to cpu-ref.
TEST_P(DeviceSplit, Int64Data) {
  const auto r = OracleOp("Split", 13)
                     .providers({provider(), "cpu"})
                     .input(Tensor::from_vector<int64_t>({5}, {1, 2, -3, int64_t{1} << 40, 5}))
                     .input(ints({2, 3}))
                     .outputs(2)
                     .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceSplit, RefusalsFallBackWithTheReason) {
  const auto r = test::check_with_constants(
      std::move(OracleOp("Split", 13).attr("axis", int64_t{6})),
      {test::random_tensor({1, 1, 1, 1, 1, 1, 4})}, {false}, {provider(), "cpu"}, 0, 0, 2);
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("rank 7"), std::string::npos) << r.reason;
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceSplit);

}  // namespace
}  // namespace polyinfer
