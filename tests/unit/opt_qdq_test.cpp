// The QDQ fusion pass (src/opt/qdq_fusion.cpp): DequantizeLinear → Conv/MatMul → QuantizeLinear
// patterns become QLinearConv / QLinearMatMul, and the rewritten model agrees with the float
// QDQ one (both on cpu-ref) within one output quantization step. Why a step and not exactly:
// the float model rounds the product once at the QuantizeLinear after float accumulation; the
// integer one accumulates exactly and rounds (acc + bias)·sx·sw/sy, so values within float
// error of a rounding boundary can land on the neighbouring integer.
#include "opt_test_util.h"
#include "providers/cpu/onednn/onednn.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;

constexpr int kUInt8 = 2, kInt8 = 3, kInt32 = 6;

std::vector<int32_t> ints(size_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// x (float) → QuantizeLinear → DequantizeLinear: an 8-bit activation as QDQ models carry it.
void quantized_input(ModelBuilder& b, const std::string& x, float scale, int zp, bool s8) {
  b.initializer(x + "_s", {}, {scale});
  b.int_initializer(x + "_z", {}, s8 ? kInt8 : kUInt8, {zp});
  b.node("QuantizeLinear", {x, x + "_s", x + "_z"}, {x + "_q"});
  b.node("DequantizeLinear", {x + "_q", x + "_s", x + "_z"}, {x + "_dq"});
}

// Per-channel int8 weights on `axis` with zero point 0, dequantized.
void quantized_weights(ModelBuilder& b, const std::string& w, std::vector<int64_t> dims, int axis,
                       uint32_t seed) {
  const int64_t ch = dims[axis];
  std::vector<float> s(ch);
  for (int64_t i = 0; i < ch; ++i) s[i] = 0.004f + 0.001f * float(i % 3);
  b.int_initializer(w + "_q", dims, kInt8, ints(test::numel(dims), -127, 127, seed));
  b.initializer(w + "_s", {ch}, s);
  b.int_initializer(w + "_z", {ch}, kInt8, std::vector<int32_t>(ch, 0));
  b.node("DequantizeLinear", {w + "_q", w + "_s", w + "_z"}, {w + "_dq"});
  test::set_int(test::last_node(b), "axis", axis);
}

// The output: QuantizeLinear(v) → DequantizeLinear → float graph output `y`.
void quantized_output(ModelBuilder& b, const std::string& v, const std::string& y, float scale,
                      int zp, bool s8) {
  b.initializer(y + "_s", {}, {scale});
  b.int_initializer(y + "_z", {}, s8 ? kInt8 : kUInt8, {zp});
  b.node("QuantizeLinear", {v, y + "_s", y + "_z"}, {y + "_q"});
  b.node("DequantizeLinear", {y + "_q", y + "_s", y + "_z"}, {y});
}

// Runs the pass; checks the count, order, and outputs within `step` (per output, in order) of
// the unfused model; returns the rewritten graph.
Model fuse_and_compare(const std::string& bytes, int rewrites, const std::vector<float>& step) {
  Model m = test::import_bytes(bytes);
  auto pass = opt::make_qdq_fusion();
  EXPECT_EQ(pass->run(*m.graph), rewrites);
  EXPECT_TRUE(opt::is_topological(*m.graph));
  const auto in = test::random_inputs(bytes);
  const auto want = test::run_model(bytes, 0, in);
  const auto got = test::run_model(test::export_bytes(m), 0, in);
  EXPECT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size() && o < want.size(); ++o) {
    const auto a = got[o].tensor().to_vector<float>(), e = want[o].tensor().to_vector<float>();
    EXPECT_EQ(a.size(), e.size());
    int differ = 0;
    for (size_t i = 0; i < a.size() && i < e.size(); ++i) {
      EXPECT_LE(std::fabs(a[i] - e[i]), step[o] * 1.001f) << "output " << o << " at " << i;
      differ += a[i] != e[i];
    }
    // Near-boundary cases are rare: a systematic error (wrong bias, zero point) would move
    // most elements.
    EXPECT_LE(differ * 50, static_cast<int>(a.size())) << differ << " of " << a.size();
  }
  return m;
}

