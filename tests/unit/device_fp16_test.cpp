// The device providers' float16 kernels (float16 in memory, float32 arithmetic: Vulkan's
// storage.glsl, OpenCL's vload_half/vstore_half_rte) and their Cast, against cpu-ref through the
// oracle harness on the same float16 inputs.
//
// Tolerance: cpu-ref's float16 kernels widen the inputs to float32, compute there and round the
// result to float16 once, as the shaders do; the float32 results differ as in the float32 tests
// (summation order and fused multiply-adds: ~1e-6 * K for K terms). Rounded to float16 they are
// then equal, or one float16 ulp apart where the float32 values straddle a rounding boundary:
// an ulp is at most 2^-10 of the value (rtol 1e-3), and 2^-24 below 2^-14 (in atol). The fused
// forms round twice on cpu-ref (the product, then after Z/bias and the activation, as the
// unfused float16 graph does) and once on the device: the first rounding is half an ulp of the
// product before Z/bias is added, which can dwarf a small result (a product of 3 and a bias of
// -2.9). The products here (sums of 40-54 products of values in [-1, 1]) stay below 8, where
// half an ulp is 2^-9: atol 2e-3 on top of one ulp of the result. A wrong element, tap or
// conversion is off by far more.
#include <cmath>
#include <cstring>
#include <random>

#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;
using test::to_half;

constexpr double kUlp = 1e-3;        // one float16 ulp, relative
constexpr double kFusedAtol = 2e-3;  // half an ulp below 8: cpu-ref rounds twice

// Skips where the device has no 16-bit storage (the float16 kernels refuse there).
class DeviceFp16 : public test::DeviceTest {
 protected:
  void SetUp() override {
    test::DeviceTest::SetUp();
    if (!IsSkipped() && !float16_storage()) GTEST_SKIP() << "this device has no 16-bit storage";
  }
  OracleOp on(const std::string& op, int opset, const std::string& domain = "") const {
    return OracleOp(op, opset, domain).providers({provider()});
  }
  std::string impl(const std::string& name) const { return provider() + ":" + name; }
};

