// The Vulkan element-wise kernels against the CPU reference kernels (cpu-ref), through the
// oracle harness: odd sizes, tails past a workgroup, broadcasting up to rank 6, and a size that
// needs more workgroups than one dispatch dimension allows (the shaders' grid-stride loop).
#include <cmath>

#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

using test::OracleOp;

OracleOp on_vulkan(const std::string& op) {
  return std::move(OracleOp(op, 14).providers({"vulkan"}));
}

void expect_on_vulkan(const test::OracleResult& r, const std::string& what) {
  EXPECT_EQ(r.provider, "vulkan") << what;
}

TEST(VulkanElementwise, BinarySameShape) {
  PI_SKIP_WITHOUT_VULKAN();
  for (const std::string op : {"Add", "Sub", "Mul", "Div"})
    for (const Shape& s : std::vector<Shape>{{1}, {7}, {255}, {256}, {257}, {3, 5, 7}, {2, 1001}}) {
      auto o = on_vulkan(op);
      if (op == "Div") o.random(s).random(s, 0.5f, 3.0f);
      else
        o.random(s).random(s);
      expect_on_vulkan(o.check(1e-6, 1e-6), op + shape_str(s));
    }
}

TEST(VulkanElementwise, BinaryBroadcast) {
  PI_SKIP_WITHOUT_VULKAN();
  const std::vector<std::pair<Shape, Shape>> cases = {{{2, 3, 4, 5}, {5}},
                                                      {{3, 1, 5}, {1, 4, 1}},
                                                      {{1}, {7, 9}},
                                                      {{}, {3, 3}},
                                                      {{33, 1}, {1, 65}},
                                                      {{2, 1, 3, 1, 5, 1}, {1, 4, 1, 6, 1, 7}},
                                                      {{4, 1, 1}, {4, 3, 257}},
                                                      {{1, 1, 1}, {1, 1, 1}}};
  for (const std::string op : {"Add", "Sub", "Mul", "Div"})
    for (const auto& [a, b] : cases) {
      auto o = on_vulkan(op);
      if (op == "Div") o.random(a).random(b, 0.5f, 3.0f);
      else
        o.random(a).random(b);
      expect_on_vulkan(o.check(1e-6, 1e-6), op + shape_str(a) + shape_str(b));
    }
}

// Pow: C's pow (the CPU computes it in double) against the device's pow(|x|, y) for the finite
// positive cases, with the signs, zeros, infinities and NaNs handled in binary.comp. The device
// computes exp2(y * log2|x|) in float32: an error of ~1e-7 in log2 grows with |y log2 x|
// (<= 8 here), so rtol 4e-6.
TEST(VulkanElementwise, Pow) {
  PI_SKIP_WITHOUT_VULKAN();
  const std::vector<std::pair<Shape, Shape>> cases = {{{257}, {257}},
                                                      {{3, 17, 33}, {33}},
                                                      {{4, 1}, {1, 5}},
                                                      {{7}, {}},
                                                      {{2, 1, 3, 1, 5, 1}, {4, 1, 6, 1, 7}}};
  for (const auto& [a, b] : cases) {
    auto r = OracleOp("Pow", 15)
                 .providers({"vulkan"})
                 .random(a, 0.05f, 6.0f)
                 .random(b, -3.0f, 3.0f)
                 .check(1e-30, 4e-6);
    expect_on_vulkan(r, "Pow" + shape_str(a) + shape_str(b));
  }
  // Negative bases: integer exponents keep (odd) or drop (even) the sign, others give NaN; zeros,
  // ones and infinities in either place.
  const float inf = INFINITY;
  const std::vector<float> xs = {-2.0f, -2.0f, -2.0f, -2.0f, -0.5f, 0.0f,  -0.0f, -0.0f,
                                 0.0f,  0.0f,  1.0f,  NAN,   NAN,   -1.0f, 2.0f,  0.5f,
                                 inf,   -inf,  -inf,  3.0f,  -1.0f, 2.0f};
  const std::vector<float> ys = {3.0f,  2.0f, -3.0f, 0.5f, -1.0f, 2.0f, 3.0f, -3.0f,
                                 -2.0f, 0.0f, NAN,   0.0f, 2.0f,  inf,  inf,  inf,
                                 -2.0f, 3.0f, -3.0f, -inf, -inf,  1.0f};
  const int64_t n = static_cast<int64_t>(xs.size());
  auto r = OracleOp("Pow", 15)
               .providers({"vulkan"})
               .input(Tensor::from_vector<float>({n}, xs))
               .input(Tensor::from_vector<float>({n}, ys))
               .check(0, 4e-6);
  expect_on_vulkan(r, "Pow special values");
  // An integer exponent (opset 12+) falls back with the reason.
  r = OracleOp("Pow", 15)
          .providers({"vulkan", "cpu"})
          .random({5})
          .input(Tensor::from_vector<int64_t>({1}, {2}))
          .check();
  EXPECT_EQ(r.provider, "cpu");
}

