// The Softmax and LogSoftmax kernels of each device provider (softmax.comp, softmax.cl;
// device_util.h) against cpu-ref: every axis of a rank-4 input under opset 13 (one axis) and
// opset 11 (flattened at the axis), rows longer than a work-group, large inputs that overflow exp
// without the max subtracted, more rows than the dispatch limit, and NaN propagation.
//
// Tolerance: cpu-ref computes in double and rounds once; the kernels use float32 exp, whose
// error Vulkan bounds by 3 + 2|x| ulp (|x| <= 12 here: at most 27 ulp, 1.6e-6 relative) and
// OpenCL by 3 ulp, and sum up to thousands of terms in a tree (a few ulp more). rtol 1e-5 covers
// that; a missing max subtraction, a wrong axis or stride gives errors of order 1.
#include <cmath>
#include <limits>

#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceSoftmax : public test::DeviceTest {};

TEST_P(DeviceSoftmax, EveryAxisBothSemantics) {
  const Shape s{3, 5, 7, 11};
  for (const std::string op : {"Softmax", "LogSoftmax"})
    for (int opset : {11, 13})
      for (int64_t axis = -4; axis < 4; ++axis) {
        auto r = on_device(op, opset).attr("axis", axis).random(s, -6, 6).check(1e-6, 1e-5);
        EXPECT_EQ(r.provider, provider()) << op << opset << " axis " << axis;
      }
}

TEST_P(DeviceSoftmax, DefaultAxisAndRowLengths) {
  // Rows shorter than, equal to, and longer than the 256 work-items that share one.
  for (const Shape& s : std::vector<Shape>{{1, 1}, {4, 1}, {2, 255}, {3, 256}, {5, 257}, {2, 3001}})
    for (int opset : {1, 11, 13}) {
      auto r = on_device("Softmax", opset).random(s, -6, 6).check(1e-6, 1e-5);
      EXPECT_EQ(r.provider, provider()) << shape_str(s) << opset;
      r = on_device("LogSoftmax", opset).random(s, -6, 6).check(1e-6, 1e-5);
      EXPECT_EQ(r.provider, provider()) << shape_str(s) << opset;
    }
}

TEST_P(DeviceSoftmax, LargeInputsAreStable) {
  // exp(1000) overflows float32: only the max-subtracted form gives finite results.
  auto r = on_device("Softmax", 13).random({4, 33}, 990, 1000).check(1e-6, 1e-5);
  EXPECT_EQ(r.provider, provider());
  r = on_device("LogSoftmax", 13).random({4, 33}, -1000, -990).check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceSoftmax, MoreRowsThanTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 4);
  auto r = on_device("Softmax", 13).attr("axis", int64_t{1}).random({3, 9, 5}).check(1e-6, 1e-5);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceSoftmax, NaNMakesItsRowNaN) {
  std::vector<float> v(3 * 300, 0.5f);
  v[301] = std::numeric_limits<float>::quiet_NaN();
  auto r = on_device("Softmax", 13).input(Tensor::from_vector<float>({3, 300}, v)).check();
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceSoftmax, HardmaxFallsBack) {
  auto r = OracleOp("Hardmax", 13).providers({provider(), "cpu"}).random({3, 4}).check();
  EXPECT_EQ(r.provider, "cpu");
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceSoftmax);

}  // namespace
}  // namespace polyinfer