TEST_P(DeviceFp16, Conv) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, pads;
    int64_t group;
  };
  const std::vector<Case> cases = {
      {{2, 3, 9, 11}, {5, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1},
      {{1, 3, 17, 13}, {70, 3, 5, 3}, {2, 1}, {2, 1, 0, 2}, 1},  // > 64 channels
      {{1, 8, 12, 12}, {8, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, 8}};  // depthwise
  for (const Case& c : cases) {
    auto o = on("Conv", 11);
    o.random_half(c.x, -1, 1).random_half(c.w, -1, 1).random_half({c.w[0]}, -1, 1);
    o.attr("strides", c.strides).attr("pads", c.pads).attr("group", c.group);
    const double k = double(c.w[1] * c.w[2] * c.w[3]);
    const auto r = o.check(1e-6 * k, kUlp);
    EXPECT_EQ(r.provider, provider()) << shape_str(c.x) << shape_str(c.w);
    EXPECT_EQ(r.impl, impl("conv"));
  }
}

TEST_P(DeviceFp16, ConvTranspose) {
  auto o = on("ConvTranspose", 11);
  o.random_half({2, 6, 5, 7}, -1, 1).random_half({6, 2, 3, 3}, -1, 1).random_half({6}, -1, 1);
  o.attr("strides", std::vector<int64_t>{2, 1}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  o.attr("group", int64_t{3});
  const auto r = o.check(1e-6 * 2 * 9, kUlp);  // K = C/group * taps = 2 * 9
  EXPECT_EQ(r.provider, provider());
  EXPECT_EQ(r.impl, impl("conv_transpose"));
}

TEST_P(DeviceFp16, FusedConvWithResidualAndActivation) {
  for (const char* act : {"Relu", "Clip"}) {
    auto o = on("FusedConv", 1, "ai.polyinfer");
    o.attr("pads", std::vector<int64_t>{1, 1, 1, 1}).attr("activation", std::string(act));
    if (std::string(act) == "Clip") o.attr("activation_params", std::vector<float>{0.f, 6.f});
    o.random_half({2, 6, 9, 9}, -1, 1)
        .random_half({5, 6, 3, 3}, -1, 1)
        .random_half({5}, -1, 1)
        .random_half({2, 5, 9, 9}, -1, 1);
    EXPECT_EQ(o.check(kFusedAtol, kUlp).provider, provider()) << act;
  }
}

TEST_P(DeviceFp16, MatrixProducts) {
  auto r = on("MatMul", 13)
               .random_half({3, 19, 40}, -1, 1)
               .random_half({40, 70}, -1, 1)
               .check(1e-6 * 40, kUlp);
  EXPECT_EQ(r.provider, provider());
  r = on("Gemm", 13)
          .attr("transB", int64_t{1})
          .attr("beta", 0.5f)
          .random_half({19, 40}, -1, 1)
          .random_half({33, 40}, -1, 1)
          .random_half({33}, -1, 1)
          .check(1e-6 * 40, kUlp);
  EXPECT_EQ(r.provider, provider());
  r = on("FusedMatMul", 1, "ai.polyinfer")
          .attr("activation", std::string("Relu"))
          .random_half({2, 19, 40}, -1, 1)
          .random_half({40, 33}, -1, 1)
          .random_half({33}, -1, 1)
          .check(kFusedAtol, kUlp);
  EXPECT_EQ(r.provider, provider());
  r = on("FusedGemm", 1, "ai.polyinfer")
          .attr("activation", std::string("Relu"))
          .random_half({19, 40}, -1, 1)
          .random_half({40, 33}, -1, 1)
          .random_half({33}, -1, 1)
          .check(kFusedAtol, kUlp);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceFp16, Pooling) {
  const std::vector<int64_t> k3{3, 3}, s2{2, 2}, p1{1, 1, 1, 1};
  // MaxPool selects: exact.
  auto r = on("MaxPool", 12)
               .attr("kernel_shape", k3)
               .attr("strides", s2)
               .attr("pads", p1)
               .random_half({2, 3, 11, 9})
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  r = on("AveragePool", 19)
          .attr("kernel_shape", k3)
          .attr("pads", p1)
          .attr("count_include_pad", int64_t{1})
          .random_half({2, 3, 11, 9})
          .check(1e-6, kUlp);
  EXPECT_EQ(r.provider, provider());
  r = on("GlobalAveragePool", 1).random_half({2, 5, 7, 7}).check(1e-6, kUlp);
  EXPECT_EQ(r.provider, provider());
  r = on("GlobalMaxPool", 1).random_half({2, 5, 3, 4, 5}).check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceFp16, ElementWise) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    auto r = on(op, 14).random_half({2, 3, 5}).random_half({3, 1}, 0.5f, 3.f).check(1e-6, kUlp);
    EXPECT_EQ(r.provider, provider()) << op;
  }
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Neg", "Abs", "Erf", "HardSwish"}) {
    auto r = on(op, 14).random_half({3, 77}).check(1e-6, kUlp);
    EXPECT_EQ(r.provider, provider()) << op;
  }
  auto r =
      on("Gelu", 1, "ai.polyinfer").reference_as("Gelu", 20).random_half({3, 77}).check(1e-6, kUlp);
  EXPECT_EQ(r.provider, provider());
  // Clip's float16 bounds as constants (the kernel reads them at creation).
  const auto c =
      test::check_with_constants(OracleOp("Clip", 13),
                                 {to_half(test::random_tensor({4, 9})),
                                  to_half(Tensor::scalar(-1.f)), to_half(Tensor::scalar(2.5f))},
                                 {false, true, true}, {provider()}, 0, 0);
  EXPECT_EQ(c.provider, provider()) << c.reason;
}

TEST_P(DeviceFp16, BatchNormalization) {
  const auto r = test::check_with_constants(
      OracleOp("BatchNormalization", 15),
      {to_half(test::random_tensor({2, 4, 3, 3})), to_half(test::random_tensor({4}, 2)),
       to_half(test::random_tensor({4}, 3)), to_half(test::random_tensor({4}, 4)),
       to_half(test::random_tensor({4}, 5, 0.5f, 2.f))},
      {false, true, true, true, true}, {provider()}, 1e-6, kUlp);
  EXPECT_EQ(r.provider, provider()) << r.reason;
}

