// SessionOptions::precision: the fp16 / bf16 conversion a session makes after the optimizer (the
// fused products convert, LayerNormalization stays float32, every value typed for the kernels,
// graph I/O float32, no Cast pairs that cancel), and fp16 / bf16 sessions on the CPU against
// fp32 ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "infer/infer.h"
#include "model_builder.h"
#include "onnx/import.h"
#include "opt/optimizer.h"
#include "polyinfer/io.h"
#include "polyinfer/session.h"
#include "quant/fp16.h"

namespace polyinfer {
namespace {

Model import(const test::ModelBuilder& b) {
  const std::string bytes = b.bytes();
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(m);
  return m;
}

// The activation node `act` ("Relu", or "LeakyRelu" with alpha 0.1) from `in` to `out`.
void activation(test::ModelBuilder& b, const std::string& act, const std::string& in,
                const std::string& out) {
  b.node(act, {in}, {out}, "act");
  if (act == "LeakyRelu") test::set_float(test::last_node(b), "alpha", 0.1f);
}

// x[1, 2, 8] -> MatMul + Add + Relu (FusedMatMul at level 2; a 3-D A, so not Gemm) ->
// LayerNormalization -> MatMul -> y.
test::ModelBuilder mlp(const std::string& act = "Relu") {
  test::ModelBuilder b(17);
  std::vector<float> w1(8 * 16), b1(16), w2(16 * 4), g(16, 1.0f), beta(16, 0.0f);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.25f * std::sin(float(i));
  for (size_t i = 0; i < b1.size(); ++i) b1[i] = 0.05f * float(i % 3);
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.3f * std::cos(float(i));
  b.input("x", {1, 2, 8})
      .output("y", {1, 2, 4})
      .initializer("w1", {8, 16}, w1)
      .initializer("b1", {16}, b1)
      .initializer("w2", {16, 4}, w2)
      .initializer("g", {16}, g)
      .initializer("beta", {16}, beta)
      .node("MatMul", {"x", "w1"}, {"m"}, "mm1")
      .node("Add", {"m", "b1"}, {"a"}, "add1");
  activation(b, act, "a", "r");
  b.node("LayerNormalization", {"r", "g", "beta"}, {"n"}, "ln")
      .node("MatMul", {"n", "w2"}, {"y"}, "mm2");
  return b;
}

// x[1, 2, 5, 5] -> Conv (3x3, pads 1, bias) + x -> Relu -> y: FusedConv with Z and Relu at
// level 2.
test::ModelBuilder conv_residual(const std::string& act = "Relu") {
  test::ModelBuilder b(17);
  std::vector<float> w(2 * 2 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.3f * std::sin(1.3f * float(i) + 0.4f);
  b.input("x", {1, 2, 5, 5})
      .output("y", {1, 2, 5, 5})
      .initializer("w", {2, 2, 3, 3}, w)
      .initializer("b", {2}, {0.1f, -0.05f})
      .node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  b.node("Add", {"c", "x"}, {"a"}, "residual");
  activation(b, act, "a", "y");
  return b;
}

DType elem_of(const ir::Graph& g, const std::string& v) {
  if (auto it = g.initializers.find(v); it != g.initializers.end()) return it->second.dtype();
  const ir::TypeInfo* t = g.type_of(v);
  return t ? t->elem : DType::Undefined;
}

TEST(SessionPrecision, ParsesNames) {
  EXPECT_EQ(parse_precision("fp16"), Precision::Fp16);
  EXPECT_EQ(parse_precision("fp32"), Precision::Fp32);
  EXPECT_EQ(parse_precision("bf16"), Precision::Bf16);
  EXPECT_STREQ(precision_name(Precision::Fp16), "fp16");
  EXPECT_STREQ(precision_name(Precision::Bf16), "bf16");
  for (const char* bad : {"fp8", "bfloat16", "BF16"}) {
    try {
      parse_precision(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("fp32, fp16 or bf16"), std::string::npos) << e.what();
    }
  }
}

// After the optimizer: the fused product runs in `half` (float16 or bfloat16),
// LayerNormalization stays float32, every value a kernel reads has a known type of the right
// precision, and the graph's I/O is float32.
void check_fused_conversion(DType half) {
  Model m = import(mlp());
  opt::optimize(*m.graph, 2);
  quant::Fp16Options o;
  o.fused = true;
  o.type = half;
  const auto rep = quant::convert_fp16(*m.graph, o);
  const ir::Graph& g = *m.graph;
  int fused = 0, casts = 0;
  for (const auto& n : g.nodes) {
    if (n.op_type == "FusedMatMul") {
      ++fused;
      for (const auto& v : n.inputs) EXPECT_EQ(elem_of(g, v), half) << v;
      EXPECT_EQ(elem_of(g, n.outputs[0]), half);
    }
    if (n.op_type == "LayerNormalization") {
      for (const auto& v : n.inputs) EXPECT_EQ(elem_of(g, v), DType::Float32) << v;
    }
    if (n.op_type == "Cast") {
      ++casts;
      // The Cast's output is typed, with the precision it casts to.
      const ir::Attribute* to = n.attr("to");
      ASSERT_NE(to, nullptr);
      EXPECT_EQ(elem_of(g, n.outputs[0]), DType(to->i)) << n.name;
      EXPECT_NE(elem_of(g, n.inputs[0]), DType(to->i)) << n.name;
      EXPECT_TRUE(DType(to->i) == half || DType(to->i) == DType::Float32) << n.name;
    }
    // Every input of every node has a known element type.
    for (const auto& v : n.inputs)
      if (!v.empty()) {
        EXPECT_NE(elem_of(g, v), DType::Undefined) << n.name << " " << v;
      }
  }
  EXPECT_EQ(fused, 1);
  // x to half; the FusedMatMul's output to float for the LayerNormalization; its output back to
  // half for the last MatMul; that MatMul's output to float for y.
  EXPECT_EQ(casts, 4);
  EXPECT_EQ(rep.casts, 4);
  EXPECT_EQ(rep.fp16_nodes, 2);  // FusedMatMul, MatMul
  EXPECT_EQ(g.inputs[0].type.elem, DType::Float32);
  EXPECT_EQ(g.outputs[0].type.elem, DType::Float32);

  // Without `fused` (quantize --fp16's rules) the polyinfer operator stays float32.
  Model plain = import(mlp());
  opt::optimize(*plain.graph, 2);
  quant::Fp16Options unfused;
  unfused.type = half;
  quant::convert_fp16(*plain.graph, unfused);
  for (const auto& n : plain.graph->nodes)
    if (n.op_type == "FusedMatMul") {
      EXPECT_EQ(elem_of(*plain.graph, n.inputs[0]), DType::Float32);
    }
}

TEST(SessionPrecision, ConvertsFusedProductsAndTypesEveryValue) {
  check_fused_conversion(DType::Float16);
}

TEST(SessionPrecision, Bf16ConvertsFusedProductsAndTypesEveryValue) {
  check_fused_conversion(DType::BFloat16);
}

// Gives each Cast node of `b` its "to" attribute, looked up by node name (ONNX type numbers).
void set_cast_targets(test::ModelBuilder& b, const std::map<std::string, int>& to) {
  for (auto& n : *b.proto().mutable_graph()->mutable_node()) {
    if (n.op_type() != "Cast") continue;
    auto* a = n.add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(to.at(n.name()));
  }
}

// Cast pairs that undo each other go (half -> float -> half is exact); float -> half -> float
// rounds, so it stays; a Cast to its input's own type goes; graph outputs keep their Cast.
TEST(SessionPrecision, FoldsCastsThatCancel) {
  test::ModelBuilder b(17);
  b.input("h", {4}, 10)
      .input("f", {4})
      .output("y", {4}, 10)
      .output("z", {4})
      .node("Cast", {"h"}, {"h32"}, "widen")
      .node("Cast", {"h32"}, {"h16"}, "narrow")
      .node("Neg", {"h16"}, {"y"}, "neg")
      .node("Cast", {"f"}, {"f16"}, "round")
      .node("Cast", {"f16"}, {"f32"}, "back")
      .node("Cast", {"f32"}, {"same"}, "same")
      .node("Abs", {"same"}, {"z"}, "abs");
  const std::map<std::string, int> to = {
      {"widen", 1}, {"narrow", 10}, {"round", 10}, {"back", 1}, {"same", 1}};
  set_cast_targets(b, to);
  Model m = import(b);
  EXPECT_EQ(quant::fold_casts(*m.graph), 3);  // narrow, then widen (unread), same
  std::vector<std::string> left;
  for (const auto& n : m.graph->nodes) left.push_back(n.name);
  EXPECT_EQ(left, (std::vector<std::string>{"neg", "round", "back", "abs"}));
  for (const auto& n : m.graph->nodes) {
    if (n.name == "neg") {
      EXPECT_EQ(n.inputs[0], "h");
    }
    if (n.name == "abs") {
      EXPECT_EQ(n.inputs[0], "f32");
    }
  }
}

// The same for bfloat16, whose pairs through float32 are exact too; a float16 -> float32 ->
// bfloat16 pair rounds (float16 has 3 more mantissa bits), so it stays.
TEST(SessionPrecision, FoldsBf16CastsThatCancel) {
  test::ModelBuilder b(17);
  b.input("h", {4}, 16)
      .input("f", {4})
      .input("e", {4}, 10)
      .output("y", {4}, 16)
      .output("z", {4})
      .output("w", {4}, 16)
      .node("Cast", {"h"}, {"h32"}, "widen")
      .node("Cast", {"h32"}, {"h16"}, "narrow")
      .node("Neg", {"h16"}, {"y"}, "neg")
      .node("Cast", {"f"}, {"fb"}, "round")
      .node("Cast", {"fb"}, {"f32"}, "back")
      .node("Abs", {"f32"}, {"z"}, "abs")
      .node("Cast", {"e"}, {"e32"}, "widen_f16")
      .node("Cast", {"e32"}, {"eb"}, "to_bf16")
      .node("Neg", {"eb"}, {"w"}, "neg_e");
  const std::map<std::string, int> to = {{"widen", 1}, {"narrow", 16},   {"round", 16},
                                         {"back", 1},  {"widen_f16", 1}, {"to_bf16", 16}};
  set_cast_targets(b, to);
  Model m = import(b);
  EXPECT_EQ(quant::fold_casts(*m.graph), 2);  // narrow, then widen (unread)
  std::vector<std::string> left;
  for (const auto& n : m.graph->nodes) left.push_back(n.name);
  EXPECT_EQ(left, (std::vector<std::string>{"neg", "round", "back", "abs", "widen_f16", "to_bf16",
                                            "neg_e"}));
  for (const auto& n : m.graph->nodes) {
    if (n.name == "neg") {
      EXPECT_EQ(n.inputs[0], "h");
    }
    if (n.name == "abs") {
      EXPECT_EQ(n.inputs[0], "f32");
    }
    if (n.name == "neg_e") {
      EXPECT_EQ(n.inputs[0], "eb");
    }
  }
}

// A reduced-precision session of the small model on the CPU's (reference) 16-bit kernels: the
// float32 I/O, the four border Casts, outputs within `tol` of the float32 session's and not
// equal to them (the conversion happened), and the placement note naming the product nodes.
void expect_half_on_cpu_agrees(Precision p, double tol) {
  const std::string bytes = mlp().bytes();
  SessionOptions o;
  o.precision = p;
  Session half = Session::load_bytes(bytes.data(), bytes.size(), o);
  Session full = Session::load_bytes(bytes.data(), bytes.size());
  EXPECT_EQ(half.precision(), p);
  EXPECT_EQ(half.inputs()[0].dtype, DType::Float32);
  EXPECT_EQ(half.outputs()[0].dtype, DType::Float32);
  int casts = 0;
  for (const auto& n : half.placement().nodes) casts += n.op == "Cast";
  EXPECT_EQ(casts, 4);
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * float(i));
  const Tensor xt = Tensor::from_vector<float>({1, 2, 8}, x);
  const auto got = half.run({{"x", xt}})[0].tensor().to_vector<float>();
  const auto want = full.run({{"x", xt}})[0].tensor().to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << i;
  bool differs = false;
  for (size_t i = 0; i < got.size(); ++i) differs = differs || got[i] != want[i];
  EXPECT_TRUE(differs);
  // The products ran on reference kernels, and the placement says so (once, naming them);
  // the float32 session, on fast kernels, has nothing to say.
  ASSERT_EQ(half.placement().notes.size(), 1u);
  EXPECT_NE(half.placement().notes[0].find("float16/bfloat16 runs on the CPU's plain reference"),
            std::string::npos)
      << half.placement().notes[0];
  EXPECT_NE(half.placement().notes[0].find("'mm1'"), std::string::npos);
  EXPECT_TRUE(full.placement().notes.empty());
}

// Half keeps 11 significant bits: x, the weights, the product and the normalized values each
// round by <= 2^-11 relative; the outputs here are O(1) sums of 16 O(0.3) terms, so a few
// roundings of 2^-11 on each term move them by well under 1e-2.
TEST(SessionPrecision, Fp16OnCpuAgreesWithFp32) {
  expect_half_on_cpu_agrees(Precision::Fp16, 1e-2);
}

// bfloat16 keeps 8 significant bits: each rounding is <= 2^-8 relative, 2^3 times float16's
// 2^-11. The values go through the same roundings and the error is first order in the rounding
// unit, so the float16 test's 1e-2 becomes 8e-2.
TEST(SessionPrecision, Bf16OnCpuAgreesWithFp32) {
  EXPECT_STREQ(precision_name(Precision::Bf16), "bf16");
  expect_half_on_cpu_agrees(Precision::Bf16, 8e-2);
}

// What bfloat16 has over float16: float32's exponent range. Inputs of ~1e6 overflow float16 (its
// largest finite value is 65504) at the first Cast, so the float16 session's outputs are lost;
// bfloat16 holds them, LayerNormalization (invariant to the scale) brings the values back to
// O(1), and the bfloat16 session agrees with float32 as at scale 1 (the roundings are relative,
// the bias negligible).
TEST(SessionPrecision, Bf16KeepsFloat32Range) {
  const std::string bytes = mlp().bytes();
  SessionOptions bf, fp;
  bf.precision = Precision::Bf16;
  fp.precision = Precision::Fp16;
  Session bf16 = Session::load_bytes(bytes.data(), bytes.size(), bf);
  Session fp16 = Session::load_bytes(bytes.data(), bytes.size(), fp);
  Session full = Session::load_bytes(bytes.data(), bytes.size());
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1e6f * std::sin(0.7f * float(i));
  const Tensor xt = Tensor::from_vector<float>({1, 2, 8}, x);
  const auto got = bf16.run({{"x", xt}})[0].tensor().to_vector<float>();
  const auto want = full.run({{"x", xt}})[0].tensor().to_vector<float>();
  const auto lost = fp16.run({{"x", xt}})[0].tensor().to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 8e-2) << i;
  // float16's infinities become NaNs in the product (inf * 0, inf - inf), which the fused Relu
  // turns into zeros: either way nothing of float32's answer is left.
  bool fp16_close = true;
  for (size_t i = 0; i < lost.size(); ++i)
    fp16_close = fp16_close && std::fabs(lost[i] - want[i]) <= 8e-2f;  // false for NaN
  EXPECT_FALSE(fp16_close);
}

// A convolution with a residual and Relu (FusedConv with Z at level 2) at bfloat16 on the CPU,
// within a bound worked out from bfloat16's rounding.
TEST(SessionPrecision, Bf16ConvOnCpuAgreesWithFp32) {
  const std::string bytes = conv_residual().bytes();
  SessionOptions o;
  o.precision = Precision::Bf16;
  o.optimization_level = 2;
  Session half = Session::load_bytes(bytes.data(), bytes.size(), o);
  Session full = Session::load_bytes(bytes.data(), bytes.size());
  bool fused = false;
  for (const auto& n : half.placement().nodes) fused = fused || n.op == "ai.polyinfer.FusedConv";
  EXPECT_TRUE(fused);
  const std::vector<float> x = test::random_values(50, 3);
  const Tensor xt = Tensor::from_vector<float>({1, 2, 5, 5}, x);
  const auto got = half.run({{"x", xt}})[0].tensor().to_vector<float>();
  const auto want = full.run({{"x", xt}})[0].tensor().to_vector<float>();
  // u = 2^-8, bfloat16's relative rounding. y = Relu(conv + x) with conv = sum of 18 terms
  // |x w| <= 0.3 (S <= 5.4) + b: rounding x and w errs by <= 2u S, b by u |b| <= 0.1u, the
  // product by u |conv| <= 5.5u, Z (x) by u, the sum by u |conv + x| <= 6.5u; Relu is exact and
  // 1-Lipschitz. In all <= 23.9u to first order; 24u covers the products of roundings.
  const float bound = 24 * std::ldexp(1.0f, -8);
  ASSERT_EQ(got.size(), want.size());
  bool differs = false;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], bound) << i;
    differs = differs || got[i] != want[i];
  }
  EXPECT_TRUE(differs);
}

