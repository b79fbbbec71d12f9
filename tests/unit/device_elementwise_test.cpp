// The element-wise kernels of each device provider (binary.comp and unary.comp, binary.cl and
// unary.cl; device_util.h) against the CPU reference kernels (cpu-ref), through the oracle
// harness: odd sizes, tails past a work-group, broadcasting up to rank 6, float16 storage, and a
// size that needs more work-groups than one dispatch dimension allows (the kernels' grid-stride
// loop).
#include <cmath>

#include "device_util.h"
#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceElementwise : public test::DeviceTest {
 protected:
  void expect_on_device(const test::OracleResult& r, const std::string& what) const {
    EXPECT_EQ(r.provider, provider()) << what;
  }
};

TEST_P(DeviceElementwise, BinarySameShape) {
  for (const std::string op : {"Add", "Sub", "Mul", "Div"})
    for (const Shape& s : std::vector<Shape>{{1}, {7}, {255}, {256}, {257}, {3, 5, 7}, {2, 1001}}) {
      auto o = on_device(op);
      if (op == "Div") o.random(s).random(s, 0.5f, 3.0f);
      else
        o.random(s).random(s);
      expect_on_device(o.check(1e-6, 1e-6), op + shape_str(s));
    }
}

TEST_P(DeviceElementwise, BinaryBroadcast) {
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
      auto o = on_device(op);
      if (op == "Div") o.random(a).random(b, 0.5f, 3.0f);
      else
        o.random(a).random(b);
      expect_on_device(o.check(1e-6, 1e-6), op + shape_str(a) + shape_str(b));
    }
}

// Pow: C's pow (the CPU computes it in double) against the device's pow(|x|, y) for the finite
// positive cases, with the signs, zeros, infinities and NaNs handled in binary.comp / binary.cl.
// The device computes exp2(y * log2|x|) in float32: an error of ~1e-7 in log2 grows with |y log2 x|
// (<= 8 here), so rtol 4e-6.
TEST_P(DeviceElementwise, Pow) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{257}, {257}},
                                                      {{3, 17, 33}, {33}},
                                                      {{4, 1}, {1, 5}},
                                                      {{7}, {}},
                                                      {{2, 1, 3, 1, 5, 1}, {4, 1, 6, 1, 7}}};
  for (const auto& [a, b] : cases) {
    auto r = OracleOp("Pow", 15)
                 .providers({provider()})
                 .random(a, 0.05f, 6.0f)
                 .random(b, -3.0f, 3.0f)
                 .check(1e-30, 4e-6);
    expect_on_device(r, "Pow" + shape_str(a) + shape_str(b));
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
               .providers({provider()})
               .input(Tensor::from_vector<float>({n}, xs))
               .input(Tensor::from_vector<float>({n}, ys))
               .check(0, 4e-6);
  expect_on_device(r, "Pow special values");
  // An integer exponent (opset 12+) falls back with the reason.
  r = OracleOp("Pow", 15)
          .providers({provider(), "cpu"})
          .random({5})
          .input(Tensor::from_vector<int64_t>({1}, {2}))
          .check();
  EXPECT_EQ(r.provider, "cpu");
}

TEST_P(DeviceElementwise, Unary) {
  struct Case {
    const char* op;
    float lo, hi;
  };
  for (const Case c : {Case{"Relu", -3, 3}, Case{"Neg", -3, 3}, Case{"Abs", -3, 3},
                       Case{"Exp", -20, 20}, Case{"Sigmoid", -30, 30}, Case{"Tanh", -30, 30}})
    for (const Shape& s : std::vector<Shape>{{1}, {255}, {257}, {3, 17, 33}, {0, 4}}) {
      auto r = on_device(c.op).random(s, c.lo, c.hi).check(1e-6, 1e-5);
      expect_on_device(r, c.op + shape_str(s));
    }
}