// Data movement copies float16 bits: exact.
TEST_P(DeviceFp16, DataMovement) {
  auto r = on("Transpose", 13)
               .attr("perm", std::vector<int64_t>{2, 0, 1})
               .random_half({3, 4, 5})
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  r = on("Concat", 13)
          .attr("axis", int64_t{1})
          .random_half({2, 3, 4})
          .random_half({2, 5, 4})
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  const Tensor x = to_half(test::random_tensor({4, 6, 5}));
  auto c = test::check_with_constants(
      OracleOp("Slice", 13),
      {x, Tensor::from_vector<int64_t>({2}, {1, 5}), Tensor::from_vector<int64_t>({2}, {3, 0}),
       Tensor::from_vector<int64_t>({2}, {0, 1}), Tensor::from_vector<int64_t>({2}, {1, -2})},
      {false, true, true, true, true}, {provider()});
  EXPECT_EQ(c.provider, provider()) << c.reason;
  c = test::check_with_constants(OracleOp("Gather", 13).attr("axis", int64_t{1}),
                                 {x, Tensor::from_vector<int64_t>({3}, {0, 5, -1})}, {false, true},
                                 {provider()});
  EXPECT_EQ(c.provider, provider()) << c.reason;
  c = test::check_with_constants(
      OracleOp("Pad", 13),
      {x, Tensor::from_vector<int64_t>({6}, {0, 1, 2, 1, 0, 1}), to_half(Tensor::scalar(1.5f))},
      {false, true, true}, {provider()});
  EXPECT_EQ(c.provider, provider()) << c.reason;
  c = test::check_with_constants(OracleOp("Reshape", 14),
                                 {x, Tensor::from_vector<int64_t>({2}, {-1, 10})}, {false, true},
                                 {provider()});
  EXPECT_EQ(c.provider, provider()) << c.reason;
  Tensor cond = Tensor::empty(DType::Bool, {6, 1});
  for (int64_t i = 0; i < 6; ++i) cond.data<bool>()[i] = (i % 3) == 0;
  c = test::check_with_constants(OracleOp("Where", 16),
                                 {cond, to_half(test::random_tensor({6, 5})), x},
                                 {true, false, false}, {provider()});
  EXPECT_EQ(c.provider, provider()) << c.reason;
}

// Every float16 bit pattern to float32 and back, on the device and on cpu-ref: bit for bit (a NaN
// only as a NaN: the payload is the conversion's choice).
TEST_P(DeviceFp16, CastEveryHalfToFloatAndBack) {
  std::vector<Float16> all(65536);
  for (uint32_t i = 0; i < all.size(); ++i) all[i].bits = uint16_t(i);
  const Tensor h = Tensor::from_vector<Float16>({65536}, all);
  auto r = on("Cast", 19).attr("to", int64_t(DType::Float32)).input(h).check(0, 0);
  EXPECT_EQ(r.provider, provider());
  EXPECT_EQ(r.impl, impl("cast"));
  // Widening is exact, so narrowing the result gives the same bits back.
  std::vector<float> f(all.size());
  for (size_t i = 0; i < f.size(); ++i) f[i] = float(all[i]);
  test::OracleOp narrow = on("Cast", 19).attr("to", int64_t(DType::Float16));
  narrow.input(Tensor::from_vector<float>({65536}, f));
  SessionOptions o;
  o.providers = {provider()};
  o.optimization_level = 0;
  const std::string bytes = narrow.model();
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  const auto back = s.run({{"in0", Value(Tensor::from_vector<float>({65536}, f))}})[0]
                        .tensor()
                        .to_vector<Float16>();
  for (uint32_t i = 0; i < all.size(); ++i) {
    const bool nan = (i & 0x7c00u) == 0x7c00u && (i & 0x3ffu) != 0;
    if (nan) {
      EXPECT_TRUE(std::isnan(float(back[i]))) << i;
    } else {
      EXPECT_EQ(back[i].bits, all[i].bits) << i;
    }
  }
}