TEST(OptQdq, ConvWithBiasAndReluBecomesQLinearConv) {
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8 activations" : "uint8 activations");
    ModelBuilder b(13);
    b.input("x", {1, 4, 9, 9}).output("y", {1, 6, 9, 9});
    quantized_input(b, "x", 0.016f, s8 ? -3 : 125, s8);
    quantized_weights(b, "w", {6, 4, 3, 3}, 0, 1);
    // The exporters' bias: int32 at scale sx·sw[m], zero point 0.
    std::vector<float> bs(6);
    for (int m = 0; m < 6; ++m) bs[m] = 0.016f * (0.004f + 0.001f * float(m % 3));
    b.int_initializer("b_q", {6}, kInt32, ints(6, -3000, 3000, 2));
    b.initializer("b_s", {6}, bs);
    b.int_initializer("b_z", {6}, kInt32, std::vector<int32_t>(6, 0));
    b.node("DequantizeLinear", {"b_q", "b_s", "b_z"}, {"b_dq"});
    test::set_int(test::last_node(b), "axis", 0);
    b.node("Conv", {"x_dq", "w_dq", "b_dq"}, {"c"}, "conv");
    test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
    b.node("Relu", {"c"}, {"r"});
    // The Relu goes only where the output zero point is the type's minimum.
    quantized_output(b, "r", "y", 0.05f, s8 ? -128 : 0, s8);
    Model m = fuse_and_compare(b.bytes(), 1, {0.05f});
    EXPECT_EQ(test::count_op(*m.graph, "QLinearConv"), 1);
    EXPECT_EQ(test::count_op(*m.graph, "Conv"), 0);
    EXPECT_EQ(test::count_op(*m.graph, "Relu"), 0);
  }
}

// ReLU6 (MobileNet's Clip(0, 6)) goes where the 8-bit range is within [0, 6], so saturation
// clamps as it would; where the range reaches past 6 the Clip must stay, and so does the float
// Conv.
TEST(OptQdq, Relu6WithinTheQuantizedRangeIsDropped) {
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8 activations" : "uint8 activations");
    ModelBuilder b(13);
    b.input("x", {1, 4, 7, 7}).output("y1", {1, 6, 7, 7}).output("y2", {1, 6, 7, 7});
    quantized_input(b, "x", 0.05f, s8 ? 0 : 128, s8);
    quantized_weights(b, "w", {6, 4, 3, 3}, 0, 11);
    b.initializer("lo", {}, {0.f});
    b.initializer("hi", {}, {6.f});
    const int qmin = s8 ? -128 : 0;
    b.node("Conv", {"x_dq", "w_dq"}, {"c1"}, "conv1");
    test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
    b.node("Clip", {"c1", "lo", "hi"}, {"r1"});
    quantized_output(b, "r1", "y1", 6.f / 255, qmin, s8);
    b.node("Conv", {"x_dq", "w_dq"}, {"c2"}, "conv2");
    test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
    b.node("Clip", {"c2", "lo", "hi"}, {"r2"});
    quantized_output(b, "r2", "y2", 8.f / 255, qmin, s8);
    Model m = fuse_and_compare(b.bytes(), 1, {6.f / 255, 0.f});
    EXPECT_EQ(test::count_op(*m.graph, "QLinearConv"), 1);
    EXPECT_EQ(test::count_op(*m.graph, "Conv"), 1);
    EXPECT_EQ(test::count_op(*m.graph, "Clip"), 1);
    // The data reaches both bounds, so the comparison saw the clamping.
    const auto y1 = test::run_model(b.bytes(), 0, test::random_inputs(b.bytes()))[0]
                        .tensor()
                        .to_vector<float>();
    EXPECT_GT(std::count(y1.begin(), y1.end(), 0.f), 10);
    EXPECT_GT(std::count_if(y1.begin(), y1.end(), [](float v) { return v > 5.99f; }), 0);
  }
}