TEST(VulkanElementwise, Unary) {
  PI_SKIP_WITHOUT_VULKAN();
  struct Case {
    const char* op;
    float lo, hi;
  };
  for (const Case c : {Case{"Relu", -3, 3}, Case{"Neg", -3, 3}, Case{"Abs", -3, 3},
                       Case{"Exp", -20, 20}, Case{"Sigmoid", -30, 30}, Case{"Tanh", -30, 30}})
    for (const Shape& s : std::vector<Shape>{{1}, {255}, {257}, {3, 17, 33}, {0, 4}}) {
      auto r = on_vulkan(c.op).random(s, c.lo, c.hi).check(1e-6, 1e-5);
      expect_on_vulkan(r, c.op + shape_str(s));
    }
}

// The activations that also exist fused (activation.glsl), Erf, Sqrt and Clip. Erf and Gelu use
// a polynomial erf on Vulkan (|error| <= 1.5e-7) and libm's on the CPU: atol 1e-6.
TEST(VulkanElementwise, MoreUnary) {
  PI_SKIP_WITHOUT_VULKAN();
  const Shape s{3, 17, 33};
  auto check = [&](OracleOp o, const std::string& what, float lo = -5, float hi = 5) {
    auto r = o.random(s, lo, hi).check(1e-6, 1e-5);
    expect_on_vulkan(r, what);
  };
  check(on_vulkan("LeakyRelu"), "LeakyRelu");
  check(std::move(on_vulkan("LeakyRelu").attr("alpha", 0.3f)), "LeakyRelu 0.3");
  check(on_vulkan("HardSigmoid"), "HardSigmoid");
  check(std::move(on_vulkan("HardSigmoid").attr("alpha", 0.3f).attr("beta", 0.4f)), "HardSigmoid");
  check(on_vulkan("HardSwish"), "HardSwish");
  check(std::move(OracleOp("Gelu", 20).providers({"vulkan"})), "Gelu");
  auto gelu_tanh = OracleOp("Gelu", 20).providers({"vulkan"});
  check(std::move(gelu_tanh.attr("approximate", std::string("tanh"))), "Gelu tanh");
  auto gelu_poly = OracleOp("Gelu", 1, "ai.polyinfer").providers({"vulkan"});
  check(std::move(gelu_poly.reference_as("Gelu", 20)), "ai.polyinfer Gelu");
  check(on_vulkan("Erf"), "Erf");
  check(on_vulkan("Sqrt"), "Sqrt", 0, 100);
  check(std::move(OracleOp("Clip", 6).providers({"vulkan"}).attr("min", -1.5f).attr("max", 2.0f)),
        "Clip 6");
  check(std::move(OracleOp("Clip", 6).providers({"vulkan"}).attr("max", 0.5f)), "Clip 6 max");
  // Negative inputs give NaN on both sides.
  auto r = on_vulkan("Sqrt").input(Tensor::from_vector<float>({3}, {-1.f, 0.f, 4.f})).check();
  expect_on_vulkan(r, "Sqrt of -1");
}

