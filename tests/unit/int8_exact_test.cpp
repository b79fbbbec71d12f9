// The int8 kernels' exact form (onednn/qlinear.cpp, ExactForm; the `onednn_int8_exact` row of
// the CPU's int8 choice table) against naive int64 loops, bit for bit, on operands built so that
// oneDNN's int8 products without VNNI would go wrong: uint8 activations near 255 times adjacent
// weights of one sign near 127, whose pairs of products VPMADDUBSW saturates at 16 bits
// (2 x 255 x 127 > 32767), and int8 sources, which oneDNN runs through halved weights there.
//
// The scales are powers of two and the output zero points even, so that the formula's rounding
// (round half to even of (acc + bias)·sx·sw/sy, then + zy) gives the same integers in float, as
// oneDNN computes it, and in double, as the loops here do: any difference is a wrong accumulator.
//
// These tests pass options, so they reach the exact form on any CPU; CTest runs this suite again
// with oneDNN capped at AVX2 and at AVX-512 without VNNI (tests/CMakeLists.txt,
// ONEDNN_MAX_CPU_ISA), where the default choice must take the exact form and oneDNN's own
// products must be seen to saturate.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "providers/cpu/choice.h"
#include "providers/cpu/onednn/onednn.h"
#include "qlinear_models.h"

