// The CUDA Resize kernel (layout.cu) against cpu-ref, scales/sizes/roi as constants (checked at
// load time): nearest with every nearest_mode and linear, under every
// coordinate_transformation_mode it takes (tf_crop_and_resize with its roi and extrapolation),
// up- and downsampling by fractional scales, sizes, rank 1 and 3, Resize-10; and a refusal
// falling back. Tolerance: nearest copies (0); linear blends in float32 with the CPU's taps and
// weights (the CPU in double): a few ulp of the inputs' magnitude, so atol 2e-6, rtol 1e-6.
// Skipped with the probe's reason without a usable GPU.
#include "cuda_util.h"
#include "oracle.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

using test::OracleOp;

Tensor floats(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>({n}, v);
}
Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>({n}, v);
}

test::ConstantsResult resize(OracleOp o, const Shape& x, const Tensor& roi, const Tensor& scales,
                             const Tensor& sizes, double atol,
                             std::vector<std::string> providers = {"cuda"}) {
  std::vector<Tensor> in = {test::random_tensor(x), roi, scales};
  if (sizes.defined()) in.push_back(sizes);
  return test::check_with_constants(std::move(o), in, {false, true, true, true},
                                    std::move(providers), atol, atol ? 1e-6 : 0);
}

const std::vector<std::vector<float>> kScales = {
    {1, 1, 2, 3}, {1, 1, 0.6f, 1.7f}, {1, 1, 0.5f, 0.34f}};

TEST(CudaResize, NearestEveryMode) {
  PI_SKIP_WITHOUT_CUDA();
  for (const char* ctm :
       {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"})
    for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      for (const auto& s : kScales) {
        auto o = OracleOp("Resize", 19)
                     .attr("mode", std::string("nearest"))
                     .attr("coordinate_transformation_mode", std::string(ctm))
                     .attr("nearest_mode", std::string(nm));
        const auto r = resize(std::move(o), {1, 2, 5, 7}, Tensor(), floats(s), Tensor(), 0);
        EXPECT_EQ(r.provider, "cuda") << ctm << " " << nm << " " << s[2];
      }
}

TEST(CudaResize, LinearEveryMode) {
  PI_SKIP_WITHOUT_CUDA();
  for (const char* ctm :
       {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"})
    for (const auto& s : kScales)
      for (int64_t exclude : {0, 1}) {
        auto o = OracleOp("Resize", 19)
                     .attr("mode", std::string("linear"))
                     .attr("coordinate_transformation_mode", std::string(ctm))
                     .attr("exclude_outside", exclude);
        const auto r = resize(std::move(o), {2, 3, 5, 7}, Tensor(), floats(s), Tensor(), 2e-6);
        EXPECT_EQ(r.provider, "cuda") << ctm << " " << s[2] << " " << exclude;
      }
  for (const auto& roi : std::vector<std::vector<float>>{{0, 0, 0.2f, 0.1f, 1, 1, 0.8f, 0.9f},
                                                         {0, 0, -0.3f, 0.4f, 1, 1, 1.2f, 0.7f}})
    for (const char* mode : {"nearest", "linear"}) {
      auto o = OracleOp("Resize", 13)
                   .attr("mode", std::string(mode))
                   .attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"))
                   .attr("extrapolation_value", 7.5f);
      const auto r =
          resize(std::move(o), {1, 2, 6, 9}, floats(roi), Tensor(), ints({1, 2, 5, 4}), 2e-6);
      EXPECT_EQ(r.provider, "cuda") << mode << " " << roi[2];
    }
}

TEST(CudaResize, SizesRanksAndOpsets) {
  PI_SKIP_WITHOUT_CUDA();
  auto o = OracleOp("Resize", 13).attr("mode", std::string("linear"));
  EXPECT_EQ(
      resize(std::move(o), {2, 3, 8, 8}, Tensor(), Tensor(), ints({2, 3, 17, 5}), 2e-6).provider,
      "cuda");
  // Rank 1 and rank 3 (the leading axis unchanged).
  std::vector<Tensor> in1 = {test::random_tensor({9}), Tensor(), floats({2.5f})};
  EXPECT_EQ(test::check_with_constants(OracleOp("Resize", 13).attr("mode", std::string("linear")),
                                       in1, {false, true, true}, {"cuda"}, 2e-6, 1e-6)
                .provider,
            "cuda");
  std::vector<Tensor> in3 = {test::random_tensor({3, 4, 6}), Tensor(), floats({1, 2, 0.5f})};
  EXPECT_EQ(test::check_with_constants(OracleOp("Resize", 13), in3, {false, true, true}, {"cuda"})
                .provider,
            "cuda");
  // Resize-10: scales as input 1.
  std::vector<Tensor> in10 = {test::random_tensor({1, 1, 4, 5}), floats({1, 1, 2, 2})};
  EXPECT_EQ(
      test::check_with_constants(OracleOp("Resize", 10), in10, {false, true}, {"cuda"}).provider,
      "cuda");
}

TEST(CudaResize, RefusalsFallBack) {
  PI_SKIP_WITHOUT_CUDA();
  // Cubic, and a scale on the channel axis: the CPU runs them, with the reason.
  auto c = OracleOp("Resize", 19).attr("mode", std::string("cubic"));
  auto r = resize(std::move(c), {1, 2, 5, 7}, Tensor(), floats({1, 1, 2, 2}), Tensor(), 1e-5,
                  {"cuda", "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("cubic"), std::string::npos) << r.reason;
  auto ch = OracleOp("Resize", 19);
  r = resize(std::move(ch), {1, 2, 5, 7}, Tensor(), floats({1, 2, 1, 1}), Tensor(), 0,
             {"cuda", "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("last two axes"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace polyinfer
