// The Vulkan Softmax and LogSoftmax kernels (shaders/softmax.comp) against cpu-ref: every axis
// of a rank-4 input under opset 13 (one axis) and opset 11 (flattened at the axis), rows longer
// than a workgroup, large inputs that overflow exp without the max subtracted, more rows than
// the dispatch limit, and NaN propagation.
//
// Tolerance: cpu-ref computes in double and rounds once; the shader uses float32 exp, whose
// error Vulkan bounds by 3 + 2|x| ulp (|x| <= 12 here: at most 27 ulp, 1.6e-6 relative), and
// sums up to thousands of terms in a tree (a few ulp more). rtol 1e-5 covers that; a missing
// max subtraction, a wrong axis or stride gives errors of order 1.
#include <cmath>
#include <limits>

#include "oracle.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

using test::OracleOp;

OracleOp on_vulkan(const std::string& op, int opset) {
  return std::move(OracleOp(op, opset).providers({"vulkan"}));
}

TEST(VulkanSoftmax, EveryAxisBothSemantics) {
  PI_SKIP_WITHOUT_VULKAN();
  const Shape s{3, 5, 7, 11};
  for (const std::string op : {"Softmax", "LogSoftmax"})
    for (int opset : {11, 13})
      for (int64_t axis = -4; axis < 4; ++axis) {
        auto r = on_vulkan(op, opset).attr("axis", axis).random(s, -6, 6).check(1e-6, 1e-5);
        EXPECT_EQ(r.provider, "vulkan") << op << opset << " axis " << axis;
      }
}

TEST(VulkanSoftmax, DefaultAxisAndRowLengths) {
  PI_SKIP_WITHOUT_VULKAN();
  // Rows shorter than, equal to, and longer than the 256 threads that share one.
  for (const Shape& s : std::vector<Shape>{{1, 1}, {4, 1}, {2, 255}, {3, 256}, {5, 257}, {2, 3001}})
    for (int opset : {1, 11, 13}) {
      auto r = on_vulkan("Softmax", opset).random(s, -6, 6).check(1e-6, 1e-5);
      EXPECT_EQ(r.provider, "vulkan") << shape_str(s) << opset;
      r = on_vulkan("LogSoftmax", opset).random(s, -6, 6).check(1e-6, 1e-5);
      EXPECT_EQ(r.provider, "vulkan") << shape_str(s) << opset;
    }
}

TEST(VulkanSoftmax, LargeInputsAreStable) {
  PI_SKIP_WITHOUT_VULKAN();
  // exp(1000) overflows float32: only the max-subtracted form gives finite results.
  auto r = on_vulkan("Softmax", 13).random({4, 33}, 990, 1000).check(1e-6, 1e-5);
  EXPECT_EQ(r.provider, "vulkan");
  r = on_vulkan("LogSoftmax", 13).random({4, 33}, -1000, -990).check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, "vulkan");
}

TEST(VulkanSoftmax, MoreRowsThanTheDispatchLimit) {
  PI_SKIP_WITHOUT_VULKAN();
  test::ScopedGroupLimit limit(4);
  auto r = on_vulkan("Softmax", 13).attr("axis", int64_t{1}).random({3, 9, 5}).check(1e-6, 1e-5);
  EXPECT_EQ(r.provider, "vulkan");
}

TEST(VulkanSoftmax, NaNMakesItsRowNaN) {
  PI_SKIP_WITHOUT_VULKAN();
  std::vector<float> v(3 * 300, 0.5f);
  v[301] = std::numeric_limits<float>::quiet_NaN();
  auto r = on_vulkan("Softmax", 13).input(Tensor::from_vector<float>({3, 300}, v)).check();
  EXPECT_EQ(r.provider, "vulkan");
}

TEST(VulkanSoftmax, HardmaxFallsBack) {
  PI_SKIP_WITHOUT_VULKAN();
  auto r = OracleOp("Hardmax", 13).providers({"vulkan", "cpu"}).random({3, 4}).check();
  EXPECT_EQ(r.provider, "cpu");
}

}  // namespace
}  // namespace polyinfer