namespace polyinfer {
namespace {

using namespace test;

const bool kVnni = cpu::onednn::int8_products_exact();

struct Result {
  Tensor y;
  Placement::NodePlacement node;  // the int8 node's
  std::vector<std::string> notes;
};

// One run of `bytes` on a cpu provider list entry ("cpu", "cpu:onednn_int8=off") at
// optimization `level`; `op` names the node whose placement is kept.
Result run(const std::string& bytes, const std::string& provider,
           const std::map<std::string, Value>& feed, const std::string& op, int level = 0) {
  SessionOptions o;
  o.optimization_level = level;
  o.threads = 1;
  o.providers = {provider};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  Result r;
  r.y = s.run(feed)[0].tensor();
  for (const auto& n : s.placement().nodes)
    if (n.op.find(op) != std::string::npos) r.node = n;
  EXPECT_FALSE(r.node.impl.empty()) << "no " << op << " node";
  r.notes = s.placement().notes;
  return r;
}

// Round half to even, saturated to the 8-bit type, plus the zero point: ONNX's QuantizeLinear.
int quantize(double v, int zp, bool s8) {
  const double q = std::nearbyint(v) + zp;
  return static_cast<int>(std::clamp(q, s8 ? -128.0 : 0.0, s8 ? 127.0 : 255.0));
}

// Activations near the top of the uint8 range (for an int8 source: near 127, which oneDNN
// shifts to near 255), a few anywhere.
std::vector<int32_t> hot_activations(int64_t n, bool s8, uint32_t seed) {
  std::vector<int32_t> v = random_ints(n, s8 ? 90 : 218, s8 ? 127 : 255, seed);
  const std::vector<int32_t> any = random_ints(n, s8 ? -128 : 0, s8 ? 127 : 255, seed + 1);
  for (size_t i = 0; i < v.size(); i += 7) v[i] = any[i];
  return v;
}

// Weights [rows, inner] whose neighbours along `inner` come in pairs of one sign and 100-127 in
// magnitude (-128 among them); the pair's sign is random.
std::vector<int32_t> paired_weights(int64_t rows, int64_t inner, int64_t stride, uint32_t seed) {
  std::vector<int32_t> mag = random_ints(rows * inner * stride, 100, 128, seed);
  const std::vector<int32_t> sign = random_ints(rows * inner * stride, 0, 1, seed + 1);
  std::vector<int32_t> w(mag.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < inner; ++c)
      for (int64_t t = 0; t < stride; ++t) {
        const int64_t i = (r * inner + c) * stride + t, pair = (r * inner + c / 2 * 2) * stride + t;
        const bool negative = sign[pair] != 0;
        w[i] = negative ? -mag[i] : std::min(mag[i], 127);
      }
  return w;
}

Tensor q8(const Shape& s, const std::vector<int32_t>& v, bool s8) {
  if (s8) return Tensor::from_vector<int8_t>(s, std::vector<int8_t>(v.begin(), v.end()));
  return Tensor::from_vector<uint8_t>(s, std::vector<uint8_t>(v.begin(), v.end()));
}

// ---- QLinearConv ----

struct ConvCase {
  const char* name;
  Shape x;  // NCHW
  int64_t m, kh, kw, group, stride, pad;
  bool s8_in, s8_out;
};

std::vector<ConvCase> conv_cases() {
  return {
      {"pointwise_u8", {1, 32, 5, 6}, 24, 1, 1, 1, 1, 0, false, false},
      {"k3_u8", {1, 16, 7, 7}, 16, 3, 3, 1, 1, 1, false, false},
      {"k3_s8_source", {2, 12, 6, 5}, 8, 3, 3, 1, 1, 1, true, false},
      {"pointwise_stride2_s8_out", {1, 16, 9, 8}, 16, 1, 1, 1, 2, 0, false, true},
      {"stem_3_channels", {1, 3, 11, 11}, 16, 7, 7, 1, 2, 3, false, false},
      {"odd_channels", {1, 7, 6, 6}, 9, 3, 3, 1, 1, 1, false, false},
      {"grouped", {1, 16, 6, 6}, 8, 3, 3, 4, 1, 1, false, false},
      {"grouped_8_per_group", {1, 32, 6, 6}, 32, 3, 3, 4, 1, 1, false, false},
      {"depthwise_u8", {1, 24, 8, 8}, 24, 3, 3, 24, 1, 1, false, false},
      {"depthwise_s8", {1, 16, 8, 8}, 16, 3, 3, 16, 2, 1, true, true},
  };
}

// Whether oneDNN's operands as they are may be off the formula without VNNI: an int8 source, or
// sums over several input channels (the weights here are 8-bit); a depthwise convolution with a
// uint8 source is exact everywhere.
bool needs_exact_form(const ConvCase& c) { return c.s8_in || c.x[1] / c.group > 1; }

struct ConvModel {
  std::string bytes;
  Tensor x;
  std::vector<int32_t> xv, w, bias;
  int zx, zy;
  std::vector<int> shift;  // sx·sw[m]/sy = 2^-shift[m]
};

ConvModel conv_model(const ConvCase& c, bool qconv_add = false) {
  const int64_t C = c.x[1], M = c.m, cg = C / c.group;
  ConvModel r;
  r.zx = c.s8_in ? -5 : 3;
  r.zy = c.s8_out ? -2 : 128;
  r.xv = hot_activations(numel(c.x), c.s8_in, 21);
  r.x = q8(c.x, r.xv, c.s8_in);
  r.w = paired_weights(M, cg, c.kh * c.kw, 22);
  r.bias = random_ints(M, -3000, 3000, 23);
  // sx = 2^-6, sy = 1, sw[m] = 2^-(shift[m] - 6): a typical |acc|, sqrt(cg·taps/2) pairs of
  // ~2·230·115, maps to 20-80 steps from the zero point.
  const int base = int(std::lround(std::log2(std::sqrt(cg * c.kh * c.kw / 2.0) * 52900 / 40)));
  std::vector<float> sw(M);
  for (int64_t m = 0; m < M; ++m) {
    r.shift.push_back(base - 1 + int(m % 3));
    sw[m] = std::ldexp(1.f, -(r.shift.back() - 6));
  }
  const int t = c.s8_in ? kInt8 : kUInt8, ty = c.s8_out ? kInt8 : kUInt8;
  ModelBuilder b(13);
  b.input("x", c.x, t).output("y", {}, ty);
  b.initializer("sx", {}, {std::ldexp(1.f, -6)}).initializer("sw", {M}, sw);
  b.initializer("sy", {}, {1.f});
  b.int_initializer("zx", {}, t, {r.zx});
  b.int_initializer("zw", {M}, kInt8, std::vector<int32_t>(M, 0));
  b.int_initializer("zy", {}, ty, {r.zy});
  b.int_initializer("w", {M, cg, c.kh, c.kw}, kInt8, r.w);
  b.int_initializer("b", {M}, kInt32, r.bias);
  if (qconv_add) {
    // The convolution saturated to (sc, zc) = (sy, the type's minimum: a Relu), plus
    // Z·(zs = sy/2): every bound and term exact in float.
    polyinfer_domain(b);
    b.input("z", {c.x[0], M, c.x[2], c.x[3]}, ty);  // a 1x1 convolution at stride 1
    b.initializer("sc", {}, {1.f}).initializer("sz", {}, {0.5f});
    b.int_initializer("zc", {}, ty, {c.s8_out ? -128 : 0});
    b.int_initializer("zz", {}, ty, {c.s8_out ? 6 : 100});
    b.node("QLinearConvAdd",
           {"x", "sx", "zx", "w", "sw", "zw", "sc", "zc", "b", "z", "sz", "zz", "sy", "zy"}, {"y"},
           "qconv");
    b.proto().mutable_graph()->mutable_node(0)->set_domain("ai.polyinfer");
  } else {
    b.node("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"}, {"y"}, "qconv");
  }
  attr_ints(b, "strides", {c.stride, c.stride});
  attr_ints(b, "pads", {c.pad, c.pad, c.pad, c.pad});
  if (c.group != 1) attr_int(b, "group", c.group);
  r.bytes = b.bytes();
  return r;
}

// The convolution's accumulators (acc + bias), [N, M, OH, OW], in int64: the formula's integers.
std::vector<int64_t> conv_acc(const ConvCase& c, const ConvModel& r, Shape* y_shape) {
  const int64_t N = c.x[0], C = c.x[1], H = c.x[2], W = c.x[3], M = c.m, cg = C / c.group;
  const int64_t OH = (H + 2 * c.pad - c.kh) / c.stride + 1,
                OW = (W + 2 * c.pad - c.kw) / c.stride + 1;
  *y_shape = {N, M, OH, OW};
  std::vector<int64_t> acc(static_cast<size_t>(N * M * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / (M / c.group);
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t s = r.bias[m];
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < c.kh; ++i)
              for (int64_t j = 0; j < c.kw; ++j) {
                const int64_t h = oh * c.stride - c.pad + i, w = ow * c.stride - c.pad + j;
                if (h < 0 || h >= H || w < 0 || w >= W) continue;  // padding: x = zx
                const int64_t xi = ((n * C + g * cg + ci) * H + h) * W + w;
                s += int64_t(r.xv[xi] - r.zx) * r.w[((m * cg + ci) * c.kh + i) * c.kw + j];
              }
          acc[((n * M + m) * OH + oh) * OW + ow] = s;
        }
    }
  return acc;
}