// The CPU's fused 16-bit kernels round where the unfused 16-bit graph does (the product, the sum
// with Z or the bias, the activation): at level 2 (FusedConv with Z; FusedMatMul with a bias;
// both with LeakyRelu, whose product with alpha rounds differently after one rounding than after
// two, where Relu commutes with rounding) a session gives the outputs of the same session at
// level 0 bit for bit.
TEST(SessionPrecision, FusedMatchesUnfusedIn16Bits) {
  struct Case {
    test::ModelBuilder model;
    Shape shape;
  };
  const std::vector<Case> cases = {{conv_residual("LeakyRelu"), {1, 2, 5, 5}},
                                   {mlp("LeakyRelu"), {1, 2, 8}}};
  for (Precision p : {Precision::Fp16, Precision::Bf16})
    for (const Case& c : cases) {
      const std::string bytes = c.model.bytes();
      SessionOptions fused_opts, plain_opts;
      fused_opts.precision = plain_opts.precision = p;
      fused_opts.optimization_level = 2;
      plain_opts.optimization_level = 0;
      Session fused = Session::load_bytes(bytes.data(), bytes.size(), fused_opts);
      Session plain = Session::load_bytes(bytes.data(), bytes.size(), plain_opts);
      int fused_nodes = 0;
      for (const auto& n : fused.placement().nodes)
        fused_nodes += n.op.rfind("ai.polyinfer.Fused", 0) == 0;
      EXPECT_EQ(fused_nodes, 1) << precision_name(p);
      int64_t numel = 1;
      for (int64_t d : c.shape) numel *= d;
      const Tensor x = Tensor::from_vector<float>(c.shape, test::random_values(numel, 5));
      const auto a = fused.run({{"x", x}})[0].tensor().to_vector<float>();
      const auto b = plain.run({{"x", x}})[0].tensor().to_vector<float>();
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_EQ(a[i], b[i]) << precision_name(p) << " output " << i;
    }
}

