// The fast NhwcMaxPool / NhwcAveragePool loops (src/providers/cpu/fast/pool.cpp) and the NCHW
// global pools (fast/global_pool.cpp) against the reference kernels (which transpose around the
// NCHW ones): strides, dilations, asymmetric pads, ceil_mode, auto_pad, count_include_pad, odd
// channel counts, windows with no valid tap, NaN, 8-bit max pooling, threading. The loops visit
// the reference's taps in its order, so results are exact (atol 0); averages of the global
// pools sum in another order.
#include <gtest/gtest.h>

#include <limits>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

bool fast(const std::string& impl) { return impl.rfind("fast:", 0) == 0; }

struct Case {
  Shape x;  // N, H, W, C
  std::vector<int64_t> kernel, strides, dilations, pads;
  int64_t ceil = 0;
};

const std::vector<Case> kCases = {
    {{1, 112, 112, 64}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},  // the ResNet/DenseNet stem
    {{2, 9, 11, 7}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
    {{1, 10, 13, 5}, {3, 2}, {2, 3}, {2, 1}, {1, 0, 2, 1}},    // dilated, asymmetric pads
    {{1, 7, 7, 17}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1},  // ceil_mode
    {{1, 5, 6, 3}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}},
    {{1, 33, 1, 1}, {3, 1}, {2, 1}, {2, 1}, {0, 0, 0, 0}, 1},
};

OracleOp pool(const char* op, const Case& c) {
  OracleOp o(op, 1, "ai.polyinfer");
  o.attr("kernel_shape", c.kernel)
      .attr("strides", c.strides)
      .attr("dilations", c.dilations)
      .attr("pads", c.pads)
      .attr("ceil_mode", c.ceil);
  return o;
}

TEST(FastPool, MaxMatchesReference) {
  for (const Case& c : kCases) {
    auto r = pool("NhwcMaxPool", c).random(c.x).check(0, 0);
    EXPECT_TRUE(fast(r.impl)) << r.impl << " " << shape_str(c.x);
  }
}

TEST(FastPool, AverageMatchesReferenceWithAndWithoutPadCounting) {
  for (const Case& c : kCases)
    for (int64_t include : {0, 1}) {
      if (c.ceil && include)
        continue;  // not defined alike by every runtime; the reference's rule is tested below
      auto r =
          pool("NhwcAveragePool", c).attr("count_include_pad", include).random(c.x).check(0, 0);
      EXPECT_TRUE(fast(r.impl)) << r.impl << " " << shape_str(c.x);
    }
  // ceil_mode with count_include_pad: the divisor counts taps inside the padded input only.
  const Case c = kCases[3];
  auto r = pool("NhwcAveragePool", c).attr("count_include_pad", int64_t{1}).random(c.x).check(0, 0);
  EXPECT_TRUE(fast(r.impl)) << r.impl;
}

TEST(FastPool, AutoPadAndThreads) {
  for (const char* pad : {"SAME_UPPER", "SAME_LOWER", "VALID"})
    for (int threads : {1, 2, 3}) {
      OracleOp o("NhwcMaxPool", 1, "ai.polyinfer");
      auto r = o.attr("kernel_shape", std::vector<int64_t>{3, 3})
                   .attr("strides", std::vector<int64_t>{2, 2})
                   .attr("auto_pad", std::string(pad))
                   .threads(threads)
                   .random({2, 15, 16, 24})
                   .check(0, 0);
      EXPECT_TRUE(fast(r.impl)) << r.impl;
      OracleOp a("NhwcAveragePool", 1, "ai.polyinfer");
      r = a.attr("kernel_shape", std::vector<int64_t>{2, 3})
              .attr("auto_pad", std::string(pad))
              .threads(threads)
              .random({1, 8, 9, 40})
              .check(0, 0);
      EXPECT_TRUE(fast(r.impl)) << r.impl;
    }
}

// NaN: first in a window it stays (the reference starts from the first valid tap), later it is
// skipped by the maximum and spreads through the average; in the loops' 32-channel chunks
// (channels 0 and 1) and in the tail after them (channels 33 and 34).
TEST(FastPool, NaNFollowsTheReference) {
  for (int64_t C : {3, 37}) {
    Tensor x = test::random_tensor({1, 4, 4, C});
    float* p = x.data<float>();
    for (int64_t ch : {int64_t{0}, int64_t{33}}) {
      if (ch + 1 >= C) continue;
      p[ch] = std::numeric_limits<float>::quiet_NaN();  // (0,0): first tap of window 0
      p[(1 * 4 + 1) * C + ch + 1] = std::numeric_limits<float>::quiet_NaN();  // (1,1): a later tap
    }
    const Case c{{1, 4, 4, C}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}};
    auto r = pool("NhwcMaxPool", c).input(x).check(0, 0);
    EXPECT_TRUE(fast(r.impl)) << r.impl;
    r = pool("NhwcAveragePool", c).input(x).check(0, 0);
    EXPECT_TRUE(fast(r.impl)) << r.impl;
  }
}

// 5 channels: the tail alone; 133: a 128-channel chunk and a tail.
TEST(FastPool, EightBitMaxPooling) {
  for (int64_t C : {5, 133}) {
    std::vector<int8_t> s(2 * 7 * 6 * C);
    std::vector<uint8_t> u(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      s[i] = static_cast<int8_t>((i * 37) % 256 - 128);
      u[i] = static_cast<uint8_t>((i * 91) % 256);
    }
    const Case c{{2, 7, 6, C}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1};
    auto r = pool("NhwcMaxPool", c).input(Tensor::from_vector<int8_t>(c.x, s)).check(0, 0);
    EXPECT_TRUE(fast(r.impl)) << r.impl;
    r = pool("NhwcMaxPool", c).input(Tensor::from_vector<uint8_t>(c.x, u)).check(0, 0);
    EXPECT_TRUE(fast(r.impl)) << r.impl;
  }
}

