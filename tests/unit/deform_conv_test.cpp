// DeformConv (reference kernel, src/providers/cpu/reference/deform_conv.cpp): with zero offsets
// and a mask of ones it is Conv; a hand-computed case of fractional offsets, offsets that leave
// the input and a mask; and groups with offset groups against a naive loop written here (one
// sample per channel and tap, interpolated with its four corners), over several column blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "oracle.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

// One node with its run-time inputs in0, in1, ... (Tensor() leaves an optional input out).
struct OneNode {
  test::OracleOp op;
  std::vector<Tensor> inputs;

  OneNode(const std::string& op_type, int opset) : op(op_type, opset) {}
  OneNode& input(Tensor t) {
    op.input(t);
    inputs.push_back(std::move(t));
    return *this;
  }
  template <class V> OneNode& attr(const std::string& name, V v) {
    op.attr(name, v);
    return *this;
  }
  Tensor run(const std::string& provider = "cpu") const {
    const std::string bytes = op.model();
    SessionOptions o;
    o.providers = {provider};
    o.optimization_level = 0;
    Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
    std::map<std::string, Value> feeds;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].defined()) feeds["in" + std::to_string(i)] = Value(inputs[i]);
    return s.run(feeds)[0].tensor();
  }
};

Tensor filled(const Shape& shape, float v) {
  return Tensor::from_vector<float>(shape, std::vector<float>(shape_numel(shape), v));
}

void expect_near_all(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  for (size_t i = 0; i < w.size(); ++i)
    ASSERT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << "element " << i;
}

// Zero offsets and a mask of ones sample exactly the regular grid: DeformConv is Conv, with
// groups, strides, dilations and uneven pads, with the mask given or left out.
TEST(DeformConv, ZeroOffsetsAndUnitMaskEqualConv) {
  const Shape xs{2, 4, 7, 6}, ws{6, 2, 3, 3};
  const std::vector<int64_t> strides{2, 1}, dilations{1, 2}, pads{1, 0, 1, 2};
  const Tensor x = test::random_tensor(xs, 3), w = test::random_tensor(ws, 4);
  const Tensor b = test::random_tensor({6}, 5);
  const Tensor conv = OneNode("Conv", 11)
                          .input(x)
                          .input(w)
                          .input(b)
                          .attr("group", int64_t{2})
                          .attr("strides", strides)
                          .attr("dilations", dilations)
                          .attr("pads", pads)
                          .run("cpu-ref");
  // H: (7 + 2 - 3) / 2 + 1 = 4; W: (6 + 2 - 5) / 1 + 1 = 4.
  ASSERT_EQ(conv.shape(), (Shape{2, 6, 4, 4}));
  for (int64_t og : {1, 2, 4}) {
    for (bool with_mask : {true, false}) {
      SCOPED_TRACE("offset_group=" + std::to_string(og) + (with_mask ? " with" : " without") +
                   " mask");
      OneNode d("DeformConv", 19);
      d.input(x).input(w).input(filled({2, og * 9 * 2, 4, 4}, 0.0f)).input(b);
      if (with_mask) d.input(filled({2, og * 9, 4, 4}, 1.0f));
      d.attr("group", int64_t{2})
          .attr("offset_group", og)
          .attr("strides", strides)
          .attr("dilations", dilations)
          .attr("pads", pads);
      expect_near_all(d.run(), conv, 1e-5);
    }
  }
}

