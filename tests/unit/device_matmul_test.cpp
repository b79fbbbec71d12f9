// The device matrix-product kernels (MatMul, Gemm, FusedGemm, FusedMatMul; Vulkan's
// shaders/gemm.comp, OpenCL's kernels/gemm.cl), on each device provider against cpu-ref through
// the oracle harness: sizes that leave partial 64x64 tiles and partial
// K steps of 16, 1-D operands, broadcast batch dimensions (rank 6 merged down to 3), transposes,
// alpha/beta with every C broadcast, fused activations, float16 storage, and the refusals that
// fall back.
//
// Tolerance: both sides sum each output's K products in the same order (k = 0..K-1) in float32;
// they differ only where one side contracts a multiply and an add into an FMA. That changes at
// most one rounding per step, each at most half an ulp of the running sum (|sum| <= K for inputs
// in [-1, 1]): a bound of K * K * 2^-24, far above what happens. We check the observed scale
// instead, atol = 1e-6 * K (about 10 ulps of a typical sqrt(K)-sized sum) — still tight enough
// that a wrong index, a lost tile or a skipped K step (errors of order 1) fails.
#include <cmath>

#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceMatMul : public test::DeviceTest {
 protected:
  OracleOp on(const std::string& op, int opset = 13, const std::string& domain = "") const {
    return std::move(OracleOp(op, opset, domain).providers({provider()}));
  }
};

double tol_for(int64_t K) { return 1e-6 * static_cast<double>(std::max<int64_t>(K, 1)); }

TEST_P(DeviceMatMul, TwoDimensionalWithTileTails) {
  // (M, K, N): one element, exact tiles, and one past / one short of tile and K-step edges.
  const std::vector<std::array<int64_t, 3>> cases = {{1, 1, 1},      {7, 13, 5},   {64, 16, 64},
                                                     {65, 17, 129},  {63, 15, 63}, {130, 33, 67},
                                                     {1, 300, 1000}, {257, 3, 2},  {9, 300, 11}};
  for (const auto& [M, K, N] : cases) {
    auto r = on("MatMul").random({M, K}, -1, 1).random({K, N}, -1, 1).check(tol_for(K), 1e-5);
    EXPECT_EQ(r.provider, provider());
  }
}

TEST_P(DeviceMatMul, EmptyInnerDimension) {
  // K = 0: empty operands, a result of zeros (plus C for Gemm).
  EXPECT_EQ(on("MatMul").random({3, 0}).random({0, 4}).check().provider, provider());
  EXPECT_EQ(on("Gemm").random({3, 0}).random({0, 4}).random({4}).check().provider, provider());
}

TEST_P(DeviceMatMul, OneDimensionalOperands) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{13}, {13, 5}}, {{7, 13}, {13}}, {{13}, {13}}, {{2, 3, 7, 13}, {13}}, {{13}, {4, 13, 6}}};
  for (const auto& [a, b] : cases) {
    auto r = on("MatMul").random(a, -1, 1).random(b, -1, 1).check(tol_for(13), 1e-5);
    EXPECT_EQ(r.provider, provider()) << shape_str(a) << shape_str(b);
  }
}

TEST_P(DeviceMatMul, BroadcastBatch) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 5, 7}, {7, 4}},
      {{5, 7}, {2, 3, 7, 4}},
      {{3, 1, 5, 7}, {1, 4, 7, 6}},
      {{2, 1, 3, 5, 17}, {1, 4, 1, 17, 9}},
      {{2, 3, 2, 2, 5, 7}, {2, 3, 2, 2, 7, 4}},  // rank 6, merged into one batch dimension
      {{2, 3, 70, 33}, {2, 3, 33, 66}},          // tails in every tile of every batch
      {{1, 1, 4, 4}, {1, 1, 4, 4}}};
  for (const auto& [a, b] : cases) {
    auto r = on("MatMul").random(a, -1, 1).random(b, -1, 1).check(tol_for(a.back()), 1e-5);
    EXPECT_EQ(r.provider, provider()) << shape_str(a) << shape_str(b);
  }
}