std::vector<int> conv_expected(const ConvCase& c, const ConvModel& r, Shape* y_shape) {
  const std::vector<int64_t> acc = conv_acc(c, r, y_shape);
  const int64_t M = c.m, plane = (*y_shape)[2] * (*y_shape)[3];
  std::vector<int> y(acc.size());
  for (size_t i = 0; i < acc.size(); ++i)
    y[i] = quantize(std::ldexp(double(acc[i]), -r.shift[(int64_t(i) / plane) % M]), r.zy, c.s8_out);
  return y;
}

class Int8ExactConv : public ::testing::TestWithParam<ConvCase> {};

// The exact form, chosen by switching `onednn_int8` off, on any CPU.
TEST_P(Int8ExactConv, MatchesTheFormulaBitForBit) {
  const ConvCase& c = GetParam();
  const ConvModel r = conv_model(c);
  Shape ys;
  const std::vector<int> want = conv_expected(c, r, &ys);
  for (int level : {0, 3}) {  // 3: channels-last, NhwcQLinearConv
    SCOPED_TRACE("level " + std::to_string(level));
    const Result got = run(r.bytes, "cpu:onednn_int8=off", {{"x", r.x}}, "QLinearConv", level);
    EXPECT_EQ(got.node.choice.rfind("onednn_int8_exact: ", 0), 0u) << got.node.choice;
    EXPECT_EQ(got.node.impl.find("(exact: ") != std::string::npos, needs_exact_form(c))
        << got.node.impl;
    // Not oneDNN's slow reference kernel where its operands as they are get a JIT one.
    const Result plain = run(r.bytes, "cpu:onednn_int8=on", {{"x", r.x}}, "QLinearConv", level);
    if (plain.node.impl.find("ref_int8") == std::string::npos) {
      EXPECT_EQ(got.node.impl.find("ref_int8"), std::string::npos) << got.node.impl;
    }
    if (level == 3) {
      EXPECT_EQ(got.node.op, "ai.polyinfer.NhwcQLinearConv");
    }
    EXPECT_TRUE(got.notes.empty()) << got.notes[0];
    ASSERT_EQ(got.y.shape(), ys);
    EXPECT_EQ(q8_values(got.y), want);
  }
}

