// The device ConvTranspose kernels (a gather: Vulkan's shaders/conv_transpose.comp, OpenCL's
// kernels/conv_transpose.cl), on each device provider against cpu-ref (a scatter): 1-D, 2-D and
// 3-D, groups (depthwise included), strides, dilations, asymmetric pads, output_padding,
// output_shape (spatial or whole), every auto_pad, odd sizes, batches, bias, more outputs than
// the dispatch limit, float16 storage, and the refusals (rank 6, other dtypes).
//
// Tolerance: each output sums C/group * taps products in [-1, 1] in float32 on both sides but in
// a different order (the gather walks channel, then tap; the scatter input position, then
// channel), so they differ by float32 reordering: a few ulps of sums of order sqrt(K).
// atol = 1e-6 * K, K = C/group * kernel size, is ~10 ulps of that, while a wrong tap, channel or
// output position is off by order 1.
#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

struct Case {
  Shape x, w;  // X [N, C, D...], W [C, M/group, k...]
  std::vector<int64_t> strides, dilations, pads, output_padding;
  int64_t group = 1;
};

class DeviceConvTranspose : public test::DeviceTest {
 protected:
  OracleOp conv_transpose(const Case& c, bool bias) const;
};

OracleOp DeviceConvTranspose::conv_transpose(const Case& c, bool bias) const {
  auto o = OracleOp("ConvTranspose", 11).providers({provider()});
  o.random(c.x, -1, 1).random(c.w, -1, 1);
  if (bias) o.random({c.w[1] * c.group}, -1, 1);
  if (!c.strides.empty()) o.attr("strides", c.strides);
  if (!c.dilations.empty()) o.attr("dilations", c.dilations);
  if (!c.pads.empty()) o.attr("pads", c.pads);
  if (!c.output_padding.empty()) o.attr("output_padding", c.output_padding);
  o.attr("group", c.group);
  return o;
}

double tol(const Case& c) {
  double k = static_cast<double>(c.x[1] / c.group);
  for (size_t d = 2; d < c.w.size(); ++d) k *= static_cast<double>(c.w[d]);
  return 1e-6 * k;
}

TEST_P(DeviceConvTranspose, OneTwoAndThreeDimensional) {
  const std::vector<Case> cases = {
      {{1, 1, 3, 3}, {1, 2, 3, 3}, {}, {}, {}, {}, 1},
      {{2, 3, 5, 7}, {3, 4, 3, 3}, {2, 2}, {}, {1, 1, 1, 1}, {1, 1}, 1},
      {{1, 4, 6, 5}, {4, 3, 4, 2}, {3, 2}, {1, 2}, {2, 0, 1, 1}, {2, 1}, 1},  // asymmetric
      {{1, 6, 7, 7}, {6, 1, 3, 3}, {2, 2}, {}, {1, 1, 1, 1}, {}, 6},          // depthwise
      {{2, 6, 4, 9}, {6, 2, 2, 3}, {1, 3}, {2, 1}, {0, 1, 1, 0}, {0, 2}, 3},  // groups
      {{1, 3, 11}, {3, 5, 4}, {3}, {2}, {1, 2}, {1}, 1},                      // 1-D
      {{1, 2, 3, 4, 5}, {2, 3, 2, 3, 2}, {2, 1, 2}, {1, 2, 1}, {0, 1, 0, 1, 0, 1}, {1, 0, 0}, 1},
  };
  for (const Case& c : cases)
    for (bool bias : {true, false}) {
      auto r = conv_transpose(c, bias).check(tol(c), 1e-5);
      EXPECT_EQ(r.provider, provider()) << shape_str(c.x) << shape_str(c.w) << " bias " << bias;
    }
}

TEST_P(DeviceConvTranspose, OutputShapeAndAutoPad) {
  const Case c{{1, 3, 5, 6}, {3, 2, 3, 3}, {2, 2}, {}, {}, {}, 1};
  // Larger than the full result (zero-extended at the end), smaller, and as the whole shape.
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{12, 14}, {9, 10}, {1, 2, 11, 13}}) {
    auto r = conv_transpose(c, true).attr("output_shape", shape).check(tol(c), 1e-5);
    EXPECT_EQ(r.provider, provider()) << shape.size();
  }
  for (const std::string pad : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    auto r = conv_transpose(c, true).attr("auto_pad", pad).check(tol(c), 1e-5);
    EXPECT_EQ(r.provider, provider()) << pad;
  }
}

TEST_P(DeviceConvTranspose, MoreOutputsThanTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 2);
  const Case c{{2, 3, 9, 9}, {3, 4, 3, 3}, {2, 2}, {}, {}, {}, 1};
  EXPECT_EQ(conv_transpose(c, true).check(tol(c), 1e-5).provider, provider());
}

TEST_P(DeviceConvTranspose, RefusalsFallBack) {
  // 4-D convolution (rank 6).
  auto r = OracleOp("ConvTranspose", 11)
               .providers({provider(), "cpu"})
               .random({1, 1, 2, 2, 2, 2}, -1, 1)
               .random({1, 1, 2, 2, 2, 2}, -1, 1)
               .check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, "cpu");
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceConvTranspose);

}  // namespace
}  // namespace polyinfer
