// Static INT8 quantization (src/quant): range choice, the QDQ rewrite, calibration.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "infer/infer.h"
#include "model_builder.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "quant/calibration.h"
#include "quant/dynamic.h"
#include "quant/fp16.h"
#include "quant/qdq.h"

namespace polyinfer {
namespace {

using quant::Range;

Model import(const test::ModelBuilder& b) {
  const std::string bytes = b.bytes();
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(m);
  return m;
}

const ir::Node* find_op(const ir::Graph& g, const std::string& op, const std::string& input = "") {
  for (const auto& n : g.nodes)
    if (n.op_type == op && (input.empty() || n.inputs[0] == input)) return &n;
  return nullptr;
}

TEST(QuantParams, SymmetricAndAsymmetric) {
  auto s = quant::quant_params({-2.0f, 1.0f}, true);
  EXPECT_FLOAT_EQ(s.scale, 2.0f / 127);
  EXPECT_EQ(s.zero_point, 0);
  // Asymmetric: [lo, hi] spans the 256 levels, lo at -128.
  auto a = quant::quant_params({-1.0f, 3.0f}, false);
  EXPECT_FLOAT_EQ(a.scale, 4.0f / 255);
  EXPECT_EQ(a.zero_point, int(std::nearbyint(-128 + 1.0 / (4.0 / 255))));
  // A ReLU output: zero maps to -128, every level on the positive side.
  auto r = quant::quant_params({0.0f, 6.0f}, false);
  EXPECT_EQ(r.zero_point, -128);
  EXPECT_FLOAT_EQ(r.scale, 6.0f / 255);
  // A tensor that was always zero still gets a valid (positive) scale.
  EXPECT_GT(quant::quant_params({0, 0}, false).scale, 0);
  EXPECT_GT(quant::quant_params({0, 0}, true).scale, 0);
}

quant::TensorStats stats_of(const std::vector<float>& xs, int bins) {
  quant::TensorStats s;
  s.min = *std::min_element(xs.begin(), xs.end());
  s.max = *std::max_element(xs.begin(), xs.end());
  s.histogram.assign(size_t(bins), 0);
  for (float x : xs)
    s.histogram[std::min(size_t(bins - 1), size_t(std::fabs(x) / s.absmax() * bins))] += 1;
  return s;
}

TEST(Calibration, RangesFromStatistics) {
  // 100000 values in [0, 1) and ten outliers at 100: min/max keeps the outliers; percentile
  // 99.9 and entropy clip them, so the bulk keeps its resolution.
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> xs;
  for (int i = 0; i < 100000; ++i) xs.push_back(u(rng));
  for (int i = 0; i < 10; ++i) xs.push_back(100);
  const auto s = stats_of(xs, 2048);
  const Range mm = quant::minmax_range(s);
  EXPECT_EQ(mm.lo, 0);
  EXPECT_EQ(mm.hi, 100);
  const Range p = quant::percentile_range(s, 99.9);
  EXPECT_GE(p.hi, 0.99f);
  EXPECT_LE(p.hi, 1.1f);
  // Entropy's smallest candidate threshold is `levels` bins (255 of 2048 over [0, 100]: 12.45);
  // the bulk lies inside it, so clipping as far as that loses nothing and it is the choice.
  const Range e = quant::entropy_range(s, 255);
  EXPECT_GE(e.hi, 0.9f);
  EXPECT_LE(e.hi, 255.0f / 2048 * 100 + 1e-3f);
  EXPECT_EQ(e.lo, 0);

  // ReLU of a normal: half the values are exactly 0; the rest must not be clipped much (the zero
  // spike once pulled the threshold to 37% of the maximum, clipping 3% of the values).
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> relu;
  for (int i = 0; i < 200000; ++i) relu.push_back(std::max(0.0f, normal(rng)));
  const auto rs = stats_of(relu, 2048);
  const Range er = quant::entropy_range(rs, 255);
  int64_t clipped = 0;
  for (float v : relu) clipped += v > er.hi;
  EXPECT_LT(double(clipped) / double(relu.size()), 1e-3) << "threshold " << er.hi;

  // Uniform data without outliers: clipping anything loses information, entropy keeps ~all.
  std::vector<float> sym;
  for (int i = 0; i < 100000; ++i) sym.push_back(2 * u(rng) - 1);
  const auto ss = stats_of(sym, 2048);
  const Range es = quant::entropy_range(ss, 127);
  EXPECT_GT(es.hi, 0.9f * ss.absmax());
  EXPECT_LT(es.lo, -0.9f * ss.absmax());
}

TEST(Calibration, CollectsRangesAndRejectsNonFinite) {
  test::ModelBuilder b(13);
  b.input("x", {1, 4}).output("y", {1, 4}).node("Relu", {"x"}, {"r"}).node("Neg", {"r"}, {"y"});
  Model m = import(b);
  quant::Calibrator c(m, {"x", "r", "y"}, 1, 16);
  c.observe_range({{"x", Tensor::from_vector<float>({1, 4}, {-3, 1, 2, 0.5f})}});
  c.observe_range({{"x", Tensor::from_vector<float>({1, 4}, {-1, 5, 2, 0.5f})}});
  EXPECT_EQ(c.stats().at("x").min, -3);
  EXPECT_EQ(c.stats().at("x").max, 5);
  EXPECT_EQ(c.stats().at("r").min, 0);
  EXPECT_EQ(c.stats().at("y").min, -5);
  EXPECT_EQ(c.stats().at("y").max, 0);
  c.observe_histogram({{"x", Tensor::from_vector<float>({1, 4}, {-3, 1, 2, 0.5f})}});
  double total = 0;
  for (double h : c.stats().at("r").histogram) total += h;
  EXPECT_EQ(total, 4);
  try {
    c.observe_range({{"x", Tensor::from_vector<float>({1, 4}, {1, NAN, 2, 0})}});
    FAIL() << "NaN accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}

// Conv -> Relu -> Conv -> output: what gets Q/DQ, and what stays float.
test::ModelBuilder conv_chain() {
  test::ModelBuilder b(13);
  std::vector<float> w1(2 * 1 * 3 * 3), w2(2 * 2 * 1 * 1);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.1f * float(i % 7) - 0.3f;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.25f * float(i) - 0.4f;
  b.input("x", {1, 1, 5, 5})
      .output("y", {1, 2, 3, 3})
      .initializer("w1", {2, 1, 3, 3}, w1)
      .initializer("b1", {2}, {0.5f, -0.25f})
      .initializer("w2", {2, 2, 1, 1}, w2)
      .node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1")
      .node("Relu", {"c1"}, {"r1"}, "relu1")
      .node("Conv", {"r1", "w2"}, {"y"}, "conv2");
  return b;
}

TEST(Qdq, PlanQuantizesInputsAndFusableOutputs) {
  Model m = import(conv_chain());
  quant::QdqOptions o;
  const auto p = quant::plan_qdq(*m.graph, o);
  EXPECT_EQ(p.nodes, (std::vector<std::string>{"conv1", "conv2"}));
  // conv1's output feeds only a Relu: the Relu's output carries the Q/DQ; y is a graph output.
  EXPECT_EQ(p.activations, (std::vector<std::string>{"x", "r1"}));
  o.exclude = {"conv2"};
  const auto q = quant::plan_qdq(*m.graph, o);
  EXPECT_EQ(q.nodes, (std::vector<std::string>{"conv1"}));
  ASSERT_EQ(q.notes.size(), 1u);
  EXPECT_NE(q.notes[0].find("conv2"), std::string::npos);
}

TEST(Qdq, OldOpsetsAreRefusedWithTheFix) {
  test::ModelBuilder b(9);
  b.input("x", {1, 2})
      .output("y", {1, 2})
      .initializer("w", {2, 2}, {1, 2, 3, 4})
      .node("MatMul", {"x", "w"}, {"y"});
  Model m = import(b);
  try {
    quant::plan_qdq(*m.graph, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("opset >= 10"), std::string::npos) << e.what();
  }
}

// The rewritten model computes what int8 arithmetic would: checked against a naive
// re-implementation of the same quantization, written here independently of src/quant.
TEST(Qdq, RewriteMatchesNaiveInt8Arithmetic) {
  test::ModelBuilder b(13);
  const std::vector<float> w = {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 0.1f};  // [K=2, N=3]
  b.input("x", {1, 2})
      .output("y", {1, 3})
      .initializer("w", {2, 3}, w)
      .initializer("bias", {3}, {0.3f, -0.2f, 1.0f})
      .node("Gemm", {"x", "w", "bias"}, {"g"}, "gemm")
      .node("Relu", {"g"}, {"r"})
      .node("Neg", {"r"}, {"y"});
  Model m = import(b);
  quant::QdqOptions o;
  o.per_channel = true;
  const auto plan = quant::plan_qdq(*m.graph, o);
  ASSERT_EQ(plan.activations, (std::vector<std::string>{"x", "r"}));
  const std::map<std::string, Range> ranges = {{"x", {-1.0f, 2.0f}}, {"r", {0.0f, 4.0f}}};
  const auto rep = quant::apply_qdq(*m.graph, plan, ranges, o);
  EXPECT_EQ(rep.nodes, 1);
  EXPECT_EQ(rep.activations, 2);
  EXPECT_EQ(rep.weights, 1);
  EXPECT_EQ(rep.biases, 1);
  EXPECT_EQ(m.graph->initializers.count("w"), 0u) << "the float weight is dropped";
  const ir::Node* gemm = find_op(*m.graph, "Gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->inputs[0], "x_dequantized");
  EXPECT_EQ(gemm->inputs[1], "w_dequantized");
  EXPECT_EQ(gemm->inputs[2], "bias_dequantized");
  EXPECT_EQ(m.graph->initializers.at("w_quantized").dtype(), DType::Int8);
  EXPECT_EQ(m.graph->initializers.at("bias_quantized").dtype(), DType::Int32);
  const ir::Node* neg = find_op(*m.graph, "Neg");
  EXPECT_EQ(neg->inputs[0], "r_dequantized");

  // Naive int8: x on [-1, 2] asymmetric, w per column symmetric, bias on sx*sw, r on [0, 4].
  const std::vector<float> x = {0.7f, -0.33f};
  auto q = [](double v, double s, double zp, double lo, double hi) {
    return (std::clamp(std::nearbyint(v / s) + zp, lo, hi) - zp) * s;
  };
  const float sx = float(3.0 / 255);
  const double zx = std::nearbyint(-128 + 1.0 / sx);
  std::vector<float> expect(3);
  for (int n = 0; n < 3; ++n) {
    const float sw = std::max(std::fabs(w[size_t(n)]), std::fabs(w[size_t(3 + n)])) / 127.0f;
    double acc = q(0.3 * (n == 0) - 0.2 * (n == 1) + 1.0 * (n == 2), double(sx * sw), 0, -2e9, 2e9);
    for (int k = 0; k < 2; ++k)
      acc += q(x[size_t(k)], sx, zx, -128, 127) * q(w[size_t(3 * k + n)], sw, 0, -127, 127);
    const float sr = float(4.0 / 255);
    expect[size_t(n)] = -float(q(std::max(acc, 0.0), sr, -128, -128, 127));
  }
  const std::string bytes = export_onnx_bytes(m);
  SessionOptions so;
  so.optimization_level = 0;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), so);
  const Tensor y = s.run({{"x", Tensor::from_vector<float>({1, 2}, x)}})[0].tensor();
  for (int n = 0; n < 3; ++n)
    EXPECT_NEAR(y.data<float>()[n], expect[size_t(n)], 1e-6) << "column " << n;
}

// --reduce-range: weights on [-63, 63] with scale max|w| / 63 per channel, so that CPUs without
// VNNI compute the int8 products exactly (onednn::int8_weight_advisory).
TEST(Qdq, ReducedRangeWeightsUseSevenBits) {
  test::ModelBuilder b(13);
  const std::vector<float> w = {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 0.1f};  // [K=2, N=3]
  b.input("x", {1, 2})
      .output("y", {1, 3})
      .initializer("w", {2, 3}, w)
      .node("Gemm", {"x", "w"}, {"g"}, "gemm")
      .node("Neg", {"g"}, {"y"});
  Model m = import(b);
  quant::QdqOptions o;
  o.per_channel = true;
  o.reduce_range = true;
  const auto plan = quant::plan_qdq(*m.graph, o);
  quant::apply_qdq(*m.graph, plan, {{"x", {-1.0f, 2.0f}}, {"g", {-3.0f, 3.0f}}}, o);
  const Tensor& q = m.graph->initializers.at("w_quantized");
  const Tensor& s = m.graph->initializers.at("w_scale");
  ASSERT_EQ(q.dtype(), DType::Int8);
  ASSERT_EQ(s.numel(), 3);
  for (int n = 0; n < 3; ++n) {
    const float absmax = std::max(std::fabs(w[size_t(n)]), std::fabs(w[size_t(3 + n)]));
    EXPECT_FLOAT_EQ(s.data<float>()[n], absmax / 63.0f) << "column " << n;
    for (int k = 0; k < 2; ++k) {
      const int v = q.data<int8_t>()[3 * k + n];
      EXPECT_LE(std::abs(v), 63);
      EXPECT_EQ(v, int(std::nearbyint(w[size_t(3 * k + n)] / s.data<float>()[n])));
    }
  }
  // The dynamic rewrite takes the same option.
  Model d = import(b);
  quant::DynamicOptions dyn;
  dyn.reduce_range = true;
  ASSERT_EQ(quant::quantize_dynamic(*d.graph, dyn).nodes, 1);
  for (const auto& [name, t] : d.graph->initializers) {
    if (t.dtype() != DType::Int8 || t.numel() != 6) continue;
    for (int64_t i = 0; i < 6; ++i) EXPECT_LE(std::abs(int(t.data<int8_t>()[i])), 63) << name;
  }
}

TEST(Qdq, BiasThatWouldOverflowStaysFloat) {
  test::ModelBuilder b(13);
  b.input("x", {1, 1, 3, 3})
      .output("y", {1, 1, 3, 3})
      .initializer("w", {1, 1, 1, 1}, {1e-3f})
      .initializer("b", {1}, {1e9f})
      .node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  Model m = import(b);
  const auto plan = quant::plan_qdq(*m.graph, {});
  const auto rep = quant::apply_qdq(*m.graph, plan, {{"x", {-1e-3f, 1e-3f}}}, {});
  EXPECT_EQ(rep.biases, 0);
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_NE(rep.notes[0].find("overflow"), std::string::npos);
  EXPECT_EQ(find_op(*m.graph, "Conv")->inputs[2], "b");
}

}  // namespace
}  // namespace polyinfer

namespace polyinfer {
namespace {

// Dynamic int8 against a naive re-implementation of DynamicQuantizeLinear + MatMulInteger
// arithmetic (written here from the ONNX operator definitions, independently of src/quant).
TEST(QuantDynamic, GemmMatchesNaiveRuntimeQuantization) {
  test::ModelBuilder b(13);
  const std::vector<float> w = {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 0.1f};  // transB: [N=3, K=2]
  b.input("x", {2, 2})
      .output("y", {2, 3})
      .initializer("w", {3, 2}, w)
      .initializer("bias", {3}, {0.3f, -0.2f, 1.0f})
      .node("Gemm", {"x", "w", "bias"}, {"y"}, "gemm");
  auto* attr = b.proto().mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("transB");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(1);
  Model m = import(b);
  const auto rep = quant::quantize_dynamic(*m.graph, {true, false, {}});
  EXPECT_EQ(rep.nodes, 1);
  ASSERT_NE(find_op(*m.graph, "MatMulInteger"), nullptr);
  EXPECT_EQ(find_op(*m.graph, "Gemm"), nullptr);
  EXPECT_EQ(m.graph->initializers.count("w"), 0u);

  const std::vector<float> x = {0.7f, -0.33f, 1.5f, 0.2f};
  const double lo = std::min(0.0, -0.33), hi = 1.5, sx = (hi - lo) / 255;
  const double zx = std::clamp(std::nearbyint(-lo / sx), 0.0, 255.0);
  std::vector<float> expect(6);
  for (int r = 0; r < 2; ++r)
    for (int n = 0; n < 3; ++n) {
      const double sw =
          std::max(std::fabs(w[size_t(2 * n)]), std::fabs(w[size_t(2 * n + 1)])) / 127.0;
      double acc = 0;
      for (int k = 0; k < 2; ++k) {
        const double xq = std::clamp(std::nearbyint(x[size_t(2 * r + k)] / sx) + zx, 0.0, 255.0);
        acc += (xq - zx) * std::nearbyint(w[size_t(2 * n + k)] / sw);
      }
      expect[size_t(3 * r + n)] = float(acc * float(float(sx) * float(sw))) + (n == 0   ? 0.3f
                                                                               : n == 1 ? -0.2f
                                                                                        : 1.0f);
    }
  const std::string bytes = export_onnx_bytes(m);
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  const Tensor y = s.run({{"x", Tensor::from_vector<float>({2, 2}, x)}})[0].tensor();
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y.data<float>()[i], expect[size_t(i)], 1e-5) << i;
}

// float16: the safe ops run in half, Softmax stays float32, Casts only at the borders, and the
// graph's input and output keep float32.
TEST(QuantFp16, SensitiveOpsStayFloat32) {
  test::ModelBuilder b(13);
  std::vector<float> w(2 * 1 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * float(i % 5) - 0.2f;
  b.input("x", {1, 1, 4, 4})
      .output("y", {1, 8})
      .initializer("w", {2, 1, 3, 3}, w)
      .initializer("shape", {2}, {})
      .node("Conv", {"x", "w"}, {"c"}, "conv")
      .node("Relu", {"c"}, {"r"}, "relu")
      .node("Flatten", {"r"}, {"f"}, "flatten")
      .node("Softmax", {"f"}, {"y"}, "softmax");
  b.proto().mutable_graph()->mutable_initializer()->RemoveLast();  // "shape" unused
  Model m = import(b);
  Model ref = import(b);
  const auto rep = quant::convert_fp16(*m.graph, {});
  EXPECT_EQ(rep.fp16_nodes, 3);  // Conv, Relu, Flatten
  EXPECT_EQ(rep.fp32_nodes, 1);  // Softmax
  EXPECT_EQ(rep.casts, 2);       // x to half, Flatten's output back to float
  EXPECT_EQ(m.graph->initializers.at("w").dtype(), DType::Float16);
  EXPECT_EQ(find_op(*m.graph, "Softmax")->inputs[0], "f_to_fp32");
  const std::string bytes = export_onnx_bytes(m), ref_bytes = export_onnx_bytes(ref);
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  Session r = Session::load_bytes(ref_bytes.data(), ref_bytes.size());
  EXPECT_EQ(s.inputs()[0].dtype, DType::Float32);
  EXPECT_EQ(s.outputs()[0].dtype, DType::Float32);
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i));
  const Tensor got = s.run({{"x", Tensor::from_vector<float>({1, 1, 4, 4}, x)}})[0].tensor();
  const Tensor want = r.run({{"x", Tensor::from_vector<float>({1, 1, 4, 4}, x)}})[0].tensor();
  // Half has an 11-bit significand: inputs, weights and the Conv's result each round by at most
  // 2^-11 relative; probabilities of this size move by well under 1e-3.
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-3) << i;
}