TEST(OptQdq, FloatBiasAndPerTensorWeights) {
  ModelBuilder b(13);
  b.input("x", {2, 3, 8, 8}).output("y", {2, 5, 4, 4});
  quantized_input(b, "x", 0.02f, 128, false);
  b.int_initializer("w_q", {5, 3, 3, 3}, kInt8, ints(135, -127, 127, 3));
  b.initializer("w_s", {}, {0.005f});
  b.int_initializer("w_z", {}, kInt8, {0});
  b.node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"w_dq"});
  test::random_initializer(b, "bias", {5}, 4, -0.3f, 0.3f);
  b.node("Conv", {"x_dq", "w_dq", "bias"}, {"c"}, "conv");
  test::set_ints(test::last_node(b), "strides", {2, 2});
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  quantized_output(b, "c", "y", 0.04f, 120, false);
  Model m = fuse_and_compare(b.bytes(), 1, {0.04f});
  EXPECT_EQ(test::count_op(*m.graph, "QLinearConv"), 1);
}

TEST(OptQdq, MatMulBecomesQLinearMatMul) {
  ModelBuilder b(13);
  b.input("a", {2, 5, 16}).output("y", {2, 5, 12});
  quantized_input(b, "a", 0.02f, 5, true);
  quantized_weights(b, "w", {16, 12}, 1, 5);
  b.node("MatMul", {"a_dq", "w_dq"}, {"mm"}, "mm");
  quantized_output(b, "mm", "y", 0.03f, -2, true);
  Model m = fuse_and_compare(b.bytes(), 1, {0.03f});
  EXPECT_EQ(test::count_op(*m.graph, "QLinearMatMul"), 1);
  EXPECT_EQ(test::count_op(*m.graph, "MatMul"), 0);
}

// Quantize/DequantizeLinear-21 on in their opset-10 form fuse as before (exporters write opset 21
// for int4 weights elsewhere in the model); a QuantizeLinear that sets `precision` (opset 25:
// the division rounds to that type) keeps its float product.
TEST(OptQdq, NewerOpsetsFuseUnlessTheNewAttributesChangeTheArithmetic) {
  for (bool precision : {false, true}) {
    SCOPED_TRACE(precision ? "precision set" : "opset-10 form");
    ModelBuilder b(25);
    b.input("a", {2, 5, 16}).output("y", {2, 5, 12});
    quantized_input(b, "a", 0.02f, 5, true);
    quantized_weights(b, "w", {16, 12}, 1, 5);
    b.node("MatMul", {"a_dq", "w_dq"}, {"mm"}, "mm");
    quantized_output(b, "mm", "y", 0.03f, -2, true);
    auto* g = b.proto().mutable_graph();  // the output's QuantizeLinear: before its DQ
    if (precision) test::set_int(g->mutable_node(g->node_size() - 2), "precision", 1);
    Model m = fuse_and_compare(b.bytes(), precision ? 0 : 1, {precision ? 0.f : 0.03f});
    EXPECT_EQ(test::count_op(*m.graph, "QLinearMatMul"), precision ? 0 : 1);
    EXPECT_EQ(test::count_op(*m.graph, "MatMul"), precision ? 1 : 0);
  }
}

TEST(OptQdq, ResidualAddBecomesQLinearAddExactly) {
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8 activations" : "uint8 activations");
    ModelBuilder b(13);
    b.input("a", {2, 3, 4, 5}).input("c", {2, 3, 4, 5}).output("y", {2, 3, 4, 5});
    quantized_input(b, "a", 0.02f, s8 ? 3 : 130, s8);
    quantized_input(b, "c", 0.03f, s8 ? -9 : 100, s8);
    b.node("Add", {"a_dq", "c_dq"}, {"sum"}, "add");
    b.node("Relu", {"sum"}, {"r"});
    quantized_output(b, "r", "y", 0.025f, s8 ? -128 : 0, s8);
    // The fused kernel computes the float nodes' own formula: no step of difference.
    Model m = fuse_and_compare(b.bytes(), 1, {0.f});
    EXPECT_EQ(test::count_op(*m.graph, "QLinearAdd", "ai.polyinfer"), 1);
    EXPECT_EQ(test::count_op(*m.graph, "Add"), 0);
    EXPECT_EQ(test::count_op(*m.graph, "Relu"), 0);
  }
}

