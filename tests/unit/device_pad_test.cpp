// The Pad kernel of each device provider (pad.comp, pad.cl; device_util.h) against cpu-ref:
// constant, reflect, edge and wrap, pads wider than the input (reflect and wrap go round more than
// once), negative pads (crops), one dimension of size 1, the axes input (18), pads and value as
// attributes (2), as run-time inputs and as constants, an empty input padded with the constant,
// rank 6, int64 data; and the refusals falling back with their reasons. Pad copies or fills:
// tolerance 0.
#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DevicePad : public test::DeviceTest {};

Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>({n}, v);
}

struct PadCase {
  Shape shape;
  std::vector<int64_t> pads;
};

const std::vector<PadCase> kCases = {{{5}, {2, 3}},
                                     {{3, 4}, {1, 2, 2, 1}},
                                     {{3, 4}, {7, 0, 0, 9}},           // wider than the input
                                     {{4, 5}, {-1, 2, 1, -3}},         // crops
                                     {{2, 1, 3}, {0, 2, 1, 1, 3, 0}},  // a dimension of size 1
                                     {{2, 3, 17, 19}, {0, 0, 1, 2, 0, 0, 2, 1}},
                                     {{2, 1, 2, 1, 2, 3}, {0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 2}}};

TEST_P(DevicePad, EveryMode) {
  for (const char* mode : {"constant", "reflect", "edge", "wrap"})
    for (const PadCase& c : kCases) {
      auto o = OracleOp("Pad", 19)
                   .providers({provider()})
                   .attr("mode", std::string(mode))
                   .random(c.shape)
                   .input(ints(c.pads));
      if (std::string(mode) == "constant") o.input(Tensor::from_vector<float>({}, {2.5f}));
      EXPECT_EQ(o.check(0, 0).provider, provider()) << mode << shape_str(c.shape);
      std::vector<Tensor> in = {test::random_tensor(c.shape), ints(c.pads)};
      if (std::string(mode) == "constant") in.push_back(Tensor::from_vector<float>({}, {-1.5f}));
      const auto r =
          test::check_with_constants(std::move(OracleOp("Pad", 19).attr("mode", std::string(mode))),
                                     in, {false, true, true}, {provider()});
      EXPECT_EQ(r.provider, provider()) << mode << shape_str(c.shape);
    }
}

TEST_P(DevicePad, AxesAttributesAndEmpty) {
  // Axes (18): negative and out of order.
  auto r = OracleOp("Pad", 18)
               .providers({provider()})
               .attr("mode", std::string("reflect"))
               .random({3, 4, 5})
               .input(ints({1, 2, 3, 1}))
               .input(Tensor())
               .input(ints({-1, 0}))
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  // Attributes (2): pads and value.
  r = OracleOp("Pad", 2)
          .providers({provider()})
          .attr("pads", std::vector<int64_t>{1, 0, 2, 3})
          .attr("value", 0.75f)
          .random({3, 4})
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  r = OracleOp("Pad", 2)
          .providers({provider()})
          .attr("pads", std::vector<int64_t>{1, 0, 2, 3})
          .attr("mode", std::string("edge"))
          .random({3, 4})
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  // No constant_value: zeros. An empty input padded with the constant.
  r = OracleOp("Pad", 13)
          .providers({provider()})
          .random({2, 3})
          .input(ints({1, 1, 1, 1}))
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  r = OracleOp("Pad", 13)
          .providers({provider()})
          .random({0, 3})
          .input(ints({2, 0, 1, 0}))
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

// Integer data runs on the device (the constant as the bits of one int64), equal to cpu-ref.
TEST_P(DevicePad, Int64Data) {
  auto r = OracleOp("Pad", 13)
               .providers({provider(), "cpu"})
               .input(Tensor::from_vector<int64_t>({2}, {1, 2}))
               .input(ints({1, 1}))
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  r = OracleOp("Pad", 13)
          .providers({provider(), "cpu"})
          .input(Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4}))
          .input(ints({1, 0, 0, 2}))
          .input(Tensor::scalar<int64_t>(-(int64_t{1} << 40) - 3))
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DevicePad, RefusalsFallBackWithTheReason) {
  const auto r = test::check_with_constants(OracleOp("Pad", 13),
                                            {test::random_tensor({1, 1, 1, 1, 1, 1, 2}),
                                             ints({0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1})},
                                            {false, true}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("rank 7"), std::string::npos) << r.reason;
  // wrap before 19: refused by both (the CPU's rule), so the node has no provider.
  try {
    test::check_with_constants(std::move(OracleOp("Pad", 18).attr("mode", std::string("wrap"))),
                               {test::random_tensor({3}), ints({1, 1})}, {false, true},
                               {provider(), "cpu"});
    FAIL() << "wrap ran at opset 18";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mode=wrap"), std::string::npos) << e.what();
  }
}

// More elements than 2 workgroups of 256 cover: the kernel's grid-stride loop.
TEST_P(DevicePad, PastTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 2);
  auto r = OracleOp("Pad", 13)
               .providers({provider()})
               .attr("mode", std::string("reflect"))
               .random({30, 40})
               .input(ints({3, 2, 4, 5}))
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

PI_INSTANTIATE_DEVICE_TESTS(DevicePad);

}  // namespace
}  // namespace polyinfer
