// One-node models of the quantized products (QLinearConv, ai.polyinfer QLinearConvAdd,
// QLinearMatMul, ai.polyinfer QLinearGemm) with constant weights and quantization parameters,
// and random 8-bit inputs: shared by the tests of every provider's int8 kernels
// (onednn_qlinear_test.cpp, cuda_int8_test.cpp), which compare them against `cpu-ref`.
//
// The scales put typical outputs some 40 quantization steps from the zero point (a test where
// everything saturates would prove little).
#pragma once

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "model_builder.h"
#include "polyinfer/session.h"

namespace polyinfer::test {

constexpr int kUInt8 = 2, kInt8 = 3, kInt32 = 6;

inline int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

inline std::vector<int32_t> random_ints(int64_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

// Attributes on the last node added.
inline void attr_ints(ModelBuilder& m, const std::string& name, std::vector<int64_t> v) {
  auto* g = m.proto().mutable_graph();
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
inline void attr_int(ModelBuilder& m, const std::string& name, int64_t v) {
  auto* g = m.proto().mutable_graph();
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void polyinfer_domain(ModelBuilder& m) {
  auto* op = m.proto().add_opset_import();
  op->set_domain("ai.polyinfer");
  op->set_version(1);
}

inline Tensor random_q8(const Shape& s, bool is_signed, uint32_t seed) {
  const std::vector<int32_t> v =
      random_ints(numel(s), is_signed ? -128 : 0, is_signed ? 127 : 255, seed);
  if (is_signed) return Tensor::from_vector<int8_t>(s, std::vector<int8_t>(v.begin(), v.end()));
  return Tensor::from_vector<uint8_t>(s, std::vector<uint8_t>(v.begin(), v.end()));
}

// An unoptimized session of one provider.
inline Session load_on(const std::string& bytes, const std::string& provider) {
  SessionOptions o;
  o.optimization_level = 0;
  o.threads = 1;
  o.providers = {provider};
  return Session::load_bytes(bytes.data(), bytes.size(), o);
}

struct QConvCase {
  const char* name;
  Shape x, w;
  std::vector<int64_t> strides, pads;
  int64_t group;
  bool signed_x, signed_y, per_channel, bias;
};
inline void PrintTo(const QConvCase& c, std::ostream* os) { *os << c.name; }

// Shapes that reach every path: pointwise (strided too), padded, strided, asymmetric pads,
// depthwise, grouped, 1-D (also as 2-D of width 1).
inline std::vector<QConvCase> qconv_cases() {
  return {
      {"pointwise_u8", {1, 17, 9, 7}, {33, 17, 1, 1}, {}, {}, 1, false, false, true, true},
      // oneDNN: a stride-1 convolution of every second pixel (onednn::ConvDims::src_strides).
      {"pointwise_stride2_s8",
       {2, 16, 10, 7},
       {24, 16, 1, 1},
       {2, 2},
       {},
       1,
       true,
       false,
       true,
       true},
      {"k3pad1_s8", {2, 8, 13, 11}, {16, 8, 3, 3}, {}, {1, 1, 1, 1}, 1, true, true, true, true},
      {"stride2_pad3_u8s8",
       {1, 3, 23, 23},
       {8, 3, 7, 7},
       {2, 2},
       {3, 3, 3, 3},
       1,
       false,
       true,
       true,
       false},
      {"asym_pads_per_tensor",
       {1, 5, 10, 9},
       {7, 5, 3, 2},
       {1, 2},
       {0, 1, 2, 0},
       1,
       true,
       false,
       false,
       true},
      {"depthwise",
       {1, 12, 15, 15},
       {12, 1, 3, 3},
       {2, 2},
       {1, 1, 1, 1},
       12,
       true,
       true,
       true,
       true},
      {"grouped", {1, 12, 8, 8}, {9, 4, 3, 3}, {}, {1, 1, 1, 1}, 3, false, false, true, true},
      {"conv1d", {2, 6, 31}, {10, 6, 5}, {2}, {2, 2}, 1, true, true, true, true},
      // 1-D written over [H, 1] (Keras Conv1D): oneDNN runs it over [1, H].
      {"width1_k5_stride2",
       {2, 16, 21, 1},
       {24, 16, 5, 1},
       {2, 1},
       {2, 0, 1, 0},
       1,
       false,
       true,
       true,
       true},
  };
}

// QLinearConv(x, sx, zx, w, sw, zw, sy, zy[, b]) with weights in [-wmax, wmax].
inline ModelBuilder qconv_model(const QConvCase& c, int wmax) {
  const int64_t M = c.w[0], taps = numel(c.w) / M;
  ModelBuilder m(13);
  m.input("x", c.x, c.signed_x ? kInt8 : kUInt8).output("y", {}, c.signed_y ? kInt8 : kUInt8);
  const float sx = 0.02f;
  std::vector<float> sw(c.per_channel ? M : 1);
  for (size_t i = 0; i < sw.size(); ++i) sw[i] = 0.001f * (1 + i % 3);
  // Output scale: a typical |acc| (√taps · 74²: uniform 8-bit operands) maps to ~40 steps.
  const float sy = sx * 0.002f * std::sqrt(float(taps)) * 74 * 74 / 40;
  m.initializer("sx", {}, {sx}).initializer("sw", {int64_t(sw.size())}, sw);
  m.initializer("sy", {}, {sy});
  m.int_initializer("zx", {}, c.signed_x ? kInt8 : kUInt8, {c.signed_x ? -5 : 131});
  m.int_initializer("zw", {int64_t(sw.size())}, kInt8, std::vector<int32_t>(sw.size(), 0));
  m.int_initializer("zy", {}, c.signed_y ? kInt8 : kUInt8, {c.signed_y ? 3 : 120});
  m.int_initializer("w", c.w, kInt8, random_ints(numel(c.w), -wmax, wmax, 5));
  std::vector<std::string> in{"x", "sx", "zx", "w", "sw", "zw", "sy", "zy"};
  if (c.bias) {
    m.int_initializer("b", {M}, kInt32, random_ints(M, -20000, 20000, 6));
    in.push_back("b");
  }
  m.node("QLinearConv", in, {"y"}, "qconv");
  if (!c.strides.empty()) attr_ints(m, "strides", c.strides);
  if (!c.pads.empty()) attr_ints(m, "pads", c.pads);
  if (c.group != 1) attr_int(m, "group", c.group);
  return m;
}

// ai.polyinfer QLinearConvAdd on x [1, 8, 9, 9] and z [1, 12, 9, 9]: the convolution saturated to
// (sc, zc) — zc at the type's minimum, a Relu, so the clip matters — plus a residual Z with its
// own zero point. With computed_z, Z is Max(z, z), read by the convolution alone (which may then
// lend its memory to Y: Kernel::inplace_input).
inline ModelBuilder qconv_add_model(bool s8, bool computed_z, int wmax) {
  const int t = s8 ? kInt8 : kUInt8;
  ModelBuilder m(13);
  m.input("x", {1, 8, 9, 9}, t).input("z", {1, 12, 9, 9}, t).output("y", {}, t);
  polyinfer_domain(m);
  m.initializer("sx", {}, {0.02f}).initializer("sw", {12}, std::vector<float>(12, 0.002f));
  m.initializer("sc", {}, {0.02f * 0.002f * 3 * 74 * 74 / 40});
  m.initializer("sz", {}, {0.03f}).initializer("sy", {}, {0.05f});
  m.int_initializer("zx", {}, t, {s8 ? -5 : 131});
  m.int_initializer("zw", {12}, kInt8, std::vector<int32_t>(12, 0));
  m.int_initializer("zc", {}, t, {s8 ? -128 : 0});
  m.int_initializer("zz", {}, t, {s8 ? 7 : 120});
  m.int_initializer("zy", {}, t, {s8 ? -3 : 125});
  m.int_initializer("w", {12, 8, 1, 1}, kInt8, random_ints(96, -wmax, wmax, 5));
  m.int_initializer("b", {12}, kInt32, random_ints(12, -2000, 2000, 6));
  if (computed_z) m.node("Max", {"z", "z"}, {"z_max"}, "zmax");
  m.node("QLinearConvAdd",
         {"x", "sx", "zx", "w", "sw", "zw", "sc", "zc", "b", computed_z ? "z_max" : "z", "sz", "zz",
          "sy", "zy"},
         {"y"}, "qconvadd");
  m.proto().mutable_graph()->mutable_node(computed_z ? 1 : 0)->set_domain("ai.polyinfer");
  return m;
}

struct QMatMulCase {
  const char* name;
  Shape a;
  int64_t n;
  bool signed_a, signed_y, per_column;
};
inline void PrintTo(const QMatMulCase& c, std::ostream* os) { *os << c.name; }

inline std::vector<QMatMulCase> qmatmul_cases() {
  return {{"u8_per_column", {7, 33}, 17, false, false, true},
          {"s8_3d", {2, 13, 65}, 31, true, true, true},
          {"s8_per_tensor_u8_out", {5, 64}, 48, true, false, false}};
}

// QLinearMatMul(a, sa, za, b, sb, zb, sy, zy) with B [K, N] in [-wmax, wmax].
inline ModelBuilder qmatmul_model(const QMatMulCase& c, int wmax) {
  const int64_t K = c.a.back(), N = c.n;
  ModelBuilder m(13);
  m.input("a", c.a, c.signed_a ? kInt8 : kUInt8).output("y", {}, c.signed_y ? kInt8 : kUInt8);
  const float sa = 0.05f;
  std::vector<float> sb(c.per_column ? N : 1);
  for (size_t i = 0; i < sb.size(); ++i) sb[i] = 0.002f * (1 + i % 4);
  const float sy = sa * 0.004f * std::sqrt(float(K)) * 74 * 74 / 40;
  m.initializer("sa", {}, {sa}).initializer("sb", {int64_t(sb.size())}, sb);
  m.initializer("sy", {}, {sy});
  m.int_initializer("za", {}, c.signed_a ? kInt8 : kUInt8, {c.signed_a ? 9 : 100});
  m.int_initializer("zb", {int64_t(sb.size())}, kInt8, std::vector<int32_t>(sb.size(), 0));
  m.int_initializer("zy", {}, c.signed_y ? kInt8 : kUInt8, {c.signed_y ? -7 : 128});
  m.int_initializer("b", {K, N}, kInt8, random_ints(K * N, -wmax, wmax, 8));
  m.node("QLinearMatMul", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"}, "qmm");
  return m;
}

// ai.polyinfer QLinearGemm on a [3, 70] (quantized Y) or [2, 70] (float_y: no sy, zy) with an
// int32 bias large enough (thousands of sa·sb steps) that adding it after the scale, or not at
// all, moves most outputs.
inline ModelBuilder qgemm_model(bool s8, bool float_y, int wmax) {
  const int t = s8 ? kInt8 : kUInt8;
  const int64_t M = float_y ? 2 : 3, K = 70, N = float_y ? 33 : 21;
  ModelBuilder m(13);
  m.input("a", {M, K}, t);
  if (float_y) m.output("y", {});
  else
    m.output("y", {}, t);
  polyinfer_domain(m);
  std::vector<float> sb(N);
  for (int64_t i = 0; i < N; ++i) sb[i] = 0.002f * float(1 + i % 3);
  const float sa = 0.05f;
  m.initializer("sa", {}, {sa}).initializer("sb", {N}, sb);
  m.int_initializer("za", {}, t, {s8 ? 9 : 100});
  m.int_initializer("zb", {N}, kInt8, std::vector<int32_t>(N, 0));
  m.int_initializer("b", {K, N}, kInt8, random_ints(K * N, -wmax, wmax, 8));
  m.int_initializer("bias", {N}, kInt32, random_ints(N, -6000, 6000, 9));
  if (float_y) {
    m.node("QLinearGemm", {"a", "sa", "za", "b", "sb", "zb", "", "", "bias"}, {"y"}, "qgemm");
  } else {
    m.initializer("sy", {}, {sa * 0.004f * std::sqrt(float(K)) * 74 * 74 / 40});
    m.int_initializer("zy", {}, t, {s8 ? -7 : 128});
    m.node("QLinearGemm", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy", "bias"}, {"y"}, "qgemm");
  }
  m.proto().mutable_graph()->mutable_node(0)->set_domain("ai.polyinfer");
  return m;
}

// The values of a uint8 or int8 tensor as ints.
inline std::vector<int> q8_values(const Tensor& t) {
  std::vector<int> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    v[i] = t.dtype() == DType::Int8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
  return v;
}

}  // namespace polyinfer::test