TEST_P(DeviceMatMul, MoreBatchesThanOneDispatchDimension) {
  // Work-group z is capped at the dispatch limit and the kernel loops over the rest; the limit is
  // lowered to 3 so that 20 batches (and a tail of 2) take that path.
  test::DeviceGroupLimit limit(provider(), 3);
  auto r = on("MatMul").random({20, 5, 3}, -1, 1).random({20, 3, 7}, -1, 1).check(tol_for(3), 1e-5);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceMatMul, GemmTransposesAlphaBetaAndCBroadcast) {
  const int64_t M = 37, K = 21, N = 70;
  const std::vector<Shape> cs = {{}, {N}, {1, N}, {M, 1}, {M, N}, {1}, {1, 1}};
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1})
      for (size_t ci = 0; ci <= cs.size(); ++ci) {
        auto o = on("Gemm");
        o.attr("transA", ta).attr("transB", tb).attr("alpha", 0.75f).attr("beta", -1.5f);
        o.random(ta ? Shape{K, M} : Shape{M, K}, -1, 1);
        o.random(tb ? Shape{N, K} : Shape{K, N}, -1, 1);
        if (ci < cs.size()) o.random(cs[ci], -1, 1);  // the last case has no C
        auto r = o.check(tol_for(K), 1e-5);
        EXPECT_EQ(r.provider, provider()) << ta << tb << ci;
      }
}

TEST_P(DeviceMatMul, GemmDefaultsAndTinyShapes) {
  auto r = on("Gemm", 11)
               .random({1, 512}, -1, 1)
               .random({512, 10}, -1, 1)
               .random({10})
               .check(tol_for(512), 1e-5);
  EXPECT_EQ(r.provider, provider());
  r = on("Gemm").attr("transB", int64_t{1}).random({1, 1}).random({1, 1}).check();
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceMatMul, GemmFusedActivations) {
  struct Act {
    const char* name;
    std::vector<float> params;
  };
  const std::vector<Act> acts = {{"", {}},
                                 {"Relu", {}},
                                 {"LeakyRelu", {0.1f}},
                                 {"Clip", {-0.5f, 0.5f}},
                                 {"Sigmoid", {}},
                                 {"Tanh", {}},
                                 {"HardSigmoid", {0.2f, 0.5f}},
                                 {"HardSwish", {}},
                                 {"Silu", {}},
                                 {"Gelu", {}},
                                 {"GeluTanh", {}}};
  for (const Act& a : acts) {
    auto g = on("FusedGemm", 1, "ai.polyinfer");
    g.attr("transB", int64_t{1}).attr("alpha", 1.25f);
    if (*a.name) g.attr("activation", std::string(a.name)).attr("activation_params", a.params);
    // Gelu's erf is a polynomial on Vulkan (|error| <= 1.5e-7), the built-in erf on OpenCL and
    // libm's on the CPU.
    auto r = g.random({19, 40}, -1, 1)
                 .random({33, 40}, -1, 1)
                 .random({33}, -1, 1)
                 .check(tol_for(40), 1e-5);
    EXPECT_EQ(r.provider, provider()) << a.name;
    auto m = on("FusedMatMul", 1, "ai.polyinfer");
    if (*a.name) m.attr("activation", std::string(a.name)).attr("activation_params", a.params);
    r = m.random({2, 19, 40}, -1, 1)
            .random({40, 33}, -1, 1)
            .random({33}, -1, 1)
            .check(tol_for(40), 1e-5);
    EXPECT_EQ(r.provider, provider()) << a.name;
  }
  // FusedMatMul without its bias, and with a 1-D B (the bias then runs along M).
  auto r = on("FusedMatMul", 1, "ai.polyinfer")
               .random({5, 40}, -1, 1)
               .random({40, 7}, -1, 1)
               .check(tol_for(40), 1e-5);
  EXPECT_EQ(r.provider, provider());
  r = on("FusedMatMul", 1, "ai.polyinfer")
          .random({3, 5, 40}, -1, 1)
          .random({40}, -1, 1)
          .random({5}, -1, 1)
          .check(tol_for(40), 1e-5);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceMatMul, RefusalsFallBackWithTheReason) {
  // Integer operands and rank 7: placed on cpu, with the reason in the report.
  auto r = OracleOp("MatMul", 13)
               .providers({provider(), "cpu"})
               .input(Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4}))
               .input(Tensor::from_vector<int32_t>({2, 2}, {5, 6, 7, 8}))
               .check();
  EXPECT_EQ(r.provider, "cpu");
  r = OracleOp("MatMul", 13)
          .providers({provider(), "cpu"})
          .random({2, 1, 1, 1, 1, 3, 4})
          .random({4, 2})
          .check();
  EXPECT_EQ(r.provider, "cpu");
  // Rank 6 whose batch {2, 2, 3, 3} alternates broadcast dimensions: 4 walks, one too many.
  r = OracleOp("MatMul", 13)
          .providers({provider(), "cpu"})
          .random({2, 1, 3, 1, 5, 7})
          .random({1, 2, 1, 3, 7, 4})
          .check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, "cpu");
  try {
    on("Gemm").random({3, 4, 1}).random({4, 2}).check();
    FAIL() << "a rank-3 Gemm operand ran on " << provider() << " alone";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 3"), std::string::npos) << e.what();
  }
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceMatMul);

}  // namespace
}  // namespace polyinfer
