// The Expand and Tile kernels of each device provider (strided copies: copy.comp, copy.cl;
// device_util.h) against cpu-ref: Expand to a larger rank, bidirectionally (a requested 1 keeps
// the input's dimension), to the same shape and from a scalar, with the shape at run time and as
// a constant; Tile with repeats of 0, 1 and more, at run time and as constants; integer data
// (moved as bits: 8-byte elements); and the refusals falling back with their reasons. Copies are
// exact: tolerance 0.
#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceExpand : public test::DeviceTest {};
class DeviceTile : public test::DeviceTest {};

Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>({n}, v);
}

const std::vector<std::pair<Shape, std::vector<int64_t>>> kExpand = {
    {{3, 1}, {2, 3, 5}}, {{1, 4, 1}, {3, 1, 257}},        {{2, 3}, {1, 1}}, {{}, {4, 5}},
    {{5}, {5}},          {{2, 1, 3}, {2, 2, 4, 1, 1, 3}}, {{1, 3}, {0, 3}}};

TEST_P(DeviceExpand, RunTimeShape) {
  for (const auto& [x, s] : kExpand) {
    auto r = OracleOp("Expand", 13).providers({provider()}).random(x).input(ints(s)).check(0, 0);
    EXPECT_EQ(r.provider, provider()) << shape_str(x);
  }
}

TEST_P(DeviceExpand, ConstantShape) {
  for (const auto& [x, s] : kExpand) {
    const auto r = test::check_with_constants(
        OracleOp("Expand", 8), {test::random_tensor(x), ints(s)}, {false, true}, {provider()});
    EXPECT_EQ(r.provider, provider()) << shape_str(x);
  }
}

TEST_P(DeviceExpand, RefusalsFallBackWithTheReason) {
  const auto r = test::check_with_constants(OracleOp("Expand", 13),
                                            {test::random_tensor({3}), ints({1, 1, 1, 1, 1, 2, 3})},
                                            {false, true}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("output rank 7"), std::string::npos) << r.reason;
}

// Integer data (the int64 shape arithmetic and masks of exported models) runs on the device too,
// equal to cpu-ref element for element, with cpu behind it and alone.
TEST_P(DeviceExpand, Int64Data) {
  for (const std::vector<std::string>& providers :
       std::vector<std::vector<std::string>>{{provider(), "cpu"}, {provider()}}) {
    const auto r = OracleOp("Expand", 13)
                       .providers(providers)
                       .input(Tensor::from_vector<int64_t>({2, 1}, {7, -(int64_t{1} << 40)}))
                       .input(ints({3, 2, 3}))
                       .check(0, 0);
    EXPECT_EQ(r.provider, provider());
  }
}

const std::vector<std::pair<Shape, std::vector<int64_t>>> kTile = {
    {{3}, {4}},       {{2, 3}, {1, 1}},   {{2, 3}, {3, 2}}, {{2, 1, 3}, {2, 3, 1}},
    {{5, 7}, {0, 2}}, {{1, 257}, {2, 1}}, {{}, {}}};

TEST_P(DeviceTile, RunTimeAndConstantRepeats) {
  for (const auto& [x, reps] : kTile) {
    auto r = OracleOp("Tile", 13).providers({provider()}).random(x).input(ints(reps)).check(0, 0);
    EXPECT_EQ(r.provider, provider()) << shape_str(x);
    const auto c = test::check_with_constants(
        OracleOp("Tile", 6), {test::random_tensor(x), ints(reps)}, {false, true}, {provider()});
    EXPECT_EQ(c.provider, provider()) << shape_str(x);
  }
}

TEST_P(DeviceTile, RefusalsFallBackWithTheReason) {
  // Rank 4 with every dimension repeated walks 8 dimensions.
  auto r = test::check_with_constants(OracleOp("Tile", 13),
                                      {test::random_tensor({2, 2, 2, 2}), ints({2, 2, 2, 2})},
                                      {false, true}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("8 walked dimensions"), std::string::npos) << r.reason;
  // Repeats at run time: only ranks whose every dimension may repeat within 6.
  r = test::check_with_constants(OracleOp("Tile", 13),
                                 {test::random_tensor({2, 2, 2, 2}), ints({1, 1, 1, 1})},
                                 {false, false}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("repeats computed at run time"), std::string::npos) << r.reason;
}

// More elements than 2 workgroups of 256 cover: the copy kernel's grid-stride loop.
TEST_P(DeviceExpand, PastTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 2);
  auto r = OracleOp("Expand", 13)
               .providers({provider()})
               .random({1, 37})
               .input(ints({29, 37}))
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceExpand);
PI_INSTANTIATE_DEVICE_TESTS(DeviceTile);

}  // namespace
}  // namespace polyinfer
