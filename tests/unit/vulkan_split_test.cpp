// The Vulkan Split kernel (strided copies on shaders/copy.comp) against cpu-ref: sizes by
// attribute (11), by run-time and constant input (1, 13), equal parts, num_outputs (18) with a
// smaller last part, empty parts, negative axes, int64 data; and the refusal of rank 7 falling
// back with its reason.
// Copies are exact: tolerance 0.
#include "oracle.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

using test::OracleOp;

Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>({n}, v);
}

TEST(VulkanSplit, Attribute) {
  PI_SKIP_WITHOUT_VULKAN();
  for (int64_t axis : {0, 1, -1, -3}) {
    auto r = OracleOp("Split", 11)
                 .providers({"vulkan"})
                 .attr("axis", axis)
                 .attr("split", std::vector<int64_t>{1, 0, 2})
                 .random({3, 3, 3})
                 .outputs(3)
                 .check(0, 0);
    EXPECT_EQ(r.provider, "vulkan") << axis;
  }
  // Equal parts, one per output.
  EXPECT_EQ(OracleOp("Split", 11)
                .providers({"vulkan"})
                .attr("axis", int64_t{1})
                .random({2, 258, 3})
                .outputs(2)
                .check(0, 0)
                .provider,
            "vulkan");
}

TEST(VulkanSplit, Inputs) {
  PI_SKIP_WITHOUT_VULKAN();
  for (int64_t axis : {2, -2}) {
    auto r = OracleOp("Split", 13)
                 .providers({"vulkan"})
                 .attr("axis", axis)
                 .random({2, 5, 7})
                 .input(axis == 2 ? ints({3, 4}) : ints({3, 2}))
                 .outputs(2)
                 .check(0, 0);
    EXPECT_EQ(r.provider, "vulkan") << axis;
    const auto c = test::check_with_constants(
        OracleOp("Split", 13).attr("axis", axis),
        {test::random_tensor({2, 5, 7}), axis == 2 ? ints({3, 4}) : ints({3, 2})}, {false, true},
        {"vulkan"}, 0, 0, 2);
    EXPECT_EQ(c.provider, "vulkan") << axis;
  }
  // num_outputs (18): 7 into 3 parts is 3, 3, 1.
  auto r = OracleOp("Split", 18)
               .providers({"vulkan"})
               .attr("axis", int64_t{-1})
               .attr("num_outputs", int64_t{3})
               .random({4, 7})
               .outputs(3)
               .check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
  // Opset 1 takes the sizes from an input too.
  r = OracleOp("Split", 1)
          .providers({"vulkan"})
          .random({6, 2})
          .input(ints({2, 4}))
          .outputs(2)
          .check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
}

// Integer data runs on vulkan, equal to cpu-ref.
TEST(VulkanSplit, Int64Data) {
  PI_SKIP_WITHOUT_VULKAN();
  const auto r = OracleOp("Split", 13)
                     .providers({"vulkan", "cpu"})
                     .input(Tensor::from_vector<int64_t>({5}, {1, 2, -3, int64_t{1} << 40, 5}))
                     .input(ints({2, 3}))
                     .outputs(2)
                     .check(0, 0);
  EXPECT_EQ(r.provider, "vulkan");
}

TEST(VulkanSplit, RefusalsFallBackWithTheReason) {
  PI_SKIP_WITHOUT_VULKAN();
  const auto r = test::check_with_constants(
      std::move(OracleOp("Split", 13).attr("axis", int64_t{6})),
      {test::random_tensor({1, 1, 1, 1, 1, 1, 4})}, {false}, {"vulkan", "cpu"}, 0, 0, 2);
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("rank 7"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace polyinfer