// bfloat16's bits by round to nearest even, decided on the dropped half against the halfway
// point: a different computation from the library's add-and-shift.
uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t hi = u >> 16;
  const uint32_t lo = u & 0xffffu;
  if (lo > 0x8000u || (lo == 0x8000u && (hi & 1u))) ++hi;
  return static_cast<uint16_t>(hi);
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// bfloat16 target: weights round to nearest even bit for bit (ties both ways, just off the
// ties, negative, subnormal, float16's overflow range, rounding up to inf), the Casts at the
// borders go to bfloat16 and back, and every 16-bit value is typed bfloat16.
TEST(QuantFp16, Bf16InitializersRoundToNearestEven) {
  std::vector<float> w = {from_bits(0x3f808000u),  // tie, even upper half: stays
                          from_bits(0x3f818000u),  // tie, odd upper half: up
                          from_bits(0x3f808001u),
                          from_bits(0x3f807fffu),
                          from_bits(0xbf818000u),
                          from_bits(0x00018000u),  // float32 subnormal, tie
                          1e5f,
                          -3e38f,
                          1e-30f,
                          from_bits(0x7f7fffffu)};  // 1e5 overflows float16, not bfloat16
  std::mt19937 gen(7);
  while (w.size() < 4 * 16) {
    // Random sign and mantissa, exponents across float16's range and beyond.
    const uint32_t exp = 100 + gen() % 60;
    w.push_back(from_bits((gen() & 0x807fffffu) | (exp << 23)));
  }
  test::ModelBuilder b(13);
  b.input("x", {1, 4})
      .output("y", {1, 16})
      .initializer("w", {4, 16}, w)
      .node("MatMul", {"x", "w"}, {"y"}, "mm");
  Model m = import(b);
  quant::Fp16Options o;
  o.type = DType::BFloat16;
  const auto rep = quant::convert_fp16(*m.graph, o);
  EXPECT_EQ(rep.fp16_nodes, 1);
  EXPECT_EQ(rep.casts, 2);  // x to bfloat16, the product back to float32 for y
  EXPECT_EQ(rep.float_bytes, int64_t(w.size() * 4));
  EXPECT_EQ(rep.half_bytes, int64_t(w.size() * 2));
  const ir::Graph& g = *m.graph;
  const Tensor& hw = g.initializers.at("w");
  ASSERT_EQ(hw.dtype(), DType::BFloat16);
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_EQ(hw.data<BFloat16>()[i].bits, bf16_bits(w[i])) << i << ": " << w[i];
  const ir::Node* mm = find_op(g, "MatMul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->inputs[0], "x_to_bf16");
  EXPECT_EQ(g.type_of(mm->inputs[0])->elem, DType::BFloat16);
  EXPECT_EQ(g.type_of(mm->outputs[0])->elem, DType::BFloat16);
  int to_bf16 = 0, to_f32 = 0;
  for (const auto& n : g.nodes) {
    if (n.op_type != "Cast") continue;
    const DType to = DType(n.attr("to")->i);
    to_bf16 += to == DType::BFloat16 && n.inputs[0] == "x";
    to_f32 += to == DType::Float32 && n.outputs[0] == "y";
  }
  EXPECT_EQ(to_bf16, 1);
  EXPECT_EQ(to_f32, 1);
  EXPECT_EQ(g.outputs[0].type.elem, DType::Float32);
}

// The float16 test's model at bfloat16: the same nodes convert and the same Casts border them;
// exported and run, it agrees with float32 within bfloat16's rounding.
TEST(QuantFp16, Bf16SensitiveOpsStayFloat32) {
  test::ModelBuilder b(13);
  std::vector<float> w(2 * 1 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * float(i % 5) - 0.2f;
  b.input("x", {1, 1, 4, 4})
      .output("y", {1, 8})
      .initializer("w", {2, 1, 3, 3}, w)
      .node("Conv", {"x", "w"}, {"c"}, "conv")
      .node("Relu", {"c"}, {"r"}, "relu")
      .node("Flatten", {"r"}, {"f"}, "flatten")
      .node("Softmax", {"f"}, {"y"}, "softmax");
  Model m = import(b);
  Model ref = import(b);
  quant::Fp16Options o;
  o.type = DType::BFloat16;
  const auto rep = quant::convert_fp16(*m.graph, o);
  EXPECT_EQ(rep.fp16_nodes, 3);  // Conv, Relu, Flatten
  EXPECT_EQ(rep.fp32_nodes, 1);  // Softmax
  EXPECT_EQ(rep.casts, 2);
  EXPECT_EQ(m.graph->initializers.at("w").dtype(), DType::BFloat16);
  EXPECT_EQ(find_op(*m.graph, "Softmax")->inputs[0], "f_to_fp32");
  EXPECT_EQ(find_op(*m.graph, "Conv")->inputs[0], "x_to_bf16");
  const std::string bytes = export_onnx_bytes(m), ref_bytes = export_onnx_bytes(ref);
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  Session r = Session::load_bytes(ref_bytes.data(), ref_bytes.size());
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i));
  const Tensor got = s.run({{"x", Tensor::from_vector<float>({1, 1, 4, 4}, x)}})[0].tensor();
  const Tensor want = r.run({{"x", Tensor::from_vector<float>({1, 1, 4, 4}, x)}})[0].tensor();
  // bfloat16 keeps 8 significant bits: each rounding moves a value by <= u = 2^-8 relative.
  // A Conv output c = sum of 9 terms |x w| <= 0.2 (S <= 1.8) errs by <= 2u S (x and w rounded)
  // + u |c| (the result) <= 3u S; Relu and Flatten are exact, and Softmax moves p_i by at most
  // p_i * 2 max|dc|, so |dp_i| <= p_i * 6u * 1.8.
  const float u = std::ldexp(1.0f, -8);
  for (int i = 0; i < 8; ++i) {
    const float p = want.data<float>()[i];
    EXPECT_NEAR(got.data<float>()[i], p, p * 6 * u * 1.8f) << i;
  }
}

// Only the two 16-bit float types are targets: anything else is refused before the graph
// changes.
TEST(QuantFp16, RejectsOtherTargetTypes) {
  test::ModelBuilder b(13);
  b.input("x", {2}).output("y", {2}).node("Relu", {"x"}, {"y"}, "relu");
  for (DType t : {DType::Float32, DType::Float64, DType::Int8}) {
    Model m = import(b);
    quant::Fp16Options o;
    o.type = t;
    try {
      quant::convert_fp16(*m.graph, o);
      ADD_FAILURE() << dtype_name(t) << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("float16 or bfloat16"), std::string::npos) << e.what();
    }
    ASSERT_EQ(m.graph->nodes.size(), 1u);
    EXPECT_EQ(m.graph->nodes[0].op_type, "Relu");
  }
}

}  // namespace
}  // namespace polyinfer
