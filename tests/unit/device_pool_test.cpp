// The pooling kernels of each device provider (pool.comp, pool.cl; device_util.h) against cpu-ref:
// MaxPool and AveragePool in 1-D and 2-D with strides, dilations, asymmetric pads, auto_pad,
// ceil_mode and count_include_pad; GlobalAveragePool and GlobalMaxPool over 1 to 3 spatial
// dimensions; more outputs than the dispatch limit; and the refusals (Indices output, 3-D windows).
//
// Tolerance: max is exact; averages add the same taps in the same order as the CPU (one
// rounding each) and divide once, so they agree to a few ulps (rtol 1e-6, atol for sums near 0).
#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DevicePool : public test::DeviceTest {
 protected:
};

TEST_P(DevicePool, MaxAndAverageWindows) {
  struct Case {
    Shape x;
    std::vector<int64_t> kernel, strides, dilations, pads;
    int64_t ceil;
  };
  const std::vector<Case> cases = {
      {{1, 1, 8, 8}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 0},
      {{2, 3, 9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0},
      {{2, 3, 9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1},
      {{1, 4, 13, 7}, {3, 2}, {2, 3}, {1, 1}, {0, 1, 2, 0}, 1},
      {{1, 2, 10, 10}, {2, 3}, {1, 2}, {2, 2}, {1, 0, 1, 2}, 0},
      {{3, 5, 17}, {4}, {3}, {1}, {1, 2}, 1},
      {{1, 3, 33, 35}, {7, 7}, {1, 1}, {1, 1}, {3, 3, 3, 3}, 0},
      // ceil_mode's last window reaches past the end padding: those taps count for no divisor.
      {{1, 2, 8, 10}, {3, 3}, {2, 2}, {1, 1}, {0, 1, 0, 1}, 1}};
  for (const Case& c : cases) {
    for (int64_t include_pad : {0, 1}) {
      auto o = OracleOp("AveragePool", 19).providers({provider()});
      o.attr("kernel_shape", c.kernel).attr("strides", c.strides).attr("pads", c.pads);
      o.attr("dilations", c.dilations).attr("ceil_mode", c.ceil);
      o.attr("count_include_pad", include_pad);
      EXPECT_EQ(o.random(c.x).check(1e-6, 1e-6).provider, provider()) << shape_str(c.x);
    }
    auto o = OracleOp("MaxPool", 12).providers({provider()});
    o.attr("kernel_shape", c.kernel).attr("strides", c.strides).attr("pads", c.pads);
    o.attr("dilations", c.dilations).attr("ceil_mode", c.ceil);
    EXPECT_EQ(o.random(c.x).check(0, 0).provider, provider()) << shape_str(c.x);
  }
}

TEST_P(DevicePool, AutoPad) {
  for (const std::string pad : {"SAME_UPPER", "SAME_LOWER", "VALID"})
    for (const std::string op : {"MaxPool", "AveragePool"}) {
      auto o = OracleOp(op, 11).providers({provider()});
      o.attr("auto_pad", pad).attr("kernel_shape", std::vector<int64_t>{3, 2});
      o.attr("strides", std::vector<int64_t>{2, 2});
      EXPECT_EQ(o.random({2, 3, 10, 7}).check(1e-6, 1e-6).provider, provider()) << op << pad;
    }
}

TEST_P(DevicePool, Global) {
  for (const Shape& s :
       std::vector<Shape>{{1, 3, 7}, {2, 5, 7, 7}, {1, 512, 7, 7}, {2, 3, 4, 5, 6}, {1, 1, 1, 1}}) {
    auto r = OracleOp("GlobalAveragePool", 1).providers({provider()}).random(s).check(1e-6, 1e-6);
    EXPECT_EQ(r.provider, provider()) << shape_str(s);
    r = OracleOp("GlobalMaxPool", 1).providers({provider()}).random(s).check(0, 0);
    EXPECT_EQ(r.provider, provider()) << shape_str(s);
  }
}

TEST_P(DevicePool, MoreOutputsThanTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 2);
  auto o = OracleOp("MaxPool", 12).providers({provider()});
  o.attr("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_EQ(o.random({2, 3, 20, 20}).check(0, 0).provider, provider());
}

TEST_P(DevicePool, RefusalsFallBack) {
  // MaxPool's Indices, and a 3-D window.
  auto o = OracleOp("MaxPool", 12).providers({provider(), "cpu"}).outputs(2);
  o.attr("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_EQ(o.random({1, 2, 4, 4}).check().provider, "cpu");
  auto p = OracleOp("AveragePool", 19).providers({provider(), "cpu"});
  p.attr("kernel_shape", std::vector<int64_t>{2, 2, 2});
  EXPECT_EQ(p.random({1, 2, 4, 4, 4}).check().provider, "cpu");
}

PI_INSTANTIATE_DEVICE_TESTS(DevicePool);

}  // namespace
}  // namespace polyinfer