TEST(OptQdq, MaxPoolRunsOnTheQuantizedValuesExactly) {
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "int8 activations" : "uint8 activations");
    ModelBuilder b(13);
    b.input("x", {1, 3, 9, 9}).output("y", {1, 3, 5, 5});
    quantized_input(b, "x", 0.02f, s8 ? -4 : 128, s8);
    b.node("MaxPool", {"x_dq"}, {"p"}, "pool");
    test::set_ints(test::last_node(b), "kernel_shape", {3, 3});
    test::set_ints(test::last_node(b), "strides", {2, 2});
    test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
    b.node("QuantizeLinear", {"p", "x_s", "x_z"}, {"p_q"});
    b.node("DequantizeLinear", {"p_q", "x_s", "x_z"}, {"y"});
    Model m = fuse_and_compare(b.bytes(), 1, {0.f});
    ASSERT_EQ(test::count_op(*m.graph, "MaxPool"), 1);
    for (const auto& n : m.graph->nodes)
      if (n.op_type == "MaxPool") {
        EXPECT_EQ(n.inputs[0], "x_q");
      }
  }
}

TEST(OptQdq, ConcatOfEquallyQuantizedInputsRunsOnBytes) {
  ModelBuilder b(13);
  b.input("a", {1, 2, 4, 4}).input("c", {1, 3, 4, 4}).output("y", {1, 5, 4, 4});
  b.output("y2", {1, 5, 4, 4});
  quantized_input(b, "a", 0.02f, 10, true);
  b.node("QuantizeLinear", {"c", "a_s", "a_z"}, {"c_q"});
  b.node("DequantizeLinear", {"c_q", "a_s", "a_z"}, {"c_dq"});
  b.node("Concat", {"a_dq", "c_dq"}, {"cat"}, "concat");
  test::set_int(test::last_node(b), "axis", 1);
  b.node("QuantizeLinear", {"cat", "a_s", "a_z"}, {"cat_q"});
  b.node("DequantizeLinear", {"cat_q", "a_s", "a_z"}, {"y"});
  // Different output parameters: stays float.
  b.node("Concat", {"a_dq", "c_dq"}, {"cat2"}, "concat2");
  test::set_int(test::last_node(b), "axis", 1);
  quantized_output(b, "cat2", "y2", 0.03f, 10, true);
  Model m = fuse_and_compare(b.bytes(), 1, {0.f, 0.f});
  int on_bytes = 0;
  for (const auto& n : m.graph->nodes)
    on_bytes += n.op_type == "Concat" && n.inputs == std::vector<std::string>{"a_q", "c_q"};
  EXPECT_EQ(on_bytes, 1);
}

// A Gemm with a float output (a classifier's logits): QLinearGemm without an output scale,
// (acc + bias)·sa·sb[n] in float. Not exact: C is rounded to int32 at scale sa·sb[n] (at most
// half of that per output) and the sums are exact integers instead of float ones.
TEST(OptQdq, GemmWithAFloatOutputBecomesQLinearGemm) {
  ModelBuilder b(13);
  b.input("a", {3, 16}).output("y", {3, 10});
  quantized_input(b, "a", 0.02f, 128, false);
  quantized_weights(b, "w", {10, 16}, 0, 11);
  b.int_initializer("b_q", {10}, kInt32, ints(10, -500, 500, 12));
  b.initializer("b_s", {}, {0.0001f});
  b.int_initializer("b_z", {}, kInt32, {0});
  b.node("DequantizeLinear", {"b_q", "b_s", "b_z"}, {"b_dq"});
  b.node("Gemm", {"a_dq", "w_dq", "b_dq"}, {"y"}, "gemm");
  test::set_int(test::last_node(b), "transB", 1);
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  EXPECT_EQ(opt::make_qdq_fusion()->run(*m.graph), 1);
  EXPECT_EQ(test::count_op(*m.graph, "QLinearGemm", "ai.polyinfer"), 1);
  EXPECT_EQ(test::count_op(*m.graph, "Gemm"), 0);
  const auto in = test::random_inputs(bytes);
  const auto want = test::run_model(bytes, 0, in)[0].tensor().to_vector<float>();
  const auto got = test::run_model(test::export_bytes(m), 0, in)[0].tensor().to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  const float half_step = 0.5f * 0.02f * 0.006f;  // the largest sa·sb[n], halved
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::fabs(got[i] - want[i]), half_step + 1e-5f * std::fabs(want[i])) << i;
}

