// The device Conv and FusedConv kernels (implicit GEMM: Vulkan's shaders/conv.comp, OpenCL's
// kernels/conv.cl), on each device provider against cpu-ref: 1-D and 2-D, groups (depthwise
// included), strides, dilations, asymmetric pads, every auto_pad, channel and position counts
// that leave partial 64x64 tiles and partial K steps, batches, bias, FusedConv's residual Z and
// activations, float16 storage; and the refusals (3-D, other dtypes).
//
// Tolerance: both sides sum each output's taps in the same order (input channel, kernel row,
// column) in float32 and add the bias after; they differ only by fused multiply-adds, at most one
// rounding per tap. K = C/group * kh * kw taps of products in [-1, 1] give sums of order
// sqrt(K); atol = 1e-6 * K is ~10 ulps of that, while a wrong tap or channel is off by order 1.
#include <cmath>

#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceConv : public test::DeviceTest {
 protected:
  OracleOp conv(const Shape& x, const Shape& w, bool bias = true) const {
    auto o = OracleOp("Conv", 11).providers({provider()});
    o.random(x, -1, 1).random(w, -1, 1);
    if (bias) o.random({w[0]}, -1, 1);
    return o;
  }
};

double tol(const Shape& w) {
  double k = 1;
  for (size_t d = 1; d < w.size(); ++d) k *= static_cast<double>(w[d]);
  return 1e-6 * k;
}

TEST_P(DeviceConv, TwoDimensional) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, dilations, pads;
    int64_t group;
  };
  const std::vector<Case> cases = {
      {{1, 1, 8, 8}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},
      {{2, 3, 9, 11}, {5, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1},
      {{1, 3, 17, 13}, {70, 3, 5, 3}, {2, 1}, {1, 1}, {2, 1, 0, 2}, 1},    // > 64 channels
      {{1, 17, 10, 10}, {66, 17, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},  // K = 17
      {{1, 8, 12, 12}, {8, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 8},     // depthwise
      {{2, 6, 11, 9}, {9, 2, 3, 2}, {1, 2}, {2, 1}, {2, 0, 1, 1}, 3},      // groups, dilations
      {{1, 4, 70, 3}, {4, 4, 3, 3}, {1, 1}, {3, 1}, {3, 1, 3, 1}, 1},      // > 64 positions
      {{1, 2, 5, 5}, {3, 2, 5, 5}, {3, 3}, {1, 1}, {2, 2, 2, 2}, 1}};
  for (const Case& c : cases)
    for (bool bias : {true, false}) {
      auto o = conv(c.x, c.w, bias);
      o.attr("strides", c.strides).attr("dilations", c.dilations).attr("pads", c.pads);
      o.attr("group", c.group);
      auto r = o.check(tol(c.w), 1e-5);
      EXPECT_EQ(r.provider, provider()) << shape_str(c.x) << shape_str(c.w);
    }
}

TEST_P(DeviceConv, AutoPad) {
  for (const std::string pad : {"SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"})
    for (int64_t s : {1, 2}) {
      auto o = conv({1, 3, 10, 7}, {4, 3, 4, 3});
      o.attr("auto_pad", pad).attr("strides", std::vector<int64_t>{s, s});
      auto r = o.check(tol({4, 3, 4, 3}), 1e-5);
      EXPECT_EQ(r.provider, provider()) << pad << s;
    }
}

TEST_P(DeviceConv, OneDimensional) {
  auto o = conv({2, 4, 50}, {6, 2, 5});
  o.attr("strides", std::vector<int64_t>{2}).attr("pads", std::vector<int64_t>{3, 1});
  o.attr("dilations", std::vector<int64_t>{2}).attr("group", int64_t{2});
  EXPECT_EQ(o.check(tol({6, 2, 5}), 1e-5).provider, provider());
}

// Groups of 2 and of 12 output channels: OpenCL's direct kernel and its tiled one.
TEST_P(DeviceConv, MoreImagesThanTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 2);
  for (int64_t m : {4, 24}) {
    auto o = conv({5, 4, 6, 6}, {m, 2, 3, 3});
    o.attr("group", int64_t{2}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    EXPECT_EQ(o.check(tol({m, 2, 3, 3}), 1e-5).provider, provider()) << m;
  }
}

TEST_P(DeviceConv, FusedConvWithResidualAndActivations) {
  struct Act {
    const char* name;
    std::vector<float> params;
  };
  const std::vector<Act> acts = {
      {"", {}},          {"Relu", {}}, {"LeakyRelu", {0.2f}}, {"Clip", {0.f, 6.f}},
      {"HardSwish", {}}, {"Silu", {}}, {"Sigmoid", {}},       {"Gelu", {}}};
  // 5 and 20 output channels: OpenCL's direct kernel and its tiled one.
  for (const Act& a : acts)
    for (bool z : {false, true})
      for (int64_t m : {5, 20}) {
        auto o = OracleOp("FusedConv", 1, "ai.polyinfer").providers({provider()});
        o.attr("pads", std::vector<int64_t>{1, 1, 1, 1});
        o.attr("strides", std::vector<int64_t>{2, 2});
        if (*a.name) o.attr("activation", std::string(a.name)).attr("activation_params", a.params);
        o.random({2, 6, 9, 9}, -1, 1).random({m, 6, 3, 3}, -1, 1).random({m}, -1, 1);
        if (z) o.random({2, m, 5, 5}, -1, 1);
        auto r = o.check(tol({m, 6, 3, 3}), 1e-5);
        EXPECT_EQ(r.provider, provider()) << a.name << z << m;
      }
}

TEST_P(DeviceConv, RefusalsFallBack) {
  auto r = OracleOp("Conv", 11)
               .providers({provider(), "cpu"})
               .random({1, 2, 4, 4, 4})
               .random({3, 2, 2, 2, 2})
               .check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, "cpu");
  try {
    OracleOp("Conv", 11)
        .providers({provider()})
        .random({1, 2, 4, 4, 4})
        .random({3, 2, 2, 2, 2})
        .check();
    FAIL() << "a 3-D Conv ran on " << provider() << " alone";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp) << e.what();
    EXPECT_NE(std::string(e.what()).find("1-D and 2-D"), std::string::npos) << e.what();
  }
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceConv);

}  // namespace
}  // namespace polyinfer
