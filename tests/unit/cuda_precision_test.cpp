// The CUDA kernels' float16 and bfloat16 variants (elem.cuh: 16-bit storage, float32
// arithmetic; cuBLAS/cuDNN with float32 accumulation and Tensor Cores) and the CUDA Cast,
// against cpu-ref through the oracle harness on the same 16-bit inputs. Each skips with the
// probe's reason without a usable GPU (bfloat16 also below compute capability 8.0).
//
// Tolerance: cpu-ref's 16-bit kernels widen the inputs to float32, compute there and round the
// result once, as these kernels do; the float32 results differ as in the float32 tests (summation
// order and fused multiply-adds: ~1e-6 * K for K terms). Rounded, they are equal or one ulp
// apart where the float32 values straddle a rounding boundary: an ulp is at most 2^-10 of the
// value for float16 (rtol 1e-3) and 2^-7 for bfloat16 (8 significant bits: rtol 8e-3). The fused
// forms round more than once on both sides, at different steps (cpu-ref: the product, then after
// Z/bias and the activation; CUDA: the product with Z, the bias, the activation); an early
// rounding is half an ulp of a value below 8 here (sums of 40-54 products of values in [-1, 1]),
// which a later subtraction can leave in a small result: 2^-9 for float16 and 2^-5 for bfloat16,
// twice over, in atol. A wrong element, tap or conversion is off by far more.
#include <cmath>
#include <cstring>
#include <random>

#include "cuda_util.h"
#include "oracle.h"
#include "polyinfer/session.h"
#include "vulkan_util.h"  // check_with_constants