// The digits CNN (FusedConv with Relu, pooling, FusedGemm) at fp16 on the CPU classifies the test
// split as fp32 does, within a margin of a few images.
TEST(SessionPrecision, DigitsFp16OnCpu) {
  const std::string dir = std::string(POLYINFER_SOURCE_DIR) + "/examples/digits/";
  SessionOptions o;
  o.providers = {"cpu"};
  o.precision = Precision::Fp16;
  Session half = Session::load(dir + "digits_cnn.onnx", o);
  int fused_half = 0;
  for (const auto& n : half.placement().nodes)
    fused_half += n.op.rfind("ai.polyinfer.Fused", 0) == 0;
  EXPECT_GT(fused_half, 0);
  const Tensor x = read_npy(dir + "test_x.npy");
  const auto y = read_npy(dir + "test_y.npy").to_vector<int64_t>();
  const auto got = half.run({{"pixels", x}}).at(0).tensor().to_vector<float>();
  int64_t correct = 0;
  for (int64_t i = 0; i < x.dim(0); ++i)
    correct += std::max_element(&got[i * 10], &got[i * 10] + 10) - &got[i * 10] == y[i];
  // examples/digits/expected.json: 443 of 450 in float32. Half precision moves logits by ~1e-3
  // relative, which can flip only near-ties: allow 3 images either way.
  EXPECT_NEAR(double(correct), 443.0, 3.0);
}

}  // namespace
}  // namespace polyinfer
