// The Resize kernel of each device provider (resize.comp, resize.cl; device_util.h) against
// cpu-ref, scales/sizes/roi as constants (the kernel checks them at load time): nearest with every
// nearest_mode and linear, under every coordinate_transformation_mode it takes (tf_crop_and_resize
// with its roi and extrapolation), up- and downsampling by fractional scales, sizes with
// keep_aspect_ratio_policy and axes (18), exclude_outside, ranks 1 to 4, Resize-10; and the
// refusals falling back with their reasons. Tolerance: nearest copies (0). Linear: the CPU
// interpolates in double and rounds once, the kernels in float32 with the same taps and weights
// (rounded to float): a few ulp of the inputs' magnitude (<= 3 here), so atol 2e-6 with rtol 1e-6.
#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceResize : public test::DeviceTest {};

Tensor floats(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>({n}, v);
}
Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>({n}, v);
}

// Resize-`opset` of x with constant roi (Tensor(): none), scales and sizes.
test::ConstantsResult resize(OracleOp o, const Shape& x, const Tensor& roi, const Tensor& scales,
                             const Tensor& sizes, double atol, std::vector<std::string> providers) {
  std::vector<Tensor> in = {test::random_tensor(x), roi, scales};
  if (sizes.defined()) in.push_back(sizes);
  return test::check_with_constants(std::move(o), in, {false, true, true, true},
                                    std::move(providers), atol, atol ? 1e-6 : 0);
}

const std::vector<std::vector<float>> kScales = {
    {1, 1, 2, 3}, {1, 1, 0.6f, 1.7f}, {1, 1, 0.5f, 0.34f}};

TEST_P(DeviceResize, NearestEveryMode) {
  for (const char* ctm :
       {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"})
    for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      for (const auto& s : kScales) {
        auto o = OracleOp("Resize", 19)
                     .attr("mode", std::string("nearest"))
                     .attr("coordinate_transformation_mode", std::string(ctm))
                     .attr("nearest_mode", std::string(nm));
        const auto r =
            resize(std::move(o), {1, 2, 5, 7}, Tensor(), floats(s), Tensor(), 0, {provider()});
        EXPECT_EQ(r.provider, provider()) << ctm << " " << nm << " " << s[2];
      }
}

TEST_P(DeviceResize, LinearEveryMode) {
  for (const char* ctm :
       {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"})
    for (const auto& s : kScales)
      for (int64_t exclude : {0, 1}) {
        auto o = OracleOp("Resize", 19)
                     .attr("mode", std::string("linear"))
                     .attr("coordinate_transformation_mode", std::string(ctm))
                     .attr("exclude_outside", exclude);
        const auto r =
            resize(std::move(o), {2, 3, 5, 7}, Tensor(), floats(s), Tensor(), 2e-6, {provider()});
        EXPECT_EQ(r.provider, provider()) << ctm << " " << s[2] << " " << exclude;
      }
  // tf_crop_and_resize: a roi inside and one reaching outside (extrapolated).
  for (const auto& roi : std::vector<std::vector<float>>{{0, 0, 0.2f, 0.1f, 1, 1, 0.8f, 0.9f},
                                                         {0, 0, -0.3f, 0.4f, 1, 1, 1.2f, 0.7f}})
    for (const char* mode : {"nearest", "linear"}) {
      auto o = OracleOp("Resize", 13)
                   .attr("mode", std::string(mode))
                   .attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"))
                   .attr("extrapolation_value", 7.5f);
      const auto r = resize(std::move(o), {1, 2, 6, 9}, floats(roi), Tensor(), ints({1, 2, 5, 4}),
                            2e-6, {provider()});
      EXPECT_EQ(r.provider, provider()) << mode << " " << roi[2];
    }
}

TEST_P(DeviceResize, SizesAxesRanksAndOpsets) {
  for (const char* policy : {"stretch", "not_larger", "not_smaller"}) {
    auto o = OracleOp("Resize", 18)
                 .attr("mode", std::string("linear"))
                 .attr("keep_aspect_ratio_policy", std::string(policy))
                 .attr("axes", std::vector<int64_t>{-2, 3});
    const auto r =
        resize(std::move(o), {1, 2, 5, 7}, Tensor(), Tensor(), ints({9, 4}), 2e-6, {provider()});
    EXPECT_EQ(r.provider, provider()) << policy;
  }
  // Rank 1 to 3, one output row past a workgroup.
  auto r = resize(std::move(OracleOp("Resize", 13).attr("mode", std::string("linear"))), {7},
                  Tensor(), floats({2.5f}), Tensor(), 2e-6, {provider()});
  EXPECT_EQ(r.provider, provider());
  r = resize(std::move(OracleOp("Resize", 13).attr("mode", std::string("linear"))), {4, 130},
             Tensor(), floats({1.5f, 2.0f}), Tensor(), 2e-6, {provider()});
  EXPECT_EQ(r.provider, provider());
  r = resize(OracleOp("Resize", 13), {3, 4, 5}, Tensor(), floats({1, 0.5f, 2}), Tensor(), 0,
             {provider()});
  EXPECT_EQ(r.provider, provider());
  // Resize-10: asymmetric sampling, floor for nearest.
  for (const char* mode : {"nearest", "linear"}) {
    const auto k =
        test::check_with_constants(OracleOp("Resize", 10).attr("mode", std::string(mode)),
                                   {test::random_tensor({1, 1, 4, 6}), floats({1, 1, 1.5f, 0.7f})},
                                   {false, true}, {provider()}, 2e-6, 1e-6);
    EXPECT_EQ(k.provider, provider()) << mode;
  }
}

TEST_P(DeviceResize, RefusalsFallBackWithTheReason) {
  const std::vector<std::string> both = {provider(), "cpu"};
  auto r = resize(std::move(OracleOp("Resize", 13).attr("mode", std::string("cubic"))),
                  {1, 1, 4, 4}, Tensor(), floats({1, 1, 2, 2}), Tensor(), 1e-5, both);
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("mode=cubic"), std::string::npos) << r.reason;
  r = resize(OracleOp("Resize", 13), {1, 2, 4, 4}, Tensor(), floats({1, 2, 2, 2}), Tensor(), 0,
             both);
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("on axis 1"), std::string::npos) << r.reason;
  r = resize(OracleOp("Resize", 13), {1, 2, 4, 4}, Tensor(), Tensor(), ints({1, 3, 4, 4}), 0, both);
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("sizes changing axis 1"), std::string::npos) << r.reason;
  auto o = OracleOp("Resize", 11)
               .attr("coordinate_transformation_mode", std::string("tf_half_pixel_for_nn"));
  r = resize(std::move(o), {1, 1, 4, 4}, Tensor(), floats({1, 1, 2, 2}), Tensor(), 0, both);
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("tf_half_pixel_for_nn"), std::string::npos) << r.reason;
  // Scales at run time.
  r = test::check_with_constants(
      OracleOp("Resize", 13), {test::random_tensor({1, 1, 4, 4}), Tensor(), floats({1, 1, 2, 2})},
      {false, false, false}, both);
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("scales computed at run time"), std::string::npos) << r.reason;
}

// More elements than 2 workgroups of 256 cover: the kernel's grid-stride loop.
TEST_P(DeviceResize, PastTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 2);
  const auto r =
      resize(std::move(OracleOp("Resize", 13).attr("mode", std::string("linear"))), {1, 3, 10, 11},
             Tensor(), floats({1, 1, 2.5f, 1.9f}), Tensor(), 2e-6, {provider()});
  EXPECT_EQ(r.provider, provider());
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceResize);

}  // namespace
}  // namespace polyinfer
