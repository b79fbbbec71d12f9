// The Vulkan data-movement kernels against cpu-ref: Transpose (every permutation of rank 3, the
// default reversal, rank 6) and Concat (every axis, unequal parts, one part, an empty part) on
// shaders/copy.comp; Reshape, Flatten, Squeeze, Unsqueeze and Identity as views, with their
// shape and axes inputs given at run time and as constants; int64 data (shape arithmetic) on
// both; the rank refusals falling back. Copies are exact: tolerance 0.
#include <algorithm>

#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

using test::OracleOp;

OracleOp on_vulkan(const std::string& op, int opset = 13) {
  return std::move(OracleOp(op, opset).providers({"vulkan"}));
}

TEST(VulkanLayout, Transpose) {
  PI_SKIP_WITHOUT_VULKAN();
  std::vector<int64_t> perm = {0, 1, 2};
  do {
    auto r = on_vulkan("Transpose").attr("perm", perm).random({3, 5, 7}).check(0, 0);
    EXPECT_EQ(r.provider, "vulkan") << perm[0] << perm[1] << perm[2];
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(on_vulkan("Transpose").random({2, 3, 4, 5}).check(0, 0).provider, "vulkan");
  auto r = on_vulkan("Transpose")
               .attr("perm", std::vector<int64_t>{5, 0, 3, 1, 4, 2})
               .random({2, 3, 1, 4, 5, 3})
               .check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
  EXPECT_EQ(on_vulkan("Transpose").random({0, 3}).check(0, 0).provider, "vulkan");
}

TEST(VulkanLayout, Concat) {
  PI_SKIP_WITHOUT_VULKAN();
  for (int64_t axis = -3; axis < 3; ++axis) {
    Shape a{2, 3, 4}, b{2, 3, 4}, c{2, 3, 4};
    const size_t d = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    b[d] = 5;
    c[d] = 1;
    auto r = on_vulkan("Concat").attr("axis", axis).random(a).random(b).random(c).check(0, 0);
    EXPECT_EQ(r.provider, "vulkan") << axis;
  }
  EXPECT_EQ(on_vulkan("Concat").attr("axis", int64_t{0}).random({7}).check(0, 0).provider,
            "vulkan");
  auto r = on_vulkan("Concat").attr("axis", int64_t{1}).random({2, 0}).random({2, 3}).check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
}

TEST(VulkanLayout, ViewsWithRunTimeShapes) {
  PI_SKIP_WITHOUT_VULKAN();
  auto r = on_vulkan("Reshape", 14)
               .random({2, 3, 4})
               .input(Tensor::from_vector<int64_t>({3}, {0, -1, 2}))
               .check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
  for (int64_t axis : {0, 1, 2, -1})
    EXPECT_EQ(on_vulkan("Flatten").attr("axis", axis).random({2, 3, 4}).check(0, 0).provider,
              "vulkan");
  r = on_vulkan("Squeeze")
          .random({1, 3, 1, 4})
          .input(Tensor::from_vector<int64_t>({1}, {-2}))
          .check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
  EXPECT_EQ(on_vulkan("Squeeze").random({1, 3, 1, 4}).check(0, 0).provider, "vulkan");
  EXPECT_EQ(on_vulkan("Squeeze", 11)
                .attr("axes", std::vector<int64_t>{0})
                .random({1, 3})
                .check(0, 0)
                .provider,
            "vulkan");
  r = on_vulkan("Unsqueeze")
          .random({3, 4})
          .input(Tensor::from_vector<int64_t>({2}, {0, -1}))
          .check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
  EXPECT_EQ(on_vulkan("Identity").random({5, 2}).check(0, 0).provider, "vulkan");
}

// Reshape -> Transpose -> Unsqueeze with constant shape and axes: run on vulkan, kept on the
// host (no per-run copy of them to the device), and the views feed a kernel correctly.
TEST(VulkanLayout, ViewsWithConstantShapes) {
  PI_SKIP_WITHOUT_VULKAN();
  test::ModelBuilder b(17);
  b.input("x", {2, 12}).output("y", {1, 4, 6});
  b.int64_initializer("shape", {2}, {6, 4});
  b.int64_initializer("axes", {1}, {0});
  b.node("Reshape", {"x", "shape"}, {"r"}, "reshape");
  b.node("Transpose", {"r"}, {"t"}, "transpose");
  b.node("Unsqueeze", {"t", "axes"}, {"y"}, "unsqueeze");
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.optimization_level = 0;
  o.providers = {"vulkan"};
  Session vk = Session::load_bytes(bytes.data(), bytes.size(), o);
  o.providers = {"cpu"};
  Session cpu = Session::load_bytes(bytes.data(), bytes.size(), o);
  const Tensor x = test::random_tensor({2, 12});
  for (int run = 0; run < 2; ++run) {
    const auto got = vk.run({{"x", Value(x)}}).at(0).tensor();
    const auto want = cpu.run({{"x", Value(x)}}).at(0).tensor();
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
  }
  EXPECT_EQ(vk.placement().device_copies, 1);  // x only
}

// Integer data (the Concats and Reshapes of shape arithmetic) runs on vulkan, equal to cpu-ref.
TEST(VulkanLayout, Int64Data) {
  PI_SKIP_WITHOUT_VULKAN();
  auto r = OracleOp("Concat", 13)
               .providers({"vulkan", "cpu"})
               .attr("axis", int64_t{0})
               .input(Tensor::from_vector<int64_t>({2}, {1, -(int64_t{1} << 33)}))
               .input(Tensor::from_vector<int64_t>({1}, {3}))
               .check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
  r = OracleOp("Transpose", 13)
          .providers({"vulkan", "cpu"})
          .input(Tensor::from_vector<int64_t>({2, 3}, {1, 2, 3, 4, 5, int64_t{1} << 50}))
          .check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
  r = OracleOp("Reshape", 14)
          .providers({"vulkan", "cpu"})
          .input(Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4}))
          .input(Tensor::from_vector<int64_t>({1}, {4}))
          .check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
}

// Ranks above what the shaders walk fall back to cpu with the reason.
TEST(VulkanLayout, RefusalsFallBack) {
  PI_SKIP_WITHOUT_VULKAN();
  const Shape rank7 = {2, 1, 1, 1, 1, 1, 3};
  auto r = test::check_with_constants(OracleOp("Concat", 13).attr("axis", int64_t{0}),
                                      {test::random_tensor(rank7), test::random_tensor(rank7, 2)},
                                      {false, false}, {"vulkan", "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("rank 7"), std::string::npos) << r.reason;
  r = test::check_with_constants(
      OracleOp("Reshape", 14), {test::random_tensor(rank7), Tensor::from_vector<int64_t>({1}, {6})},
      {false, true}, {"vulkan", "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("rank 7"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace polyinfer
