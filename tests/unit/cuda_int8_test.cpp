// The CUDA int8 kernels (providers/cuda/ops/qlinear.cpp, quantize.cpp, the 8-bit MaxPool and
// data movement) against the CPU reference kernels (`cpu-ref`), on the one-node models the
// oneDNN kernels are tested with (qlinear_models.h) and on a QDQ model through the optimizer.
//
// Exact: the integer sums are exact on both sides, and the CUDA kernels round the scales in the
// reference's order and precision (double for the requantization, float32 for Quantize/
// DequantizeLinear and QLinearAdd) with intrinsics nvcc never contracts into FMAs; the
// reference is built for baseline x86-64, which has no FMA either. So every byte and float
// must be equal. The weights use all 8 bits (cuBLASLt's int8 products do not saturate).
// Skipped, with the probe's reason, where cuda is not usable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "cuda_util.h"
#include "qlinear_models.h"

namespace polyinfer {
namespace {

using namespace test;

// Runs `m` on cuda and cpu-ref with `feed` and expects equal outputs, and every node of the cuda
// session on cuda with an implementation of its own ("cuda:..."), the first named `impl` when
// that is given. `o` carries the cuda session's provider options.
void expect_same_as_reference(ModelBuilder& m, const std::map<std::string, Value>& feed,
                              const std::string& impl = "", int level = 0, SessionOptions o = {}) {
  const std::string bytes = m.bytes();
  o.optimization_level = level;
  o.threads = 1;
  o.providers = {"cuda"};
  Session a = Session::load_bytes(bytes.data(), bytes.size(), o);
  o.providers = {"cpu-ref"};
  Session b = Session::load_bytes(bytes.data(), bytes.size(), o);
  const std::vector<Value> ya = a.run(feed), yb = b.run(feed);
  for (const auto& n : a.placement().nodes) {
    EXPECT_EQ(n.provider, "cuda") << n.node;
    EXPECT_EQ(n.impl.rfind("cuda:", 0), 0u) << n.node << ": " << n.impl;
  }
  if (!impl.empty()) {
    ASSERT_FALSE(a.placement().nodes.empty());
    EXPECT_EQ(a.placement().nodes.back().impl, impl);
  }
  ASSERT_EQ(ya.size(), yb.size());
  for (size_t k = 0; k < ya.size(); ++k) {
    const Tensor ta = ya[k].tensor().to(Device::cpu()), tb = yb[k].tensor();
    ASSERT_EQ(ta.dtype(), tb.dtype()) << "output " << k;
    ASSERT_EQ(ta.shape(), tb.shape()) << "output " << k;
    if (tb.dtype() == DType::Float32) {
      for (int64_t i = 0; i < tb.numel(); ++i)
        ASSERT_EQ(ta.data<float>()[i], tb.data<float>()[i]) << "output " << k << " at " << i;
      continue;
    }
    const std::vector<int> va = q8_values(ta), vb = q8_values(tb);
    for (size_t i = 0; i < va.size(); ++i)
      ASSERT_EQ(va[i], vb[i]) << "output " << k << " at flat index " << i;
  }
}

class CudaInt8Conv : public ::testing::TestWithParam<QConvCase> {};

TEST_P(CudaInt8Conv, MatchesReferenceExactly) {
  PI_SKIP_WITHOUT_CUDA();
  const QConvCase& c = GetParam();
  ModelBuilder m = qconv_model(c, 127);
  // Grouped convolutions take the direct kernel; the others the int8 GEMM (cuBLASLt on every
  // GPU the provider takes: these shapes meet its int8 layout rules by the packing).
  expect_same_as_reference(m, {{"x", random_q8(c.x, c.signed_x, 11)}},
                           c.group == 1 ? "cuda:cublaslt-int8" : "cuda:int8-direct");
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaInt8Conv, ::testing::ValuesIn(qconv_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// Z as a graph input (a computed Z, Max(z, z), would run on the CPU: no 8-bit Max on cuda).
TEST(CudaInt8, ConvAddMatchesReferenceExactly) {
  PI_SKIP_WITHOUT_CUDA();
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8" : "uint8");
    ModelBuilder m = qconv_add_model(s8, /*computed_z=*/false, 127);
    expect_same_as_reference(
        m, {{"x", random_q8({1, 8, 9, 9}, s8, 11)}, {"z", random_q8({1, 12, 9, 9}, s8, 12)}});
  }
}

class CudaInt8MatMul : public ::testing::TestWithParam<QMatMulCase> {};

TEST_P(CudaInt8MatMul, MatchesReferenceExactly) {
  PI_SKIP_WITHOUT_CUDA();
  const QMatMulCase& c = GetParam();
  ModelBuilder m = qmatmul_model(c, 127);
  expect_same_as_reference(m, {{"a", random_q8(c.a, c.signed_a, 11)}}, "cuda:cublaslt-int8");
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaInt8MatMul, ::testing::ValuesIn(qmatmul_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// The plain int8 GEMM kernel, which runs where cuBLASLt has no int8 algorithm for a shape:
// CudaProviderOptions::plain_int8_gemm sends every product there.
TEST(CudaInt8, PlainGemmMatchesReferenceExactly) {
  PI_SKIP_WITHOUT_CUDA();
  SessionOptions plain;
  plain.cuda.plain_int8_gemm = true;
  for (const QConvCase& c : qconv_cases()) {
    if (c.group != 1) continue;
    SCOPED_TRACE(c.name);
    ModelBuilder m = qconv_model(c, 127);
    expect_same_as_reference(m, {{"x", random_q8(c.x, c.signed_x, 11)}}, "cuda:int8-gemm", 0,
                             plain);
  }
  for (const QMatMulCase& c : qmatmul_cases()) {
    SCOPED_TRACE(c.name);
    ModelBuilder m = qmatmul_model(c, 127);
    expect_same_as_reference(m, {{"a", random_q8(c.a, c.signed_a, 11)}}, "cuda:int8-gemm", 0,
                             plain);
  }
}

TEST(CudaInt8, GemmBiasAndFloatOutputMatchReferenceExactly) {
  PI_SKIP_WITHOUT_CUDA();
  for (bool float_y : {false, true}) {
    for (bool s8 : {false, true}) {
      SCOPED_TRACE(std::string(s8 ? "int8" : "uint8") + (float_y ? ", float Y" : ""));
      ModelBuilder m = qgemm_model(s8, float_y, 127);
      const Shape a{float_y ? 2 : 3, 70};
      expect_same_as_reference(m, {{"a", random_q8(a, s8, 11)}});
    }
  }
}

// x float → QuantizeLinear per channel to int8 → DequantizeLinear back, and QuantizeLinear per
// tensor to uint8: x steps by a quarter of the scale, so half-way values test the rounding (to
// even), and runs past both ends of the 8-bit ranges test the saturation. And an int32
// DequantizeLinear (a QDQ bias) of large values, whose difference rounds to float32.
TEST(CudaInt8, QuantizeDequantizeMatchReferenceExactly) {
  PI_SKIP_WITHOUT_CUDA();
  const Shape xs{2, 3, 4, 25};
  std::vector<float> x(static_cast<size_t>(numel(xs)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = (float(i % 600) - 300.0f) * 0.25f * 0.1f;
  ModelBuilder m(13);
  m.input("x", xs).output("q", {}, kInt8).output("y", {}).output("q2", {}, kUInt8);
  m.initializer("s", {3}, {0.1f, 0.05f, 0.2f}).initializer("s2", {}, {0.1f});
  m.int_initializer("z", {3}, kInt8, {0, -3, 5});
  m.int_initializer("z2", {}, kUInt8, {128});
  m.node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "quant");
  attr_int(m, "axis", 1);
  m.node("DequantizeLinear", {"q", "s", "z"}, {"y"}, "dequant");
  attr_int(m, "axis", 1);
  m.node("QuantizeLinear", {"x", "s2", "z2"}, {"q2"}, "quant2");
  m.input("i", {6}, kInt32).output("id", {});
  m.int_initializer("zi", {}, kInt32, {-7});
  m.node("DequantizeLinear", {"i", "s2", "zi"}, {"id"}, "dequant_int32");
  const Tensor i32 =
      Tensor::from_vector<int32_t>({6}, {0, 1, -1, 123456789, -2147483000, 2147483640});
  expect_same_as_reference(m, {{"x", Tensor::from_vector<float>(xs, x)}, {"i", i32}});
}

TEST(CudaInt8, QLinearAddMatchesReferenceExactly) {
  PI_SKIP_WITHOUT_CUDA();
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8" : "uint8");
    const int t = s8 ? kInt8 : kUInt8;
    const Shape s{1, 16, 7, 7};
    ModelBuilder m(13);
    m.input("a", s, t).input("b", s, t).output("c", {}, t);
    polyinfer_domain(m);
    m.initializer("sa", {}, {0.03f}).initializer("sb", {}, {0.02f});
    m.initializer("sc", {}, {0.04f});
    m.int_initializer("za", {}, t, {s8 ? 4 : 130});
    m.int_initializer("zb", {}, t, {s8 ? -6 : 121});
    m.int_initializer("zc", {}, t, {s8 ? 1 : 126});
    m.node("QLinearAdd", {"a", "sa", "za", "b", "sb", "zb", "sc", "zc"}, {"c"}, "qadd");
    m.proto().mutable_graph()->mutable_node(0)->set_domain("ai.polyinfer");
    expect_same_as_reference(m, {{"a", random_q8(s, s8, 3)}, {"b", random_q8(s, s8, 4)}},
                             "cuda:qlinear-add");
  }
}

// The 8-bit values between an int8 model's products: MaxPool (padded: the window's maximum
// skips the padding), Transpose, Concat, Slice, a Reshape view, Split, Expand and Gather, all on
// cuda.
TEST(CudaInt8, MaxPoolAndDataMovementOf8BitValues) {
  PI_SKIP_WITHOUT_CUDA();
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8" : "uint8");
    const int t = s8 ? kInt8 : kUInt8;
    const Shape s{1, 4, 9, 9};
    ModelBuilder m(13);
    m.input("x", s, t).output("y", {}, t);
    m.int64_initializer("starts", {1}, {1}).int64_initializer("ends", {1}, {4});
    m.int64_initializer("axes", {1}, {1}).int64_initializer("shape", {2}, {3, -1});
    m.node("MaxPool", {"x"}, {"p"}, "pool");
    attr_ints(m, "kernel_shape", {3, 3});
    attr_ints(m, "strides", {2, 2});
    attr_ints(m, "pads", {1, 1, 1, 1});
    m.node("Transpose", {"p"}, {"t"}, "transpose");
    attr_ints(m, "perm", {0, 1, 3, 2});
    m.node("Concat", {"t", "p"}, {"c"}, "concat");
    attr_int(m, "axis", 1);
    m.node("Slice", {"c", "starts", "ends", "axes"}, {"sl"}, "slice");
    m.node("Reshape", {"sl", "shape"}, {"y"}, "reshape");
    m.output("s0", {}, t).output("s1", {}, t).output("e", {}, t).output("g", {}, t);
    m.int64_initializer("split", {2}, {1, 3}).int64_initializer("eshape", {4}, {2, 1, 5, 5});
    m.int64_initializer("gidx", {3}, {4, 0, 2});
    m.node("Split", {"p", "split"}, {"s0", "s1"}, "split");
    attr_int(m, "axis", 1);
    m.node("Expand", {"p", "eshape"}, {"e"}, "expand");  // [1, 4, 5, 5] → [2, 4, 5, 5]
    m.node("Gather", {"p", "gidx"}, {"g"}, "gather");
    attr_int(m, "axis", 3);
    expect_same_as_reference(m, {{"x", random_q8(s, s8, 9)}});
  }
}

// A QDQ model as exporters write it (float Conv between DequantizeLinear and QuantizeLinear,
// an int32 bias), through the optimizer (level 2: fuse-qdq makes the QLinearConv): every node on
// cuda, the outputs the reference's.
TEST(CudaInt8, QdqModelThroughTheOptimizerRunsOnCuda) {
  PI_SKIP_WITHOUT_CUDA();
  ModelBuilder m(13);
  const Shape xs{1, 8, 12, 12};
  m.input("x", xs).output("y", {});
  m.initializer("sx", {}, {0.02f}).initializer("sy", {}, {0.05f});
  m.initializer("sw", {16}, std::vector<float>(16, 0.003f));
  m.initializer("sb", {16}, std::vector<float>(16, 0.02f * 0.003f));
  m.int_initializer("zx", {}, kUInt8, {128}).int_initializer("zy", {}, kUInt8, {0});
  m.int_initializer("zw", {16}, kInt8, std::vector<int32_t>(16, 0));
  m.int_initializer("zb", {16}, kInt32, std::vector<int32_t>(16, 0));
  m.int_initializer("w", {16, 8, 3, 3}, kInt8, random_ints(16 * 72, -127, 127, 3));
  m.int_initializer("b", {16}, kInt32, random_ints(16, -3000, 3000, 4));
  m.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"}, "qx");
  m.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"}, "dqx");
  m.node("DequantizeLinear", {"w", "sw", "zw"}, {"wd"}, "dqw");
  attr_int(m, "axis", 0);
  m.node("DequantizeLinear", {"b", "sb", "zb"}, {"bd"}, "dqb");
  attr_int(m, "axis", 0);
  m.node("Conv", {"xd", "wd", "bd"}, {"c"}, "conv");
  attr_ints(m, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("QuantizeLinear", {"r", "sy", "zy"}, {"rq"}, "qy");
  m.node("DequantizeLinear", {"rq", "sy", "zy"}, {"y"}, "dqy");
  std::vector<float> x(static_cast<size_t>(numel(xs)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 37) % 200) * 0.01f - 1.0f;
  expect_same_as_reference(m, {{"x", Tensor::from_vector<float>(xs, x)}}, "", 2);
}

}  // namespace
}  // namespace polyinfer