// The other float unary operators over their domains, with odd sizes and a workgroup tail.
// Tolerances: Floor/Ceil/Round/Sign/Softsign/ThresholdedRelu and Reciprocal are exact or one
// IEEE operation (0 / 1e-7); the transcendental ones use the device's exp/log/sin/... (Vulkan
// allows a few ulp and more, llvmpipe's are polynomials) where the CPU uses libm, so atol 1e-6
// absolute near zero plus rtol 2e-6 (Tan and the expm1-based Elu family, Mish: 1e-5, since an
// argument error of an ulp grows with the derivative). Near 0 the Elu family, Softplus and Mish
// use series for expm1/log1p and keep rtol 1e-5 down to 1e-9 absolute, as do the inverse
// trigonometric functions (Cephes' atanf polynomial) and the hyperbolic ones built on them
// (Sinh, Cosh, Atanh: rtol 1e-5 for the same derivative growth).
TEST(VulkanElementwise, MoreUnaryOps) {
  PI_SKIP_WITHOUT_VULKAN();
  struct Case {
    const char* op;
    int opset;
    float lo, hi;
    double atol, rtol;
  };
  const Case cases[] = {
      {"Floor", 13, -5, 5, 0, 0},           {"Ceil", 13, -5, 5, 0, 0},
      {"Round", 11, -5, 5, 0, 0},           {"Sign", 13, -5, 5, 0, 0},
      {"Reciprocal", 13, 0.1f, 5, 0, 1e-7}, {"Reciprocal", 13, -5, -0.1f, 0, 1e-7},
      {"Softsign", 1, -5, 5, 1e-7, 1e-7},   {"ThresholdedRelu", 10, -5, 5, 0, 0},
      {"Log", 13, 1e-3f, 100, 1e-6, 2e-6},  {"Sin", 7, -10, 10, 1e-6, 2e-6},
      {"Cos", 7, -10, 10, 1e-6, 2e-6},      {"Sin", 7, -1000, 1000, 1e-6, 2e-6},
      {"Cos", 7, -1000, 1000, 1e-6, 2e-6},  // large arguments: the device's range reduction
      {"Tan", 7, -1.5f, 1.5f, 1e-6, 1e-5},  {"Softplus", 1, -30, 30, 1e-6, 2e-6},
      {"Mish", 18, -30, 30, 1e-6, 1e-5},    {"Elu", 6, -10, 10, 1e-6, 1e-5},
      {"Selu", 6, -10, 10, 1e-6, 1e-5},     {"Celu", 12, -10, 10, 1e-6, 1e-5},
      {"Asin", 7, -1, 1, 1e-6, 2e-6},       {"Acos", 7, -1, 1, 1e-6, 2e-6},
      {"Atan", 7, -50, 50, 1e-6, 2e-6},     {"Sinh", 9, -8, 8, 1e-6, 1e-5},
      {"Cosh", 9, -8, 8, 1e-6, 1e-5},       {"Asinh", 9, -50, 50, 1e-6, 2e-6},
      {"Acosh", 9, 1, 50, 1e-6, 2e-6},      {"Atanh", 9, -0.999f, 0.999f, 1e-6, 1e-5}};
  for (const Case& c : cases)
    for (const Shape& s : std::vector<Shape>{{1}, {257}, {3, 17, 33}, {0, 3}}) {
      auto r =
          OracleOp(c.op, c.opset).providers({"vulkan"}).random(s, c.lo, c.hi).check(c.atol, c.rtol);
      expect_on_vulkan(r, c.op + shape_str(s));
    }
  // Arguments near 0, where exp(x) - 1 and log(1 + x) would cancel.
  for (const char* op :
       {"Elu", "Selu", "Celu", "Softplus", "Mish", "Asin", "Atan", "Sinh", "Asinh", "Atanh"}) {
    auto r = OracleOp(op, 18).providers({"vulkan"}).random({301}, -1e-3f, 1e-3f).check(1e-9, 1e-5);
    expect_on_vulkan(r, std::string(op) + " near 0");
  }
  // Attributes.
  auto r =
      OracleOp("Elu", 6).providers({"vulkan"}).attr("alpha", 0.3f).random({99}).check(1e-6, 1e-5);
  expect_on_vulkan(r, "Elu alpha");
  r = OracleOp("Selu", 6)
          .providers({"vulkan"})
          .attr("alpha", 1.5f)
          .attr("gamma", 2.0f)
          .random({99})
          .check(1e-6, 1e-5);
  expect_on_vulkan(r, "Selu alpha gamma");
  r = OracleOp("Celu", 12).providers({"vulkan"}).attr("alpha", 2.5f).random({99}).check(1e-6, 1e-5);
  expect_on_vulkan(r, "Celu alpha");
  r = OracleOp("ThresholdedRelu", 10)
          .providers({"vulkan"})
          .attr("alpha", -0.5f)
          .random({99})
          .check(0, 0);
  expect_on_vulkan(r, "ThresholdedRelu alpha");
}