// Where oneDNN's products are exact (VNNI) the default is oneDNN's operands as they are; where
// not, the exact form, with the reason in the choice. Both compute the formula.
TEST_P(Int8ExactConv, DefaultChoiceIsExactOnThisCpu) {
  const ConvCase& c = GetParam();
  const ConvModel r = conv_model(c);
  Shape ys;
  const std::vector<int> want = conv_expected(c, r, &ys);
  const Result got = run(r.bytes, "cpu", {{"x", r.x}}, "QLinearConv");
  if (kVnni || !needs_exact_form(c)) {
    EXPECT_EQ(got.node.choice.rfind("onednn_int8: ", 0), 0u) << got.node.choice;
  } else {
    EXPECT_EQ(got.node.choice.rfind("onednn_int8_exact: ", 0), 0u) << got.node.choice;
    EXPECT_NE(got.node.choice.find("passed over: onednn_int8 (no VNNI here"), std::string::npos)
        << got.node.choice;
  }
  EXPECT_TRUE(got.notes.empty()) << got.notes[0];
  EXPECT_EQ(q8_values(got.y), want);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Int8ExactConv, ::testing::ValuesIn(conv_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// `onednn_int8=on` keeps oneDNN's operands as they are. Without VNNI these operands make it
// saturate (so the tests above can fail), and the placement says so; with VNNI it is exact.
TEST(Int8Exact, SwitchedOnOnednnInt8SaturatesWithoutVnni) {
  const ConvCase c = conv_cases()[1];  // k3_u8
  const ConvModel r = conv_model(c);
  Shape ys;
  const std::vector<int> want = conv_expected(c, r, &ys);
  const Result got = run(r.bytes, "cpu:onednn_int8=on", {{"x", r.x}}, "QLinearConv");
  EXPECT_EQ(got.node.choice.rfind("onednn_int8: ", 0), 0u) << got.node.choice;
  EXPECT_EQ(got.node.impl.find("exact"), std::string::npos) << got.node.impl;
  const std::vector<int> y = q8_values(got.y);
  if (kVnni) {
    EXPECT_TRUE(got.notes.empty());
    EXPECT_EQ(y, want);
    return;
  }
  ASSERT_EQ(got.notes.size(), 1u);
  EXPECT_NE(got.notes[0].find("saturate at 16 bits"), std::string::npos) << got.notes[0];
  int differ = 0;
  for (size_t i = 0; i < y.size(); ++i) differ += y[i] != want[i];
  EXPECT_GT(differ * 4, int(y.size())) << "only " << differ << " of " << y.size() << " differ";
}

// QLinearConvAdd (and NhwcQLinearConvAdd at level 3): the clip and residual after the exact
// accumulators, y = sat(round(clamp(acc·s, lo, hi) + (z - zz)·zs/sy) + zy).
TEST(Int8Exact, ConvAddMatchesTheFormulaBitForBit) {
  for (const bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8" : "uint8");
    const ConvCase c{"", {1, 16, 6, 6}, 24, 1, 1, 1, 1, 0, s8, s8};
    const ConvModel r = conv_model(c, true);
    Shape ys;
    const std::vector<int64_t> acc = conv_acc(c, r, &ys);
    const Tensor z = random_q8(ys, s8, 31);
    const std::vector<int> zv = q8_values(z);
    const double lo = 0, hi = 255;  // (qmin - zc)·sc/sy, (qmax - zc)·sc/sy for either type
    const int zz = s8 ? 6 : 100;
    std::vector<int> want(acc.size());
    for (size_t i = 0; i < acc.size(); ++i) {
      const int64_t m = (int64_t(i) / (ys[2] * ys[3])) % c.m;
      const double conv = std::clamp(std::ldexp(double(acc[i]), -r.shift[m]), lo, hi);
      want[i] = quantize(conv + 0.5 * (zv[i] - zz), r.zy, s8);
    }
    for (int level : {0, 3}) {
      SCOPED_TRACE("level " + std::to_string(level));
      const Result got =
          run(r.bytes, "cpu:onednn_int8=off", {{"x", r.x}, {"z", z}}, "QLinearConvAdd", level);
      EXPECT_EQ(got.node.choice.rfind("onednn_int8_exact: ", 0), 0u) << got.node.choice;
      EXPECT_EQ(q8_values(got.y), want);
    }
  }
}

// ---- QLinearMatMul, QLinearGemm, MatMulInteger ----

struct MatMulModel {
  std::string bytes;
  Tensor a;
  std::vector<int32_t> av, b, bias;
  int64_t M, K, N;
  int za;
};

// sa·sb[n]/sy = 2^-(kMatMulShift + n % 2): for K = 70, typical outputs 20-40 steps out.
constexpr int kMatMulShift = 13;

// A [M, K] (hot), B [K, N] with rows paired.
MatMulModel matmul_model(const std::string& op, bool s8, int64_t M, int64_t K, int64_t N) {
  MatMulModel r{"", {}, {}, {}, {}, M, K, N, s8 ? 9 : 4};
  r.av = hot_activations(M * K, s8, 41);
  r.a = q8({M, K}, r.av, s8);
  // Pairs along K: weights generated as [N, K] then transposed to [K, N].
  const std::vector<int32_t> bt = paired_weights(N, K, 1, 42);
  r.b.resize(bt.size());
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) r.b[k * N + n] = bt[n * K + k];
  const int t = s8 ? kInt8 : kUInt8;
  ModelBuilder b(13);
  b.input("a", {M, K}, t);
  b.int_initializer("b", {K, N}, kInt8, r.b);
  if (op == "MatMulInteger") {
    b.output("y", {}, kInt32);
    b.input("za", {}, t);
    b.node("MatMulInteger", {"a", "b", "za"}, {"y"}, "mmi");
    r.bytes = b.bytes();
    return r;
  }
  std::vector<float> sb(N);
  for (int64_t n = 0; n < N; ++n) sb[n] = std::ldexp(1.f, -(kMatMulShift - 6 + int(n % 2)));
  b.initializer("sa", {}, {std::ldexp(1.f, -6)}).initializer("sb", {N}, sb);
  b.initializer("sy", {}, {1.f});
  b.int_initializer("za", {}, t, {r.za});
  b.int_initializer("zb", {N}, kInt8, std::vector<int32_t>(N, 0));
  b.int_initializer("zy", {}, t, {s8 ? 0 : 128});
  if (op == "QLinearGemm") {
    polyinfer_domain(b);
    r.bias = random_ints(N, -5000, 5000, 43);
    b.int_initializer("bias", {N}, kInt32, r.bias);
    b.output("y", {});  // float32: (acc + bias)·sa·sb[n]
    b.node("QLinearGemm", {"a", "sa", "za", "b", "sb", "zb", "", "", "bias"}, {"y"}, "qgemm");
    b.proto().mutable_graph()->mutable_node(0)->set_domain("ai.polyinfer");
  } else {
    b.output("y", {}, t);
    b.node("QLinearMatMul", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"}, "qmm");
  }
  r.bytes = b.bytes();
  return r;
}

std::vector<int64_t> matmul_acc(const MatMulModel& r) {
  std::vector<int64_t> acc(static_cast<size_t>(r.M * r.N));
  for (int64_t i = 0; i < r.M; ++i)
    for (int64_t n = 0; n < r.N; ++n) {
      int64_t s = r.bias.empty() ? 0 : r.bias[n];
      for (int64_t k = 0; k < r.K; ++k) s += int64_t(r.av[i * r.K + k] - r.za) * r.b[k * r.N + n];
      acc[i * r.N + n] = s;
    }
  return acc;
}

TEST(Int8Exact, MatMulsMatchTheFormulaBitForBit) {
  for (const std::string op : {"QLinearMatMul", "QLinearGemm", "MatMulInteger"})
    for (const bool s8 : {false, true})
      for (const std::string provider : {"cpu:onednn_int8=off", "cpu"}) {
        SCOPED_TRACE(op + (s8 ? " int8 " : " uint8 ") + provider);
        const MatMulModel r = matmul_model(op, s8, 5, 70, 24);
        const std::vector<int64_t> acc = matmul_acc(r);
        std::map<std::string, Value> feed{{"a", r.a}};
        if (op == "MatMulInteger") feed["za"] = q8({}, {r.za}, s8);
        const Result got = run(r.bytes, provider, feed, op);
        const bool exact_row = provider != "cpu" || !kVnni;
        EXPECT_EQ(got.node.choice.rfind(exact_row ? "onednn_int8_exact: " : "onednn_int8: ", 0), 0u)
            << got.node.choice;
        EXPECT_EQ(got.node.impl.rfind("onednn:", 0), 0u) << got.node.impl;
        EXPECT_TRUE(got.notes.empty()) << got.notes[0];
        ASSERT_EQ(got.y.numel(), r.M * r.N);
        for (int64_t i = 0; i < r.M * r.N; ++i) {
          const int64_t n = i % r.N;
          if (op == "MatMulInteger") {
            ASSERT_EQ(got.y.data<int32_t>()[i], acc[i]) << "at " << i;
          } else if (op == "QLinearGemm") {
            ASSERT_EQ(got.y.data<float>()[i],
                      std::ldexp(double(acc[i]), -(kMatMulShift + int(n % 2))))
                << "at " << i;
          } else {
            ASSERT_EQ(q8_values(got.y)[i],
                      quantize(std::ldexp(double(acc[i]), -(kMatMulShift + int(n % 2))),
                               s8 ? 0 : 128, s8))
                << "at " << i;
          }
        }
      }
}

// An int8 source with weights within +-64 only needs shifting to uint8, no zero channels.
TEST(Int8Exact, SmallWeightsOnlyShiftTheSource) {
  ModelBuilder m = qconv_model(qconv_cases()[2], 64);  // k3pad1_s8: int8 X
  const std::string bytes = m.bytes();
  const Tensor x = random_q8(qconv_cases()[2].x, true, 11);
  const Result exact = run(bytes, "cpu:onednn_int8=off", {{"x", x}}, "QLinearConv");
  EXPECT_NE(exact.node.impl.find("(exact: uint8 source)"), std::string::npos) << exact.node.impl;
  SessionOptions o;
  o.optimization_level = 0;
  o.providers = {"cpu-ref"};
  Session ref = Session::load_bytes(bytes.data(), bytes.size(), o);
  const std::vector<int> want = q8_values(ref.run({{"x", x}})[0].tensor());
  const std::vector<int> got = q8_values(exact.y);
  ASSERT_EQ(got.size(), want.size());
  // Not powers of two here: one step apart where float and double round differently (see
  // onednn_qlinear_test.cpp), on at most 1% of the elements.
  int differ = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::abs(got[i] - want[i]), 1) << "at " << i;
    differ += got[i] != want[i];
  }
  EXPECT_LE(differ * 100, int(got.size()));
}