// Windows entirely in the padding: the maximum of nothing is -inf, the average without pad
// counting 0/0 (NaN), both as the reference has them.
TEST(FastPool, WindowsWithoutAValidTap) {
  const Case c{{1, 2, 2, 4}, {1, 1}, {3, 3}, {1, 1}, {2, 2, 2, 2}};
  auto r = pool("NhwcMaxPool", c).random(c.x).check(0, 0);
  EXPECT_TRUE(fast(r.impl)) << r.impl;
  r = pool("NhwcAveragePool", c).random(c.x).check(0, 0);
  EXPECT_TRUE(fast(r.impl)) << r.impl;
}

// The ONNX MaxPool / AveragePool on NCHW X take the same loops plane by plane: 2-D and 1-D,
// the same geometry cases, 8-bit max; MaxPool's Indices output stays with the reference.
TEST(FastPool, NchwMatchesReference) {
  for (const Case& c : kCases) {
    const Shape x{c.x[0], c.x[3], c.x[1], c.x[2]};
    for (const char* op : {"MaxPool", "AveragePool"}) {
      SCOPED_TRACE(std::string(op) + " " + shape_str(x));
      OracleOp o(op, 19);
      o.attr("kernel_shape", c.kernel)
          .attr("strides", c.strides)
          .attr("dilations", c.dilations)
          .attr("pads", c.pads)
          .attr("ceil_mode", c.ceil);
      auto r = o.random(x).check(0, 0);
      EXPECT_TRUE(fast(r.impl)) << r.impl;
    }
  }
  // 1-D: [N, C, W].
  for (const char* op : {"MaxPool", "AveragePool"}) {
    OracleOp o(op, 19);
    o.attr("kernel_shape", std::vector<int64_t>{4})
        .attr("strides", std::vector<int64_t>{3})
        .attr("pads", std::vector<int64_t>{1, 2});
    if (std::string(op) == "AveragePool") o.attr("count_include_pad", int64_t{1});
    auto r = o.threads(2).random({3, 5, 20}).check(0, 0);
    EXPECT_TRUE(fast(r.impl)) << r.impl;
  }
  std::vector<uint8_t> u(2 * 3 * 7 * 6);
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<uint8_t>((i * 91) % 256);
  OracleOp q("MaxPool", 12);
  q.attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto r = q.input(Tensor::from_vector<uint8_t>({2, 3, 7, 6}, u)).check(0, 0);
  EXPECT_TRUE(fast(r.impl)) << r.impl;
  OracleOp idx("MaxPool", 12);
  idx.attr("kernel_shape", std::vector<int64_t>{2, 2}).outputs(2);
  EXPECT_EQ(idx.random({1, 2, 4, 4}).check(0, 0).impl, "reference");
}

// NhwcGlobalAveragePool: one image or two, channel counts with tails, small (one thread) and
// large (pixels split between threads, partial sums added) against the reference kernel.
TEST(FastPool, NhwcGlobalAverage) {
  for (const Shape& x :
       std::vector<Shape>{{1, 7, 7, 13}, {2, 5, 3, 40}, {1, 56, 56, 96}, {2, 30, 31, 72}})
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(shape_str(x) + " threads " + std::to_string(threads));
      const auto r = OracleOp("NhwcGlobalAveragePool", 1, "ai.polyinfer")
                         .random(x)
                         .threads(threads)
                         .check(1e-6, 1e-5);
      EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
    }
}

// GlobalMaxPool / GlobalAveragePool on NCHW (fast/global_pool.cpp): rows shorter than the 16
// lanes, with tails, 1-D to 3-D spatial, magika's [1, 128, 2048], threads; the maximum exact
// (NaN skipped, a row of NaN -infinity, as the reference), the average within float rounding.
TEST(FastPool, GlobalPoolRowsNchw) {
  for (const Shape& x : std::vector<Shape>{
           {1, 3, 5}, {2, 5, 7, 7}, {1, 128, 2048}, {2, 17, 3, 4, 5}, {1, 64, 56, 56}})
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(shape_str(x) + " threads " + std::to_string(threads));
      auto mx = OracleOp("GlobalMaxPool", 1).random(x).threads(threads).check(0, 0);
      EXPECT_TRUE(fast(mx.impl)) << mx.impl;
      auto avg = OracleOp("GlobalAveragePool", 1).random(x).threads(threads).check(1e-6, 1e-5);
      EXPECT_TRUE(fast(avg.impl)) << avg.impl;
    }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v(3 * 40);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 23) - 11.f;
  v[0] = nan;                                    // row 0: first, as in a lane's start
  v[40 + 17] = nan;                              // row 1: within a lane
  for (size_t i = 80; i < 120; ++i) v[i] = nan;  // row 2: all NaN
  auto r =
      OracleOp("GlobalMaxPool", 1).input(Tensor::from_vector<float>({1, 3, 40}, v)).check(0, 0);
  EXPECT_TRUE(fast(r.impl)) << r.impl;
  // 8-bit maxima stay on oneDNN (the table's next row).
  std::vector<uint8_t> u(2 * 3 * 9);
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<uint8_t>((i * 91) % 256);
  auto q =
      OracleOp("GlobalMaxPool", 1).input(Tensor::from_vector<uint8_t>({2, 3, 9}, u)).check(0, 0);
  EXPECT_EQ(q.impl.rfind("onednn", 0), 0u) << q.impl;
}

}  // namespace
}  // namespace polyinfer