// A Gemm whose output is quantized: ai.polyinfer QLinearGemm, B as [K, N] (transposed from
// transB's [N, K]), C·beta as its int32 bias — a DequantizeLinear'd int32 C, or a float one
// feeding a Relu. Gemms it cannot express (transA here) keep the folded float constants.
TEST(OptQdq, QuantizedGemmBecomesQLinearGemm) {
  for (bool trans_b : {true, false}) {
    SCOPED_TRACE(trans_b ? "transB, int32 C, beta 0.5" : "float C, Relu");
    ModelBuilder b(13);
    b.input("a", {3, 16}).output("y", {3, 10}).output("y2", {3, 10});
    quantized_input(b, "a", 0.02f, 128, false);
    quantized_weights(b, "w", trans_b ? std::vector<int64_t>{10, 16} : std::vector<int64_t>{16, 10},
                      trans_b ? 0 : 1, 11);
    if (trans_b) {
      b.int_initializer("c_q", {10}, kInt32, ints(10, -3000, 3000, 12));
      b.initializer("c_s", {}, {0.0001f});
      b.int_initializer("c_z", {}, kInt32, {0});
      b.node("DequantizeLinear", {"c_q", "c_s", "c_z"}, {"c"});
    } else {
      test::random_initializer(b, "c", {10}, 12, -0.3f, 0.3f);
    }
    b.node("Gemm", {"a_dq", "w_dq", "c"}, {"g"}, "gemm");
    if (trans_b) test::set_int(test::last_node(b), "transB", 1);
    if (trans_b) test::set_float(test::last_node(b), "beta", 0.5f);
    std::string out = "g";
    if (!trans_b) {
      b.node("Relu", {"g"}, {"r"});
      out = "r";
    }
    quantized_output(b, out, "y", 0.01f, trans_b ? 128 : 0, false);
    // transA: no integer form.
    b.node("Transpose", {"a_dq"}, {"at"});
    b.node("Gemm", {"at", "w_dq"}, {"g2"}, "gemm_t");
    test::set_int(test::last_node(b), "transA", 1);
    if (trans_b) test::set_int(test::last_node(b), "transB", 1);
    quantized_output(b, "g2", "y2", 0.01f, 128, false);
    // One fusion and one folded Gemm constant.
    Model m = fuse_and_compare(b.bytes(), 2, {0.01f, 0.f});
    EXPECT_EQ(test::count_op(*m.graph, "QLinearGemm", "ai.polyinfer"), 1);
    EXPECT_EQ(test::count_op(*m.graph, "Gemm"), 1);
    EXPECT_EQ(test::count_op(*m.graph, "Relu"), 0);
  }
}

// Without VNNI the oneDNN int8 kernels declare where their results may differ from the model's
// (Kernel::advisory; onednn.h int8_advisory): there the note is asserted instead of the values.
bool inexact_here(const Session& s) {
  if (s.placement().notes.empty()) return false;
  EXPECT_FALSE(cpu::onednn::int8_products_exact()) << s.placement().notes[0];
  return true;
}