// ---- the choice table's rule, on every kind of machine ----

TEST(Int8Exact, ChoiceTablePinsTheRowPerCpuAndOperands) {
  const cpu::ChoiceTable* t = cpu::choice_table("", "QLinearConv");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t, cpu::choice_table("ai.polyinfer", "NhwcQLinearConvAdd"));
  EXPECT_EQ(t, cpu::choice_table("", "MatMulInteger"));
  cpu::CpuFeatures vnni{true, true, true, true};
  cpu::CpuFeatures avx2{true, false, false, false};
  avx2.onednn_int8_exact = false;
  const auto first = [&](const cpu::CpuFeatures& f, bool s8, int wmax,
                         const CpuProviderOptions& o = {}) {
    cpu::ChoiceFacts facts{f, std::nullopt};
    facts.int8 = cpu::Int8Operands{s8, wmax};
    return cpu::first_choice(*t, facts, o);
  };
  EXPECT_EQ(first(vnni, false, 127), "onednn_int8");
  EXPECT_EQ(first(vnni, true, 127), "onednn_int8");
  EXPECT_EQ(first(avx2, false, 127), "onednn_int8_exact");
  EXPECT_EQ(first(avx2, false, 65), "onednn_int8_exact");
  EXPECT_EQ(first(avx2, false, 64), "onednn_int8");  // 2 x 255 x 64 fits int16
  EXPECT_EQ(first(avx2, true, 10), "onednn_int8_exact");
  CpuProviderOptions allow;
  allow.kernels["onednn_int8"] = KernelSwitch::On;
  EXPECT_EQ(first(avx2, false, 127, allow), "onednn_int8");
  EXPECT_EQ(first(avx2, true, 127, allow), "onednn_int8");
  CpuProviderOptions off;
  off.kernels["onednn_int8"] = KernelSwitch::Off;
  EXPECT_EQ(first(vnni, false, 10, off), "onednn_int8_exact");
  off.kernels["onednn_int8_exact"] = KernelSwitch::Off;
  EXPECT_EQ(first(avx2, false, 127, off), "reference");
}

}  // namespace
}  // namespace polyinfer