// The activations that also exist fused (activation.glsl, activation.cl), Erf, Sqrt and Clip.
// Erf and Gelu use a polynomial erf on Vulkan (|error| <= 1.5e-7), OpenCL's erf (16 ulp at most)
// and libm's on the CPU: atol 1e-6.
TEST_P(DeviceElementwise, MoreUnary) {
  const Shape s{3, 17, 33};
  auto check = [&](OracleOp o, const std::string& what, float lo = -5, float hi = 5) {
    auto r = o.random(s, lo, hi).check(1e-6, 1e-5);
    expect_on_device(r, what);
  };
  check(on_device("LeakyRelu"), "LeakyRelu");
  check(std::move(on_device("LeakyRelu").attr("alpha", 0.3f)), "LeakyRelu 0.3");
  check(on_device("HardSigmoid"), "HardSigmoid");
  check(std::move(on_device("HardSigmoid").attr("alpha", 0.3f).attr("beta", 0.4f)), "HardSigmoid");
  check(on_device("HardSwish"), "HardSwish");
  check(std::move(OracleOp("Gelu", 20).providers({provider()})), "Gelu");
  auto gelu_tanh = OracleOp("Gelu", 20).providers({provider()});
  check(std::move(gelu_tanh.attr("approximate", std::string("tanh"))), "Gelu tanh");
  auto gelu_poly = OracleOp("Gelu", 1, "ai.polyinfer").providers({provider()});
  check(std::move(gelu_poly.reference_as("Gelu", 20)), "ai.polyinfer Gelu");
  check(on_device("Erf"), "Erf");
  check(on_device("Sqrt"), "Sqrt", 0, 100);
  check(std::move(OracleOp("Clip", 6).providers({provider()}).attr("min", -1.5f).attr("max", 2.0f)),
        "Clip 6");
  check(std::move(OracleOp("Clip", 6).providers({provider()}).attr("max", 0.5f)), "Clip 6 max");
  // Negative inputs give NaN on both sides.
  auto r = on_device("Sqrt").input(Tensor::from_vector<float>({3}, {-1.f, 0.f, 4.f})).check();
  expect_on_device(r, "Sqrt of -1");
}

// The other float unary operators over their domains, with odd sizes and a work-group tail.
// Tolerances: Floor/Ceil/Round/Sign/Softsign/ThresholdedRelu and Reciprocal are exact or one
// IEEE operation (0 / 1e-7); the transcendental ones use the device's exp/log/sin/... where the
// CPU uses libm (Vulkan allows a few ulp and more, llvmpipe's are polynomials; OpenCL 1.2 allows
// 2 to 5 ulp for these), so atol 1e-6 absolute near zero plus rtol 2e-6 (Tan and the
// expm1-based Elu family, Mish: 1e-5, since an argument error of an ulp grows with the
// derivative). Near 0 the Elu family, Softplus and Mish keep rtol 1e-5 down to 1e-9 absolute
// (Vulkan's series for expm1/log1p, OpenCL's own expm1/log1p), as do the inverse trigonometric
// functions (Vulkan: Cephes' atanf polynomial) and the hyperbolic ones (Sinh, Cosh, Atanh: rtol
// 1e-5 for the same derivative growth).
TEST_P(DeviceElementwise, MoreUnaryOps) {
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
      auto r = OracleOp(c.op, c.opset)
                   .providers({provider()})
                   .random(s, c.lo, c.hi)
                   .check(c.atol, c.rtol);
      expect_on_device(r, c.op + shape_str(s));
    }
  // Arguments near 0, where exp(x) - 1 and log(1 + x) would cancel.
  for (const char* op :
       {"Elu", "Selu", "Celu", "Softplus", "Mish", "Asin", "Atan", "Sinh", "Asinh", "Atanh"}) {
    auto r =
        OracleOp(op, 18).providers({provider()}).random({301}, -1e-3f, 1e-3f).check(1e-9, 1e-5);
    expect_on_device(r, std::string(op) + " near 0");
  }
  // Attributes.
  auto r =
      OracleOp("Elu", 6).providers({provider()}).attr("alpha", 0.3f).random({99}).check(1e-6, 1e-5);
  expect_on_device(r, "Elu alpha");
  r = OracleOp("Selu", 6)
          .providers({provider()})
          .attr("alpha", 1.5f)
          .attr("gamma", 2.0f)
          .random({99})
          .check(1e-6, 1e-5);
  expect_on_device(r, "Selu alpha gamma");
  r = OracleOp("Celu", 12)
          .providers({provider()})
          .attr("alpha", 2.5f)
          .random({99})
          .check(1e-6, 1e-5);
  expect_on_device(r, "Celu alpha");
  r = OracleOp("ThresholdedRelu", 10)
          .providers({provider()})
          .attr("alpha", -0.5f)
          .random({99})
          .check(0, 0);
  expect_on_device(r, "ThresholdedRelu alpha");
}