TEST(OptQdq, ConvThenResidualAddBecomesQLinearConvAdd) {
  // fuse-qdq then fuse-qconv-add: conv → Q → DQ, + DQ(x) → Add → Q → one QLinearConvAdd.
  ModelBuilder b(13);
  b.input("x", {1, 6, 7, 7}).output("y", {1, 6, 7, 7});
  quantized_input(b, "x", 0.02f, 3, true);
  quantized_weights(b, "w", {6, 6, 3, 3}, 0, 13);
  b.node("Conv", {"x_dq", "w_dq"}, {"c"}, "conv");
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  quantized_output(b, "c", "c_dq", 0.05f, -2, true);
  b.node("Add", {"c_dq", "x_dq"}, {"sum"}, "add");
  quantized_output(b, "sum", "y", 0.04f, 1, true);
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  EXPECT_EQ(opt::make_qdq_fusion()->run(*m.graph), 2);
  // The DequantizeLinear of the convolution's output goes first (the optimizer's next round).
  opt::make_dead_node_elimination()->run(*m.graph);
  EXPECT_EQ(opt::make_qconv_add_fusion()->run(*m.graph), 1);
  EXPECT_TRUE(opt::is_topological(*m.graph));
  EXPECT_EQ(test::count_op(*m.graph, "QLinearConvAdd", "ai.polyinfer"), 1);
  EXPECT_EQ(test::count_op(*m.graph, "QLinearConv"), 0);
  EXPECT_EQ(test::count_op(*m.graph, "QLinearAdd", "ai.polyinfer"), 0);
  // The convolution's own rounding to 0.05 is gone: up to 0.025 in real units, i.e. 0.625 of
  // a 0.04 output step, plus the output's own half step — one step at most.
  const auto in = test::random_inputs(bytes);
  const auto want = test::run_model(bytes, 0, in)[0].tensor().to_vector<float>();
  for (const char* provider : {"cpu-ref", "cpu"}) {
    SCOPED_TRACE(provider);
    const std::string fused = test::export_bytes(m);
    SessionOptions o;
    o.optimization_level = 0;
    o.providers = {provider};
    if (inexact_here(Session::load_bytes(fused.data(), fused.size(), o))) continue;
    const auto got = test::run_model(fused, 0, in, provider)[0].tensor().to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_LE(std::fabs(got[i] - want[i]), 0.04f * 1.001f);
  }
}

TEST(OptQdq, Int8ActivationsBecomeUint8Exactly) {
  ModelBuilder b(13);
  b.input("x", {1, 4, 6, 6}).output("y", {1, 4, 6, 6}).output("x_q", {1, 4, 6, 6}, kInt8);
  b.output("y2", {1, 4, 6, 6});
  quantized_input(b, "x", 0.03f, -7, true);  // x_q is also a graph output: stays int8
  b.node("Relu", {"x_dq"}, {"r"});
  quantized_output(b, "r", "y", 0.02f, 5, true);  // read by its DequantizeLinear alone
  b.node("Neg", {"x_dq"}, {"n"});
  quantized_output(b, "n", "y2", 0.02f, -128, true);
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  EXPECT_EQ(opt::make_qdq_unsigned()->run(*m.graph), 2);
  int u8 = 0, s8 = 0;
  for (const auto& n : m.graph->nodes) {
    if (n.op_type != "QuantizeLinear" && n.op_type != "DequantizeLinear") continue;
    const DType t = m.graph->initializers.at(n.inputs[2]).dtype();
    u8 += t == DType::UInt8;
    s8 += t == DType::Int8;
  }
  EXPECT_EQ(u8, 4);  // the y and y2 pairs
  EXPECT_EQ(s8, 2);  // the x pair
  const auto in = test::random_inputs(bytes);
  const auto want = test::run_model(bytes, 0, in);
  const auto got = test::run_model(test::export_bytes(m), 0, in);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].tensor().to_vector<float>(), want[0].tensor().to_vector<float>());
  EXPECT_EQ(got[1].tensor().to_vector<int8_t>(), want[1].tensor().to_vector<int8_t>());
  EXPECT_EQ(got[2].tensor().to_vector<float>(), want[2].tensor().to_vector<float>());
}