namespace polyinfer {
namespace {

using test::OracleOp;

struct Precision16 {
  DType dtype;
  double ulp;         // one ulp, relative
  double fused_atol;  // two early roundings of a value below 8 (see the top)
  const char* name;
};
const Precision16 kF16{DType::Float16, 1e-3, 4e-3, "float16"};
const Precision16 kBF16{DType::BFloat16, 8e-3, 6.5e-2, "bfloat16"};

OracleOp on_cuda(const std::string& op, int opset, const std::string& domain = "") {
  return std::move(OracleOp(op, opset, domain).providers({"cuda"}));
}

// A random input rounded to `p`'s type.
OracleOp& rnd(OracleOp& o, const Precision16& p, const Shape& s, float lo = -3, float hi = 3) {
  return p.dtype == DType::Float16 ? o.random_half(s, lo, hi) : o.random_bf16(s, lo, hi);
}
Tensor to16(const Precision16& p, const Tensor& t) {
  return p.dtype == DType::Float16 ? test::to_half(t) : test::to_bf16(t);
}

// The precisions this GPU runs: float16 always, bfloat16 from compute capability 8.0 (the CUDA
// kernels that use cuBLAS or cuDNN refuse it below; see require_float).
std::vector<Precision16> precisions() {
  std::vector<Precision16> ps{kF16};
  const std::string bytes = OracleOp("MatMul", 13)
                                .input(test::to_bf16(test::random_tensor({2, 2})))
                                .input(test::to_bf16(test::random_tensor({2, 2})))
                                .model();
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  if (s.placement().nodes.at(0).provider == "cuda") ps.push_back(kBF16);
  return ps;
}

void expect_on_cuda(const test::OracleResult& r, const std::string& what) {
  EXPECT_EQ(r.provider, "cuda") << what;
  EXPECT_EQ(r.impl.rfind("cuda:", 0), 0u) << what << ": " << r.impl;
}

TEST(CudaPrecision, Conv) {
  PI_SKIP_WITHOUT_CUDA();
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, pads;
    int64_t group;
  };
  const std::vector<Case> cases = {
      {{2, 3, 9, 11}, {5, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1},
      {{1, 3, 17, 13}, {70, 3, 5, 3}, {2, 1}, {2, 1, 0, 2}, 1},  // asymmetric: the padding copy
      {{1, 8, 12, 12}, {8, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, 8},   // depthwise
      {{2, 32, 14, 14}, {64, 32, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1}};
  for (const Precision16& p : precisions())
    for (const Case& c : cases) {
      auto o = on_cuda("Conv", 11);
      rnd(o, p, c.x, -1, 1);
      rnd(o, p, c.w, -1, 1);
      rnd(o, p, {c.w[0]}, -1, 1);
      o.attr("strides", c.strides).attr("pads", c.pads).attr("group", c.group);
      // cuDNN may time a Winograd or FFT algorithm fastest for 16-bit types: their float32
      // result errs by up to ~1e-5 of the sum of |terms| (k terms of magnitude <= 1), which an
      // output near zero does not round away. A wrong tap is off by ~|w x|, ~0.1-1.
      const double k = double(c.w[1] * c.w[2] * c.w[3]);
      expect_on_cuda(o.check(1e-5 * k, p.ulp), std::string(p.name) + shape_str(c.w));
    }
}

TEST(CudaPrecision, FusedConvWithResidualAndActivation) {
  PI_SKIP_WITHOUT_CUDA();
  for (const Precision16& p : precisions())
    for (const char* act : {"Relu", "Clip", "Silu"}) {
      auto o = on_cuda("FusedConv", 1, "ai.polyinfer");
      o.attr("pads", std::vector<int64_t>{1, 1, 1, 1}).attr("activation", std::string(act));
      if (std::string(act) == "Clip") o.attr("activation_params", std::vector<float>{0.f, 6.f});
      rnd(o, p, {2, 6, 9, 9}, -1, 1);
      rnd(o, p, {5, 6, 3, 3}, -1, 1);
      rnd(o, p, {5}, -1, 1);
      rnd(o, p, {2, 5, 9, 9}, -1, 1);
      expect_on_cuda(o.check(p.fused_atol, p.ulp), std::string(p.name) + " " + act);
    }
}

TEST(CudaPrecision, MatrixProducts) {
  PI_SKIP_WITHOUT_CUDA();
  for (const Precision16& p : precisions()) {
    const std::string n = p.name;
    auto o = on_cuda("MatMul", 13);
    rnd(o, p, {3, 19, 40}, -1, 1);
    rnd(o, p, {40, 70}, -1, 1);
    expect_on_cuda(o.check(1e-6 * 40, p.ulp), n + " MatMul folded");
    o = on_cuda("MatMul", 13);
    rnd(o, p, {3, 19, 40}, -1, 1);
    rnd(o, p, {3, 40, 33}, -1, 1);
    expect_on_cuda(o.check(1e-6 * 40, p.ulp), n + " MatMul strided batch");
    o = on_cuda("MatMul", 13);
    rnd(o, p, {2, 1, 5, 8}, -1, 1);
    rnd(o, p, {1, 3, 8, 6}, -1, 1);
    expect_on_cuda(o.check(1e-6 * 8, p.ulp), n + " MatMul broadcast batch");
    o = on_cuda("Gemm", 13).attr("transB", int64_t{1}).attr("beta", 0.5f);
    rnd(o, p, {19, 40}, -1, 1);
    rnd(o, p, {33, 40}, -1, 1);
    rnd(o, p, {33}, -1, 1);
    expect_on_cuda(o.check(p.fused_atol, p.ulp), n + " Gemm beta 0.5");
    o = on_cuda("Gemm", 13).attr("transA", int64_t{1});
    rnd(o, p, {40, 19}, -1, 1);
    rnd(o, p, {40, 33}, -1, 1);
    rnd(o, p, {33}, -1, 1);
    expect_on_cuda(o.check(p.fused_atol, p.ulp), n + " Gemm row bias (epilogue)");
    for (const char* act : {"Relu", "GeluTanh", "Gelu", "Sigmoid"}) {
      o = on_cuda("FusedMatMul", 1, "ai.polyinfer").attr("activation", std::string(act));
      rnd(o, p, {2, 19, 40}, -1, 1);
      rnd(o, p, {40, 33}, -1, 1);
      rnd(o, p, {33}, -1, 1);
      expect_on_cuda(o.check(p.fused_atol, p.ulp), n + " FusedMatMul " + act);
      o = on_cuda("FusedGemm", 1, "ai.polyinfer").attr("activation", std::string(act));
      rnd(o, p, {19, 40}, -1, 1);
      rnd(o, p, {40, 33}, -1, 1);
      rnd(o, p, {33}, -1, 1);
      expect_on_cuda(o.check(p.fused_atol, p.ulp), n + " FusedGemm " + act);
    }
  }
}

TEST(CudaPrecision, Pooling) {
  PI_SKIP_WITHOUT_CUDA();
  const std::vector<int64_t> k3{3, 3}, s2{2, 2}, p1{1, 1, 1, 1};
  for (const Precision16& p : precisions()) {
    const std::string n = p.name;
    auto o = on_cuda("MaxPool", 12).attr("kernel_shape", k3).attr("strides", s2).attr("pads", p1);
    expect_on_cuda(rnd(o, p, {2, 3, 11, 9}).check(0, 0), n + " MaxPool");  // selects: exact
    o = on_cuda("AveragePool", 19)
            .attr("kernel_shape", k3)
            .attr("pads", p1)
            .attr("count_include_pad", int64_t{1});
    expect_on_cuda(rnd(o, p, {2, 3, 11, 9}).check(1e-6, p.ulp), n + " AveragePool");
    o = on_cuda("GlobalAveragePool", 1);
    expect_on_cuda(rnd(o, p, {2, 5, 7, 7}).check(1e-6, p.ulp), n + " GlobalAveragePool");
    o = on_cuda("GlobalMaxPool", 1);
    expect_on_cuda(rnd(o, p, {2, 5, 7, 7}).check(0, 0), n + " GlobalMaxPool");
  }
}

TEST(CudaPrecision, ElementWise) {
  PI_SKIP_WITHOUT_CUDA();
  for (const Precision16& p : precisions()) {
    const std::string n = p.name;
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
      auto o = on_cuda(op, 14);
      rnd(o, p, {2, 3, 5});
      rnd(o, p, {3, 1}, 0.5f, 3.f);
      expect_on_cuda(o.check(1e-6, p.ulp), n + " " + op);
    }
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Neg", "Abs", "Erf", "HardSwish"}) {
      auto o = on_cuda(op, 14);
      expect_on_cuda(rnd(o, p, {3, 77}).check(1e-6, p.ulp), n + " " + op);
    }
    auto o = on_cuda("Gelu", 1, "ai.polyinfer").reference_as("Gelu", 20);
    expect_on_cuda(rnd(o, p, {3, 77}).check(1e-6, p.ulp), n + " Gelu");
  }
}

TEST(CudaPrecision, BatchNormalization) {
  PI_SKIP_WITHOUT_CUDA();
  for (const Precision16& p : precisions()) {
    const auto r = test::check_with_constants(
        OracleOp("BatchNormalization", 15),
        {to16(p, test::random_tensor({2, 4, 3, 3})), to16(p, test::random_tensor({4}, 2)),
         to16(p, test::random_tensor({4}, 3)), to16(p, test::random_tensor({4}, 4)),
         to16(p, test::random_tensor({4}, 5, 0.5f, 2.f))},
        {false, true, true, true, true}, {"cuda"}, 1e-6, p.ulp);
    EXPECT_EQ(r.provider, "cuda") << p.name << ": " << r.reason;
  }
}

// Data movement copies 16-bit patterns: exact.
TEST(CudaPrecision, DataMovement) {
  PI_SKIP_WITHOUT_CUDA();
  for (const Precision16& p : precisions()) {
    const std::string n = p.name;
    auto o = on_cuda("Transpose", 13).attr("perm", std::vector<int64_t>{2, 0, 1});
    expect_on_cuda(rnd(o, p, {3, 4, 5}).check(0, 0), n + " Transpose");
    o = on_cuda("Concat", 13).attr("axis", int64_t{1});
    rnd(o, p, {2, 3, 4});
    expect_on_cuda(rnd(o, p, {2, 5, 4}).check(0, 0), n + " Concat");
    const Tensor x = to16(p, test::random_tensor({4, 6, 5}));
    auto c = test::check_with_constants(
        OracleOp("Slice", 13),
        {x, Tensor::from_vector<int64_t>({2}, {1, 5}), Tensor::from_vector<int64_t>({2}, {3, 0}),
         Tensor::from_vector<int64_t>({2}, {0, 1}), Tensor::from_vector<int64_t>({2}, {1, -2})},
        {false, true, true, true, true}, {"cuda"});
    EXPECT_EQ(c.provider, "cuda") << n << " Slice: " << c.reason;
    c = test::check_with_constants(OracleOp("Gather", 13).attr("axis", int64_t{1}),
                                   {x, Tensor::from_vector<int64_t>({3}, {0, 5, -1})},
                                   {false, true}, {"cuda"});
    EXPECT_EQ(c.provider, "cuda") << n << " Gather: " << c.reason;
    c = test::check_with_constants(
        OracleOp("Expand", 13),
        {to16(p, test::random_tensor({3, 1})), Tensor::from_vector<int64_t>({3}, {2, 3, 4})},
        {false, true}, {"cuda"});
    EXPECT_EQ(c.provider, "cuda") << n << " Expand: " << c.reason;
    c = test::check_with_constants(OracleOp("Reshape", 14),
                                   {x, Tensor::from_vector<int64_t>({2}, {-1, 10})}, {false, true},
                                   {"cuda"});
    EXPECT_EQ(c.provider, "cuda") << n << " Reshape: " << c.reason;
    o = on_cuda("Split", 18).attr("axis", int64_t{2}).attr("num_outputs", int64_t{2});
    o.outputs(2);
    expect_on_cuda(rnd(o, p, {2, 3, 7}).check(0, 0), n + " Split");
  }
}

// Every 16-bit pattern widened to float32 on CUDA and on cpu-ref (exact both ways), then the
// float32 values narrowed back: the same bits (a NaN only as a NaN: the payload is the
// conversion's choice).
TEST(CudaPrecision, CastEvery16BitPatternToFloatAndBack) {
  PI_SKIP_WITHOUT_CUDA();
  for (const Precision16& p : precisions()) {
    // The float32 value of a 16-bit pattern, computed here (independent of both providers).
    const auto widen16 = [&p](uint16_t b) {
      if (p.dtype == DType::Float16) return Float16::to_float(b);
      const uint32_t u = uint32_t(b) << 16;
      float v;
      std::memcpy(&v, &u, 4);
      return v;
    };
    std::vector<uint16_t> bits(65536);
    std::vector<float> f(bits.size());
    for (uint32_t i = 0; i < bits.size(); ++i) {
      bits[i] = uint16_t(i);
      f[i] = widen16(bits[i]);
    }
    Tensor h = Tensor::empty(p.dtype, {65536});
    std::memcpy(h.raw_data(), bits.data(), bits.size() * 2);
    auto r = on_cuda("Cast", 19).attr("to", int64_t(DType::Float32)).input(h).check(0, 0);
    EXPECT_EQ(r.provider, "cuda") << p.name;
    EXPECT_EQ(r.impl, "cuda:cast") << p.name;
    const Tensor wide = Tensor::from_vector<float>({65536}, f);
    const std::string bytes = on_cuda("Cast", 19).attr("to", int64_t(p.dtype)).input(wide).model();
    SessionOptions o;
    o.providers = {"cuda"};
    o.optimization_level = 0;
    Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
    const Tensor back = s.run({{"in0", Value(wide)}})[0].tensor().to(Device::cpu());
    ASSERT_EQ(back.dtype(), p.dtype);
    std::vector<uint16_t> got(65536);
    std::memcpy(got.data(), back.raw_data(), got.size() * 2);
    for (uint32_t i = 0; i < 65536; ++i) {
      if (std::isnan(f[i])) EXPECT_TRUE(std::isnan(widen16(got[i]))) << p.name << " " << i;
      else
        EXPECT_EQ(got[i], bits[i]) << p.name << " " << i;
    }
  }
}

// Float32 to 16 bits: random patterns over every exponent and the rounding edges, bit for bit
// against the CPU's Cast, and the IEEE values of a few edges (independent of both).
TEST(CudaPrecision, CastFloatRoundsAsTheCpu) {
  PI_SKIP_WITHOUT_CUDA();
  std::vector<float> f = {0.f,
                          -0.f,
                          1.f,
                          1.f + 0x1p-11f,
                          1.f + 3 * 0x1p-11f,
                          1.f + 0x1p-8f,
                          1.f + 3 * 0x1p-8f,
                          65519.f,
                          65520.f,
                          1e6f,
                          INFINITY,
                          -INFINITY,
                          NAN,
                          0x1p-24f,
                          0x1p-25f,
                          1e-45f,
                          3.4e38f};
  std::mt19937 gen(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t b = gen();
    float v;
    std::memcpy(&v, &b, 4);
    f.push_back(v);
  }
  const Tensor x = Tensor::from_vector<float>({int64_t(f.size())}, f);
  for (const Precision16& p : precisions()) {
    const std::string bytes = on_cuda("Cast", 19).attr("to", int64_t(p.dtype)).input(x).model();
    SessionOptions co, ro;
    co.providers = {"cuda"};
    ro.providers = {"cpu-ref"};
    co.optimization_level = ro.optimization_level = 0;
    Session cu = Session::load_bytes(bytes.data(), bytes.size(), co);
    Session ref = Session::load_bytes(bytes.data(), bytes.size(), ro);
    EXPECT_EQ(cu.placement().nodes.at(0).provider, "cuda");
    const Tensor g = cu.run({{"in0", Value(x)}})[0].tensor().to(Device::cpu());
    const Tensor w = ref.run({{"in0", Value(x)}})[0].tensor();
    std::vector<uint16_t> got(f.size()), want(f.size());
    std::memcpy(got.data(), g.raw_data(), got.size() * 2);
    std::memcpy(want.data(), w.raw_data(), want.size() * 2);
    int bad = 0;
    for (size_t i = 0; i < f.size(); ++i) {
      if (std::isnan(f[i])) continue;  // checked as NaN below, payloads may differ
      if (got[i] != want[i] && bad++ < 10)
        ADD_FAILURE() << p.name << " Cast(" << f[i] << "): cuda 0x" << std::hex << got[i]
                      << ", cpu 0x" << want[i] << std::dec;
    }
    if (p.dtype == DType::Float16) {
      EXPECT_EQ(got[3], 0x3c00);   // 1 + 2^-11 ties to even: 1
      EXPECT_EQ(got[4], 0x3c02);   // 1 + 3·2^-11 ties to even: 1 + 2^-9
      EXPECT_EQ(got[7], 0x7bff);   // 65519 -> 65504
      EXPECT_EQ(got[8], 0x7c00);   // 65520 -> inf
      EXPECT_EQ(got[13], 0x0001);  // 2^-24: the smallest subnormal
      EXPECT_EQ(got[14], 0x0000);  // 2^-25 ties to even: 0
    } else {
      EXPECT_EQ(got[5], 0x3f80);   // 1 + 2^-8 ties to even: 1
      EXPECT_EQ(got[6], 0x3f82);   // 1 + 3·2^-8 ties to even: 1 + 2^-6
      EXPECT_EQ(got[9], 0x4974);   // 1e6 = 0x49742400 rounds down
      EXPECT_EQ(got[16], 0x7f80);  // 3.4e38 = 0x7f7fc99e rounds up to inf
    }
    const uint16_t nan = got[12];
    EXPECT_TRUE(p.dtype == DType::Float16 ? (nan & 0x7c00) == 0x7c00 && (nan & 0x3ff)
                                          : (nan & 0x7f80) == 0x7f80 && (nan & 0x7f))
        << p.name << " NaN -> 0x" << std::hex << nan;
  }
}

// Other casts stay on the CPU with the reason; a Cast to the same type is a view.
TEST(CudaPrecision, CastSameTypeAndRefusals) {
  PI_SKIP_WITHOUT_CUDA();
  auto r = on_cuda("Cast", 19).attr("to", int64_t(DType::Float32)).random({3, 4}).check(0, 0);
  EXPECT_EQ(r.provider, "cuda");
  EXPECT_EQ(r.impl, "cuda:view");
  const std::string bytes =
      OracleOp("Cast", 19).attr("to", int64_t(DType::Int64)).random({3}).model();
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  ASSERT_EQ(s.placement().fallbacks.size(), 1u);
  EXPECT_NE(s.placement().fallbacks[0].reason.find("float32, float16 and bfloat16"),
            std::string::npos)
      << s.placement().fallbacks[0].reason;
}

// SessionOptions::allow_tf32: off, a float32 MatMul is float32 (within float32 rounding of
// cpu-ref, impl "cuda:cublas"); on, from compute capability 8.0, TF32 (impl "+tf32"): each
// output within 2^-9 of the sum of its |a·b| terms (TF32 rounds both inputs to 10 mantissa
// bits: at most 2^-10 relative per product, with float32 accumulation), and visibly different
// from the float32 result somewhere, or the option did nothing.
TEST(CudaPrecision, Tf32IsOptInAndNamed) {
  PI_SKIP_WITHOUT_CUDA();
  const int64_t M = 64, K = 256, N = 48;
  const std::string m = test::ModelBuilder()
                            .input("a", {M, K})
                            .input("b", {K, N})
                            .output("y", {M, N})
                            .node("MatMul", {"a", "b"}, {"y"}, "mm")
                            .bytes();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> a(M * K), b(K * N);
  for (auto& v : a) v = d(rng);
  for (auto& v : b) v = d(rng);
  const std::map<std::string, Value> feed{{"a", Tensor::from_vector<float>({M, K}, a)},
                                          {"b", Tensor::from_vector<float>({K, N}, b)}};
  auto run = [&](const std::string& provider, bool tf32, std::string* impl) {
    SessionOptions o;
    o.providers = {provider};
    o.optimization_level = 0;
    o.allow_tf32 = tf32;
    Session s = Session::load_bytes(m.data(), m.size(), o);
    if (impl) *impl = s.placement().nodes.at(0).impl;
    return s.run(feed)[0].tensor().to(Device::cpu()).to_vector<float>();
  };
  const std::vector<float> ref = run("cpu-ref", false, nullptr);
  std::string impl32, impl_tf32;
  const std::vector<float> y32 = run("cuda", false, &impl32);
  const std::vector<float> ytf = run("cuda", true, &impl_tf32);
  EXPECT_EQ(impl32, "cuda:cublas");
  const bool has_tf32 = impl_tf32 == "cuda:cublas+tf32";
  EXPECT_TRUE(has_tf32 || impl_tf32 == "cuda:cublas") << impl_tf32;
  bool differs = false;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double mag = 0;
      for (int64_t k = 0; k < K; ++k) mag += std::fabs(double(a[i * K + k]) * b[k * N + j]);
      const size_t at = static_cast<size_t>(i * N + j);
      ASSERT_NEAR(y32[at], ref[at], 1e-6 * mag) << "float32 at " << at;
      ASSERT_NEAR(ytf[at], ref[at], std::ldexp(mag, -9)) << "tf32 at " << at;
      differs = differs || std::fabs(ytf[at] - y32[at]) > 1e-5 * mag;
    }
  EXPECT_EQ(differs, has_tf32) << "TF32 allowed on this GPU but the results are float32's";
}

}  // namespace
}  // namespace polyinfer
