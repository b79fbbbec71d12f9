// The fast Resize kernel (src/providers/cpu/fast/resize.cpp) against the reference one: nearest
// with every nearest_mode, linear and cubic under every coordinate_transformation_mode it takes,
// up- and downsampling by fractional scales, sizes, exclude_outside, rank 2 and 4, Resize-10,
// threading, NHWC (the two axes before the channels); and what it leaves to the reference (three
// resized axes, tf_crop_and_resize, antialias, integer images).
//
// Tolerance: nearest copies (exact). Linear and cubic: the reference interpolates in double and
// rounds once, the fast kernel in float32 with the same taps and weights rounded to float: a few
// ulps of the inputs' magnitude (<= 3 here; cubic's weights sum to 1 with negative lobes, so up
// to twice the input range), atol 4e-6 with rtol 1e-6.
#include <gtest/gtest.h>

#include "oracle.h"

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
bool fast(const std::string& impl) { return impl.rfind("fast:", 0) == 0; }

const std::vector<std::vector<float>> kScales = {
    {1, 1, 2, 3}, {1, 1, 0.6f, 1.7f}, {1, 1, 0.5f, 0.34f}, {1, 1, 1, 2}};

TEST(FastResize, NearestEveryMode) {
  for (const char* ctm :
       {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"})
    for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      for (const auto& s : kScales) {
        auto r = OracleOp("Resize", 19)
                     .attr("mode", std::string("nearest"))
                     .attr("coordinate_transformation_mode", std::string(ctm))
                     .attr("nearest_mode", std::string(nm))
                     .random({2, 3, 5, 7})
                     .input(Tensor())
                     .input(floats(s))
                     .check(0, 0);
        EXPECT_TRUE(fast(r.impl)) << ctm << " " << nm << " " << s[2] << ": " << r.impl;
      }
}

TEST(FastResize, LinearAndCubicEveryMode) {
  for (const char* mode : {"linear", "cubic"})
    for (const char* ctm : {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                            "align_corners", "asymmetric"})
      for (const auto& s : kScales)
        for (int64_t exclude : {0, 1}) {
          auto r = OracleOp("Resize", 19)
                       .attr("mode", std::string(mode))
                       .attr("coordinate_transformation_mode", std::string(ctm))
                       .attr("exclude_outside", exclude)
                       .random({2, 3, 5, 7})
                       .input(Tensor())
                       .input(floats(s))
                       .check(4e-6, 1e-6);
          EXPECT_TRUE(fast(r.impl)) << mode << " " << ctm << " " << s[2] << ": " << r.impl;
        }
}

// Channels last, as the channels-last layout gives Resize: axes 1 and 2 resized, the last kept.
TEST(FastResize, NhwcEveryModeAndThreads) {
  const std::vector<std::vector<float>> scales = {
      {1, 2, 3, 1}, {1, 0.6f, 1.7f, 1}, {1, 0.5f, 0.34f, 1}, {1, 1, 2, 1}, {1, 2, 1, 1}};
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* ctm : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"})
      for (const auto& s : scales) {
        const bool nearest = std::string(mode) == "nearest";
        auto r = OracleOp("Resize", 19)
                     .attr("mode", std::string(mode))
                     .attr("coordinate_transformation_mode", std::string(ctm))
                     .attr("nearest_mode", std::string("floor"))
                     .random({2, 5, 7, 19})
                     .input(Tensor())
                     .input(floats(s))
                     .check(nearest ? 0 : 4e-6, nearest ? 0 : 1e-6);
        EXPECT_TRUE(fast(r.impl)) << mode << " " << ctm << " " << s[1] << ": " << r.impl;
      }
  auto r = OracleOp("Resize", 13)
               .attr("mode", std::string("nearest"))
               .threads(2)
               .random({1, 20, 24, 48})
               .input(Tensor())
               .input(Tensor())
               .input(ints({1, 40, 48, 48}))
               .check(0, 0);
  EXPECT_TRUE(fast(r.impl)) << r.impl;
  // tf_half_pixel_for_nn maps a kept axis one step over under round_prefer_ceil ((x + 0.5) / 1
  // rounds up): the last axis is then not as it was, and the reference takes it.
  r = OracleOp("Resize", 11)
          .attr("mode", std::string("nearest"))
          .attr("coordinate_transformation_mode", std::string("tf_half_pixel_for_nn"))
          .attr("nearest_mode", std::string("round_prefer_ceil"))
          .random({1, 3, 4, 5})
          .input(Tensor())
          .input(floats({1, 2, 2, 1}))
          .check(0, 0);
  EXPECT_EQ(r.impl, "reference (fast path declined)");
}

TEST(FastResize, SizesRanksOpsetsAndThreads) {
  // sizes instead of scales, rank 2, Resize-10 (scales as input 1), and a tensor large enough
  // to be split over threads.
  auto r = OracleOp("Resize", 13)
               .attr("mode", std::string("linear"))
               .random({1, 4, 9, 6})
               .input(Tensor())
               .input(Tensor())
               .input(ints({1, 4, 13, 4}))
               .check(4e-6, 1e-6);
  EXPECT_TRUE(fast(r.impl)) << r.impl;
  r = OracleOp("Resize", 13)
          .attr("mode", std::string("nearest"))
          .random({6, 5})
          .input(Tensor())
          .input(floats({3, 0.5f}))
          .check(0, 0);
  EXPECT_TRUE(fast(r.impl)) << r.impl;
  r = OracleOp("Resize", 10)
          .attr("mode", std::string("nearest"))
          .random({1, 2, 4, 4})
          .input(floats({1, 1, 2, 2}))
          .check(0, 0);
  EXPECT_TRUE(fast(r.impl)) << r.impl;
  r = OracleOp("Resize", 13)
          .attr("mode", std::string("linear"))
          .threads(2)
          .random({2, 32, 40, 40})
          .input(Tensor())
          .input(floats({1, 1, 2, 2}))
          .check(4e-6, 1e-6);
  EXPECT_TRUE(fast(r.impl)) << r.impl;
}

TEST(FastResize, ResizingAnEmptyAxisIsAnError) {
  // plan_resize's check, shared by every Resize kernel: sizes cannot grow an empty axis (scales
  // keep it empty).
  auto o = OracleOp("Resize", 13).attr("mode", std::string("nearest"));
  o.input(Tensor::zeros(DType::Float32, {1, 1, 0, 3}))
      .input(Tensor())
      .input(Tensor())
      .input(ints({1, 1, 4, 6}));
  const std::string bytes = o.model();
  for (const char* provider : {"cpu", "cpu-ref"}) {
    SessionOptions so;
    so.providers = {provider};
    so.optimization_level = 0;
    Session s = Session::load_bytes(bytes.data(), bytes.size(), so);
    try {
      s.run({{"in0", Value(Tensor::zeros(DType::Float32, {1, 1, 0, 3}))},
             {"in3", Value(ints({1, 1, 4, 6}))}});
      ADD_FAILURE() << provider << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot resize empty axis 2"), std::string::npos)
          << provider << ": " << e.what();
    }
  }
}

TEST(FastResize, LeavesTheRestToTheReference) {
  // Axes 1 and 3 resized (no pair before a kept last axis): the reference kernel, alike.
  auto r = OracleOp("Resize", 13)
               .attr("mode", std::string("linear"))
               .random({1, 4, 5, 5})
               .input(Tensor())
               .input(floats({1, 2, 1, 2}))
               .check(0, 0);
  EXPECT_EQ(r.impl, "reference (fast path declined)");
  r = OracleOp("Resize", 13)
          .attr("mode", std::string("linear"))
          .attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"))
          .random({1, 1, 5, 5})
          .input(floats({0, 0, 0.1f, 0.2f, 1, 1, 0.9f, 0.8f}))
          .input(floats({1, 1, 2, 2}))
          .check(0, 0);
  EXPECT_EQ(r.impl, "reference");
  r = OracleOp("Resize", 18)
          .attr("mode", std::string("linear"))
          .attr("antialias", int64_t{1})
          .random({1, 1, 8, 8})
          .input(Tensor())
          .input(floats({1, 1, 0.5f, 0.5f}))
          .check(0, 0);
  EXPECT_EQ(r.impl, "reference");
  r = OracleOp("Resize", 13)
          .attr("mode", std::string("nearest"))
          .input(Tensor::from_vector<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4}))
          .input(Tensor())
          .input(floats({1, 1, 2, 2}))
          .check(0, 0);
  EXPECT_FALSE(fast(r.impl)) << r.impl;
}

}  // namespace
}  // namespace polyinfer