// Float32 to float16: random bit patterns over every exponent, and the edges (ties to even,
// 65504 / 65520 and beyond to inf, subnormals, 2^-25 to zero, signed zeros, NaN), bit for bit
// against the CPU's Cast.
TEST_P(DeviceFp16, CastFloatToHalfRoundsAsTheCpu) {
  std::vector<float> f = {0.f,
                          -0.f,
                          1.f,
                          1.f + 0x1p-11f,
                          1.f + 3 * 0x1p-11f,
                          1.f + 0x1p-12f,
                          65504.f,
                          65519.f,
                          65520.f,
                          -65520.f,
                          1e6f,
                          -1e30f,
                          INFINITY,
                          -INFINITY,
                          NAN,
                          -NAN,
                          0x1p-14f,
                          0x1p-15f,
                          0x1p-24f,
                          0x1p-25f,
                          0x1.8p-25f,
                          -0x1p-26f,
                          3.0e-5f,
                          6.1e-5f,
                          1e-45f,
                          0x1.ffep-15f};
  std::mt19937 gen(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = gen();
    float v;
    std::memcpy(&v, &bits, 4);
    f.push_back(v);
  }
  // Values near float16's own range, where the rounding matters most.
  std::uniform_real_distribution<float> near(-70000.f, 70000.f), tiny(-1e-4f, 1e-4f);
  for (int i = 0; i < 50000; ++i) f.push_back(near(gen));
  for (int i = 0; i < 50000; ++i) f.push_back(tiny(gen));
  const Shape shape{int64_t(f.size())};
  const Tensor x = Tensor::from_vector<float>(shape, f);
  auto op = on("Cast", 19).attr("to", int64_t(DType::Float16)).input(x);
  const std::string bytes = op.model();
  SessionOptions vo, ro;
  vo.providers = {provider()};
  ro.providers = {"cpu-ref"};
  vo.optimization_level = ro.optimization_level = 0;
  Session vk = Session::load_bytes(bytes.data(), bytes.size(), vo);
  Session ref = Session::load_bytes(bytes.data(), bytes.size(), ro);
  EXPECT_EQ(vk.placement().nodes.at(0).provider, provider());
  const auto got = vk.run({{"in0", Value(x)}})[0].tensor().to_vector<Float16>();
  const auto want = ref.run({{"in0", Value(x)}})[0].tensor().to_vector<Float16>();
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i].bits != want[i].bits && bad++ < 10)
      ADD_FAILURE() << "Cast(" << f[i] << "): device 0x" << std::hex << got[i].bits << ", cpu 0x"
                    << want[i].bits << std::dec;
  // The edges as IEEE says (independent of both implementations).
  EXPECT_EQ(got[3].bits, 0x3c00);   // 1 + 2^-11 ties to even: 1
  EXPECT_EQ(got[4].bits, 0x3c02);   // 1 + 3·2^-11 ties to even: 1 + 2^-9
  EXPECT_EQ(got[7].bits, 0x7bff);   // 65519 -> 65504
  EXPECT_EQ(got[8].bits, 0x7c00);   // 65520 -> inf
  EXPECT_EQ(got[9].bits, 0xfc00);   // -65520 -> -inf
  EXPECT_EQ(got[10].bits, 0x7c00);  // 1e6 -> inf
  EXPECT_EQ(got[18].bits, 0x0001);  // 2^-24: the smallest subnormal
  EXPECT_EQ(got[19].bits, 0x0000);  // 2^-25 ties to even: 0
  EXPECT_EQ(got[20].bits, 0x0001);  // 1.5·2^-25 rounds up
  EXPECT_EQ(got[21].bits, 0x8000);  // -2^-26: -0
  EXPECT_TRUE(std::isnan(float(got[14])));
}

// A Cast to the input's own dtype is a view; integer and bool Casts run on cast_any.comp
// (device_int_test.cpp tests every pair); bfloat16 and float64 stay on the CPU with the reason.
TEST_P(DeviceFp16, CastSameTypeAndRefusals) {
  // Vulkan has a float16 <-> float32 shader and one for the integer pairs; OpenCL builds its one
  // cast.cl per pair.
  const std::string integer_cast = impl(provider() == "vulkan" ? "cast_any" : "cast");
  auto r = on("Cast", 19).attr("to", int64_t(DType::Float32)).random({3, 4}).check(0, 0);
  EXPECT_EQ(r.provider, provider());
  EXPECT_EQ(r.impl, impl("view"));
  r = OracleOp("Cast", 19)
          .providers({provider(), "cpu"})
          .attr("to", int64_t(DType::Float32))
          .input(Tensor::from_vector<int64_t>({3}, {1, -2, (int64_t{1} << 40) + 1}))
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  EXPECT_EQ(r.impl, integer_cast);
  r = on("Cast", 19).attr("to", int64_t(DType::Int64)).random({7}, -1e3f, 1e3f).check(0, 0);
  EXPECT_EQ(r.provider, provider());
  EXPECT_EQ(r.impl, integer_cast);
  for (const auto& [from, to] : std::vector<std::pair<DType, DType>>{
           {DType::Float32, DType::BFloat16}, {DType::Float64, DType::Float32}}) {
    const Tensor x = from == DType::Float64 ? Tensor::from_vector<double>({3}, {1.5, -2.0, 1e300})
                                            : test::random_tensor({3});
    r = OracleOp("Cast", 19)
            .providers({provider(), "cpu"})
            .attr("to", int64_t(to))
            .input(x)
            .check(0, 0);
    EXPECT_EQ(r.provider, "cpu");
    const std::string bytes = OracleOp("Cast", 19).attr("to", int64_t(to)).input(x).model();
    SessionOptions o;
    o.providers = {provider(), "cpu"};
    Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
    ASSERT_EQ(s.placement().fallbacks.size(), 1u);
    const std::string want = std::string("Cast from ") + dtype_name(from) + " to " + dtype_name(to);
    EXPECT_NE(s.placement().fallbacks[0].reason.find(want), std::string::npos)
        << s.placement().fallbacks[0].reason;
  }
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceFp16);

}  // namespace
}  // namespace polyinfer