// Halves round to even; signs of zero and NaN; the ends of the domains.
TEST_P(DeviceElementwise, UnarySpecialValues) {
  const Tensor halves = Tensor::from_vector<float>(
      {10}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.49999997f, -0.0f, 1e8f, -3.7f});
  expect_on_device(OracleOp("Round", 11).providers({provider()}).input(halves).check(0, 0),
                   "Round");
  const Tensor signs = Tensor::from_vector<float>({5}, {-0.0f, 0.0f, NAN, -INFINITY, 3.0f});
  for (const char* op : {"Sign", "Floor", "Ceil", "Round", "Reciprocal"})
    expect_on_device(OracleOp(op, 13).providers({provider()}).input(signs).check(0, 0), op);
  // The ends of the inverse functions' domains and past them (NaN, infinities at +-1).
  const Tensor ends =
      Tensor::from_vector<float>({8}, {-1.0f, 1.0f, 2.0f, -2.0f, 0.0f, NAN, 0.5f, -0.0f});
  for (const char* op : {"Asin", "Acos", "Atan", "Acosh", "Atanh", "Asinh", "Sinh", "Cosh"})
    expect_on_device(OracleOp(op, 9).providers({provider()}).input(ends).check(1e-6, 2e-6), op);
  const Tensor logs = Tensor::from_vector<float>({4}, {0.0f, -1.0f, INFINITY, 1.0f});
  expect_on_device(OracleOp("Log", 13).providers({provider()}).input(logs).check(0, 0), "Log");
}

// NaN, the infinities and signed zeros through every unary operator: the CPU's results (NaN kept
// where its comparisons keep it, C's values at the infinities).
TEST_P(DeviceElementwise, UnaryNaNAndInfinities) {
  const Tensor x = Tensor::from_vector<float>(
      {8}, {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.5f, -0.75f, 100.0f});
  const std::pair<const char*, int> ops[] = {
      {"Relu", 14},       {"Sigmoid", 13}, {"Tanh", 13},      {"Exp", 13},
      {"Neg", 13},        {"Abs", 13},     {"LeakyRelu", 16}, {"HardSigmoid", 6},
      {"HardSwish", 14},  {"Gelu", 20},    {"Erf", 13},       {"Sqrt", 13},
      {"Clip", 6},        {"Floor", 13},   {"Ceil", 13},      {"Round", 11},
      {"Reciprocal", 13}, {"Log", 13},     {"Sin", 7},        {"Cos", 7},
      {"Tan", 7},         {"Sign", 13},    {"Softplus", 1},   {"Softsign", 1},
      {"Elu", 6},         {"Selu", 6},     {"Celu", 12},      {"ThresholdedRelu", 10},
      {"Mish", 18},       {"Asin", 7},     {"Acos", 7},       {"Atan", 7},
      {"Sinh", 9},        {"Cosh", 9},     {"Asinh", 9},      {"Acosh", 9},
      {"Atanh", 9}};
  for (const auto& [op, opset] : ops) {
    expect_on_device(OracleOp(op, opset).providers({provider()}).input(x).check(1e-6, 2e-6), op);
  }
}