// Halves round to even; signs of zero and NaN; the ends of the domains.
TEST(VulkanElementwise, UnarySpecialValues) {
  PI_SKIP_WITHOUT_VULKAN();
  const Tensor halves = Tensor::from_vector<float>(
      {10}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.49999997f, -0.0f, 1e8f, -3.7f});
  expect_on_vulkan(OracleOp("Round", 11).providers({"vulkan"}).input(halves).check(0, 0), "Round");
  const Tensor signs = Tensor::from_vector<float>({5}, {-0.0f, 0.0f, NAN, -INFINITY, 3.0f});
  for (const char* op : {"Sign", "Floor", "Ceil", "Round", "Reciprocal"})
    expect_on_vulkan(OracleOp(op, 13).providers({"vulkan"}).input(signs).check(0, 0), op);
  // The ends of the inverse functions' domains and past them (NaN, infinities at +-1).
  const Tensor ends =
      Tensor::from_vector<float>({8}, {-1.0f, 1.0f, 2.0f, -2.0f, 0.0f, NAN, 0.5f, -0.0f});
  for (const char* op : {"Asin", "Acos", "Atan", "Acosh", "Atanh", "Asinh", "Sinh", "Cosh"})
    expect_on_vulkan(OracleOp(op, 9).providers({"vulkan"}).input(ends).check(1e-6, 2e-6), op);
  const Tensor logs = Tensor::from_vector<float>({4}, {0.0f, -1.0f, INFINITY, 1.0f});
  expect_on_vulkan(OracleOp("Log", 13).providers({"vulkan"}).input(logs).check(0, 0), "Log");
}

TEST(VulkanElementwise, ClipBounds) {
  PI_SKIP_WITHOUT_VULKAN();
  // Constant bounds (read at creation), one bound only, and min > max (every element max).
  for (const auto& [lo, hi] : std::vector<std::pair<float, float>>{{-1, 2}, {0, NAN}, {3, 1}}) {
    test::ModelBuilder b(13);
    b.input("x", {4, 9}).output("y", {4, 9});
    b.initializer("lo", {}, {lo});
    std::vector<std::string> in = {"x", "lo"};
    if (!std::isnan(hi)) {
      b.initializer("hi", {}, {hi});
      in.push_back("hi");
    }
    b.node("Clip", in, {"y"}, "clip");
    const std::string bytes = b.bytes();
    SessionOptions o;
    o.optimization_level = 0;
    o.providers = {"vulkan"};
    Session vk = Session::load_bytes(bytes.data(), bytes.size(), o);
    o.providers = {"cpu-ref"};
    Session ref = Session::load_bytes(bytes.data(), bytes.size(), o);
    const Tensor x = test::random_tensor({4, 9});
    EXPECT_EQ(vk.run({{"x", Value(x)}}).at(0).tensor().to_vector<float>(),
              ref.run({{"x", Value(x)}}).at(0).tensor().to_vector<float>())
        << lo << " " << hi;
  }
  // Bounds computed at run time fall back.
  auto r = OracleOp("Clip", 13)
               .providers({"vulkan", "cpu"})
               .random({3, 4})
               .input(Tensor::from_vector<float>({}, {-0.5f}))
               .check();
  EXPECT_EQ(r.provider, "cpu");
}

TEST(VulkanElementwise, MoreElementsThanOneDispatchRow) {
  PI_SKIP_WITHOUT_VULKAN();
  // 65535 workgroups of 256 cover 16,776,960 elements; this is more.
  const Shape big{4099, 4099};
  expect_on_vulkan(on_vulkan("Add").random(big).random({4099}).check(1e-6, 1e-6), "Add big");
  expect_on_vulkan(on_vulkan("Relu").random(big).check(), "Relu big");
}

}  // namespace
}  // namespace polyinfer