TEST(OptQdq, PatternsItCannotExpressAreLeft) {
  ModelBuilder b(13);
  b.input("x", {1, 2, 5, 5}).output("y1", {1, 3, 5, 5}).output("y2", {1, 3, 5, 5});
  b.output("y3", {1, 3, 5, 5});
  quantized_input(b, "x", 0.02f, 128, false);
  // Non-zero weight zero point: oneDNN's convolution has none, QLinearConv would be slow.
  b.int_initializer("w_q", {3, 2, 3, 3}, kInt8, ints(54, -127, 127, 6));
  b.initializer("w_s", {}, {0.01f});
  b.int_initializer("w_z", {}, kInt8, {3});
  b.node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"w_dq"});
  b.node("Conv", {"x_dq", "w_dq"}, {"c1"}, "conv1");
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  quantized_output(b, "c1", "y1", 0.05f, 128, false);
  // A Relu before a QuantizeLinear whose zero point is not the minimum does clamp.
  quantized_weights(b, "v", {3, 2, 3, 3}, 0, 7);
  b.node("Conv", {"x_dq", "v_dq"}, {"c2"}, "conv2");
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c2"}, {"r2"});
  quantized_output(b, "r2", "y2", 0.05f, 128, false);
  // A product with a second reader keeps its float output.
  b.node("Conv", {"x_dq", "v_dq"}, {"c3"}, "conv3");
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  b.node("QuantizeLinear", {"c3", "y2_s", "y2_z"}, {"c3_q"});
  b.node("DequantizeLinear", {"c3_q", "y2_s", "y2_z"}, {"c3_dq"});
  b.node("Add", {"c3_dq", "c3"}, {"y3"});
  Model m = fuse_and_compare(b.bytes(), 0, {0.f, 0.f, 0.f});
  EXPECT_EQ(test::count_op(*m.graph, "QLinearConv"), 0);
}

TEST(OptQdq, WholeOptimizerRunsTheIntegerKernels) {
  // Level 3 end to end on the cpu provider: the fused node, made channels-last by the layout
  // pass (with the per-tensor Quantize/DequantizeLinear around it), lands on oneDNN.
  ModelBuilder b(13);
  b.input("x", {1, 8, 10, 10}).output("y", {1, 8, 10, 10});
  quantized_input(b, "x", 0.016f, -1, true);
  quantized_weights(b, "w", {8, 8, 3, 3}, 0, 9);
  b.node("Conv", {"x_dq", "w_dq"}, {"c"}, "conv");
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"});
  quantized_output(b, "r", "y0", 0.05f, -128, true);
  // A residual connection: the convolution's (quantized) output plus its input (fused into
  // the convolution as QLinearConvAdd).
  b.node("Add", {"y0", "x_dq"}, {"sum"}, "add");
  quantized_output(b, "sum", "y", 0.06f, -5, true);
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.threads = 1;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  int onednn = 0;
  for (const auto& n : s.placement().nodes)
    onednn += n.op.rfind("ai.polyinfer.NhwcQLinearConv", 0) == 0 && n.impl.rfind("onednn", 0) == 0;
  EXPECT_EQ(onednn, 1);
  bool nhwc_add = false;
  for (const auto& n : s.placement().nodes)
    nhwc_add =
        nhwc_add || (n.op == "ai.polyinfer.NhwcQLinearConvAdd" && n.impl.rfind("onednn", 0) == 0);
  EXPECT_TRUE(nhwc_add);
  if (inexact_here(s)) return;
  const auto in = test::random_inputs(bytes);
  const auto got = s.run(in)[0].tensor().to_vector<float>();
  const auto want = test::run_model(bytes, 0, in)[0].tensor().to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  // One step of the convolution's output (0.05) may move the sum by one of its steps (0.06).
  for (size_t i = 0; i < got.size(); ++i) EXPECT_LE(std::fabs(got[i] - want[i]), 0.06f * 1.001f);
}

}  // namespace
}  // namespace polyinfer