// Every unary operator on float16 tensors (stored as float16, computed in float32, rounded once
// as cpu-ref does): results equal, or one float16 ulp apart where the float32 values straddle a
// rounding boundary (rtol 1e-3; atol for the float16 subnormals). Clip's absent bound is float16's
// largest finite value, so infinities clip to +-65504 as on the CPU.
TEST_P(DeviceElementwise, UnaryFloat16) {
  if (!float16_storage()) GTEST_SKIP() << "this device has no 16-bit storage";
  struct Case {
    const char* op;
    int opset;
    float lo, hi;
  };
  const Case cases[] = {
      {"Relu", 14, -3, 3},         {"Sigmoid", 13, -8, 8},    {"Tanh", 13, -4, 4},
      {"Exp", 13, -8, 8},          {"Neg", 13, -3, 3},        {"Abs", 13, -3, 3},
      {"LeakyRelu", 16, -3, 3},    {"HardSigmoid", 6, -4, 4}, {"HardSwish", 14, -4, 4},
      {"Gelu", 20, -4, 4},         {"Erf", 13, -3, 3},        {"Sqrt", 13, 0, 9},
      {"Floor", 13, -5, 5},        {"Ceil", 13, -5, 5},       {"Round", 11, -5, 5},
      {"Reciprocal", 13, 0.5f, 5}, {"Log", 13, 0.01f, 9},     {"Sin", 7, -4, 4},
      {"Cos", 7, -4, 4},           {"Tan", 7, -1.4f, 1.4f},   {"Sign", 13, -3, 3},
      {"Softplus", 1, -8, 8},      {"Softsign", 1, -3, 3},    {"Elu", 6, -4, 4},
      {"Selu", 6, -4, 4},          {"Celu", 12, -4, 4},       {"ThresholdedRelu", 10, -3, 3},
      {"Mish", 18, -6, 6},         {"Asin", 7, -1, 1},        {"Acos", 7, -1, 1},
      {"Atan", 7, -9, 9},          {"Sinh", 9, -4, 4},        {"Cosh", 9, -4, 4},
      {"Asinh", 9, -9, 9},         {"Acosh", 9, 1, 9},        {"Atanh", 9, -0.99f, 0.99f},
      {"Clip", 6, -3, 3}};
  for (const Case& c : cases) {
    auto r = OracleOp(c.op, c.opset)
                 .providers({provider()})
                 .random_half({3, 77}, c.lo, c.hi)
                 .check(1e-6, 1e-3);
    expect_on_device(r, std::string(c.op) + " float16");
  }
  // Clip's float16 bounds as constants (the kernel reads them at creation), and one bound only.
  const Tensor x = test::to_half(Tensor::from_vector<float>(
      {2, 4}, {-INFINITY, -3.0f, -0.5f, 0.0f, 0.75f, 2.0f, 7.0f, INFINITY}));
  auto c = test::check_with_constants(
      OracleOp("Clip", 13),
      {x, test::to_half(Tensor::scalar(-1.f)), test::to_half(Tensor::scalar(2.5f))},
      {false, true, true}, {provider()}, 0, 0);
  EXPECT_EQ(c.provider, provider()) << c.reason;
  c = test::check_with_constants(OracleOp("Clip", 13), {x, test::to_half(Tensor::scalar(-1.f))},
                                 {false, true}, {provider()}, 0, 0);
  EXPECT_EQ(c.provider, provider()) << c.reason;
}

TEST_P(DeviceElementwise, ClipBounds) {
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
    o.providers = {provider()};
    Session dev = Session::load_bytes(bytes.data(), bytes.size(), o);
    o.providers = {"cpu-ref"};
    Session ref = Session::load_bytes(bytes.data(), bytes.size(), o);
    const Tensor x = test::random_tensor({4, 9});
    EXPECT_EQ(dev.run({{"x", Value(x)}}).at(0).tensor().to_vector<float>(),
              ref.run({{"x", Value(x)}}).at(0).tensor().to_vector<float>())
        << lo << " " << hi;
  }
  // Bounds computed at run time fall back.
  auto r = OracleOp("Clip", 13)
               .providers({provider(), "cpu"})
               .random({3, 4})
               .input(Tensor::from_vector<float>({}, {-0.5f}))
               .check();
  EXPECT_EQ(r.provider, "cpu");
}

TEST_P(DeviceElementwise, MoreElementsThanOneDispatchRow) {
  // 65535 work-groups of 256 (Vulkan's usual dispatch limit, set for OpenCL too, which has
  // none) cover 16,776,960 elements; this is more.
  test::DeviceGroupLimit limit(provider(), 65535);
  const Shape big{4099, 4099};
  expect_on_device(on_device("Add").random(big).random({4099}).check(1e-6, 1e-6), "Add big");
  expect_on_device(on_device("Relu").random(big).check(), "Relu big");
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceElementwise);

}  // namespace
}  // namespace polyinfer
