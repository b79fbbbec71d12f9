// The Where kernel of each device provider (where.comp, where.cl; device_util.h) against cpu-ref:
// same shapes, broadcasting of each of the three inputs up to rank 6, odd sizes (conditions whose
// bytes end inside a 32-bit word), a workgroup tail, constant inputs (the condition uploaded once),
// int64 X and Y, and the refusals falling back with their reasons. Where selects, it computes
// nothing: tolerance 0.
#include <array>
#include <random>

#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceWhere : public test::DeviceTest {};

Tensor random_bool(const Shape& s, uint32_t seed) {
  Tensor t = Tensor::empty(DType::Bool, s);
  std::mt19937 gen(seed);
  bool* p = t.data<bool>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = (gen() & 1) != 0;
  return t;
}

const std::vector<std::array<Shape, 3>> kCases = {
    {Shape{1}, Shape{1}, Shape{1}},
    {Shape{7}, Shape{7}, Shape{7}},
    {Shape{3, 257}, Shape{3, 257}, Shape{3, 257}},
    {Shape{5, 1}, Shape{1, 3}, Shape{}},
    {Shape{}, Shape{4, 5}, Shape{5}},
    {Shape{2, 1, 3, 1, 5, 1}, Shape{1, 4, 1, 6, 1, 7}, Shape{7}},
    {Shape{0, 3}, Shape{1, 3}, Shape{3}}};

TEST_P(DeviceWhere, RunTimeInputs) {
  uint32_t seed = 1;
  for (const auto& [c, x, y] : kCases) {
    auto r = OracleOp("Where", 16)
                 .providers({provider()})
                 .input(random_bool(c, seed++))
                 .random(x)
                 .random(y)
                 .check(0, 0);
    EXPECT_EQ(r.provider, provider()) << shape_str(c) << shape_str(x) << shape_str(y);
  }
}

TEST_P(DeviceWhere, ConstantInputs) {
  uint32_t seed = 11;
  for (const auto& [c, x, y] : kCases) {
    const std::vector<Tensor> in = {random_bool(c, seed++), test::random_tensor(x, seed++),
                                    test::random_tensor(y, seed++)};
    for (const std::vector<bool>& constant : std::vector<std::vector<bool>>{
             {true, false, false}, {false, true, true}, {true, true, false}}) {
      const auto r = test::check_with_constants(OracleOp("Where", 9), in, constant, {provider()});
      EXPECT_EQ(r.provider, provider()) << shape_str(c) << shape_str(x) << shape_str(y);
    }
  }
}

// Integer X and Y (the masks' selects) run on the device (8-byte elements), equal to cpu-ref.
TEST_P(DeviceWhere, Int64Data) {
  const auto r = OracleOp("Where", 16)
                     .providers({provider(), "cpu"})
                     .input(random_bool({3, 1}, 3))
                     .input(Tensor::from_vector<int64_t>({4}, {1, -2, 3, int64_t{1} << 36}))
                     .input(Tensor::from_vector<int64_t>({1}, {-(int64_t{1} << 62)}))
                     .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceWhere, RefusalsFallBackWithTheReason) {
  const auto r = test::check_with_constants(
      OracleOp("Where", 16),
      {random_bool({1, 1, 1, 1, 1, 1, 4}, 4), test::random_tensor({4}), test::random_tensor({4})},
      {false, false, false}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("rank 7"), std::string::npos) << r.reason;
}

// More elements than 2 workgroups of 256 cover: the kernel's grid-stride loop.
TEST_P(DeviceWhere, PastTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 2);
  auto r = OracleOp("Where", 16)
               .providers({provider()})
               .input(random_bool({33, 1}, 9))
               .random({33, 47})
               .random({47})
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceWhere);

}  // namespace
}  // namespace polyinfer