// X[h, w] = 3h + w on a 3x3 image, a 1x1 kernel of weight 2, bias 0.5, one (dh, dw) offset per
// output position. Bilinear interpolation of a linear function is exact, so inside the image a
// sample is 3h + w at the moved position; corners outside the image read zero. The same values
// come from onnx.reference (onnx 1.23.2).
TEST(DeformConv, FractionalOffsetsInterpolateAndReadZeroOutside) {
  const Tensor x = Tensor::from_vector<float>({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  std::vector<float> off(18, 0.0f);  // [dh plane, dw plane] of 3x3 each
  auto at = [&](int i, int j, float dh, float dw) {
    off[i * 3 + j] = dh;
    off[9 + i * 3 + j] = dw;
  };
  at(0, 0, 0.5f, 0.25f);   // (0.5, 0.25): 3 * 0.5 + 0.25 = 1.75            -> 2 * 1.75 + 0.5 = 4
  at(0, 1, -0.5f, 0.0f);   // (-0.5, 1): half of x[0][1] = 0.5, row -1 is zero -> 1.5
  at(1, 0, 0.0f, 2.5f);    // (1, 2.5): half of x[1][2] = 2.5, column 3 is zero -> 5.5
  at(1, 1, 0.75f, 0.5f);   // (1.75, 1.5): 6.75, masked by 0.5 -> 3.375      -> 7.25
  at(2, 0, -1.0f, -1.0f);  // (1, -1): a whole pixel outside reads zero       -> 0.5
  at(2, 2, 0.5f, 0.5f);    // (2.5, 2.5): a quarter of x[2][2] = 2             -> 4.5
  std::vector<float> mask(9, 1.0f);
  mask[4] = 0.5f;
  const Tensor y = OneNode("DeformConv", 22)
                       .input(x)
                       .input(filled({1, 1, 1, 1}, 2.0f))
                       .input(Tensor::from_vector<float>({1, 2, 3, 3}, off))
                       .input(filled({1}, 0.5f))
                       .input(Tensor::from_vector<float>({1, 1, 3, 3}, mask))
                       .run();
  // Unmoved positions: 2 * x + 0.5 (x = 2, 5, 7).
  const std::vector<float> want = {4.0f, 1.5f, 4.5f, 5.5f, 7.25f, 10.5f, 0.5f, 14.5f, 4.5f};
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  const std::vector<float> got = y.to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << "position " << i;
}

// The spec's formula, one output at a time: 2-D, zero padding outside X.
std::vector<float> naive_deform_conv(const std::vector<float>& x, const std::vector<float>& w,
                                     const std::vector<float>& off, const std::vector<float>& mask,
                                     const std::vector<float>& bias, int64_t N, int64_t C,
                                     int64_t H, int64_t W, int64_t M, int64_t kh, int64_t kw,
                                     int64_t group, int64_t og, int64_t stride, int64_t pad,
                                     int64_t OH, int64_t OW) {
  auto pixel = [&](int64_t n, int64_t c, int64_t h, int64_t v) -> double {
    if (h < 0 || h >= H || v < 0 || v >= W) return 0.0;
    return x[((n * C + c) * H + h) * W + v];
  };
  const int64_t cg = C / group, mg = M / group, K = kh * kw;
  std::vector<float> y(static_cast<size_t>(N * M * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double s = bias[m];
          for (int64_t cl = 0; cl < cg; ++cl) {
            const int64_t c = (m / mg) * cg + cl, g = c / (C / og);
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t b = 0; b < kw; ++b) {
                const int64_t k = a * kw + b;
                const auto plane = [&](int64_t ch) {
                  return ((n * og * K * 2 + ch) * OH + i) * OW + j;
                };
                const double ph = i * stride - pad + a + off[plane((g * K + k) * 2)];
                const double pw = j * stride - pad + b + off[plane((g * K + k) * 2 + 1)];
                const double h0 = std::floor(ph), w0 = std::floor(pw);
                const double fh = ph - h0, fw = pw - w0;
                const auto hi = static_cast<int64_t>(h0), wi = static_cast<int64_t>(w0);
                const double v = (1 - fh) * (1 - fw) * pixel(n, c, hi, wi) +
                                 (1 - fh) * fw * pixel(n, c, hi, wi + 1) +
                                 fh * (1 - fw) * pixel(n, c, hi + 1, wi) +
                                 fh * fw * pixel(n, c, hi + 1, wi + 1);
                const double mk = mask[((n * og * K + g * K + k) * OH + i) * OW + j];
                s += w[(m * cg + cl) * K + k] * mk * v;
              }
          }
          y[((n * M + m) * OH + i) * OW + j] = static_cast<float>(s);
        }
  return y;
}

// Groups and offset groups that do not nest (group 2, offset_group 4, and the other way round),
// offsets reaching past the border, a random mask, and 26x26 outputs: more positions than one
// column block holds.
TEST(DeformConv, GroupsAndOffsetGroupsMatchANaiveLoop) {
  const int64_t N = 2, C = 8, H = 27, W = 26, M = 6, k = 3, stride = 1, pad = 1;
  const int64_t OH = 27, OW = 26;
  for (auto [group, og] : std::vector<std::pair<int64_t, int64_t>>{{2, 4}, {2, 1}, {1, 8}}) {
    SCOPED_TRACE("group=" + std::to_string(group) + " offset_group=" + std::to_string(og));
    const Shape xs{N, C, H, W}, ws{M, C / group, k, k};
    const Shape offs{N, og * k * k * 2, OH, OW}, ms{N, og * k * k, OH, OW};
    const Tensor x = test::random_tensor(xs, 11), w = test::random_tensor(ws, 12);
    const Tensor off = test::random_tensor(offs, 13, -2.5f, 2.5f);
    const Tensor mask = test::random_tensor(ms, 14, 0.0f, 1.0f);
    const Tensor b = test::random_tensor({M}, 15);
    const Tensor y = OneNode("DeformConv", 22)
                         .input(x)
                         .input(w)
                         .input(off)
                         .input(b)
                         .input(mask)
                         .attr("group", group)
                         .attr("offset_group", og)
                         .attr("pads", std::vector<int64_t>{pad, pad, pad, pad})
                         .run();
    const std::vector<float> want = naive_deform_conv(
        x.to_vector<float>(), w.to_vector<float>(), off.to_vector<float>(), mask.to_vector<float>(),
        b.to_vector<float>(), N, C, H, W, M, k, k, group, og, stride, pad, OH, OW);
    expect_near_all(y, Tensor::from_vector<float>({N, M, OH, OW}, want), 1e-4);
  }
}

// A 1-D DeformConv is the 2-D one over a height of 1 with zero height offsets.
TEST(DeformConv, OneSpatialAxisEqualsTwoWithAUnitHeight) {
  const int64_t N = 1, C = 2, L = 9, M = 3, k = 3, OL = 7;
  const Tensor x = test::random_tensor({N, C, L}, 21), w = test::random_tensor({M, C, k}, 22);
  const Tensor off = test::random_tensor({N, k, OL}, 23, -1.5f, 1.5f);
  const Tensor y1 = OneNode("DeformConv", 19).input(x).input(w).input(off).run();
  std::vector<float> off2(static_cast<size_t>(k * 2 * OL), 0.0f);  // per tap: dh = 0, dw
  const std::vector<float> o1 = off.to_vector<float>();
  for (int64_t t = 0; t < k; ++t)
    for (int64_t j = 0; j < OL; ++j) off2[(t * 2 + 1) * OL + j] = o1[t * OL + j];
  const Tensor y2 = OneNode("DeformConv", 19)
                        .input(x.reshaped({N, C, 1, L}))
                        .input(w.reshaped({M, C, 1, k}))
                        .input(Tensor::from_vector<float>({N, k * 2, 1, OL}, off2))
                        .run();
  ASSERT_EQ(y1.shape(), (Shape{N, M, OL}));
  expect_near_all(y1, y2.reshaped({N, M, OL}), 1e-6);
}

TEST(DeformConv, Float16FollowsFloat32) {
  const Tensor x = test::random_tensor({1, 2, 5, 5}, 31), w = test::random_tensor({2, 2, 3, 3}, 32);
  const Tensor off = test::random_tensor({1, 18, 3, 3}, 33, -1.0f, 1.0f);
  const Tensor y32 = OneNode("DeformConv", 22).input(x).input(w).input(off).run();
  const Tensor y16 = OneNode("DeformConv", 22)
                         .input(test::to_half(x))
                         .input(test::to_half(w))
                         .input(test::to_half(off))
                         .run();
  ASSERT_EQ(y16.dtype(), DType::Float16);
  const std::vector<Float16> h = y16.to_vector<Float16>();
  const std::vector<float> f = y32.to_vector<float>();
  ASSERT_EQ(h.size(), f.size());
  for (size_t i = 0; i < f.size(); ++i)
    EXPECT_NEAR(float(h[i]), f[i], 0.05 + 0.01 * std::fabs(f[i]));
}

TEST(DeformConv, AnOffsetOfTheWrongShapeIsAnErrorNamingIt) {
  OneNode d("DeformConv", 19);
  d.input(test::random_tensor({1, 2, 5, 5}, 1))
      .input(test::random_tensor({2, 2, 3, 3}, 2))
      .input(filled({1, 9, 3, 3}, 0.0f));  // 9 planes; two axes need 18
  try {
    d.run();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("offset must be [1,18,3,3]"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace polyinfer
