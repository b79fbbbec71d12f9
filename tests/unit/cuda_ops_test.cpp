// The CUDA kernels against the CPU reference kernels (cpu-ref), through the oracle harness:
// element-wise ops with broadcasting and grid tails, Softmax/LogSoftmax along every axis layout,
// MatMul batching (folded, strided, general broadcast), Gemm's transposes and C shapes, and the
// fused cuBLASLt epilogues. Each skips with the probe's reason without a usable GPU.
#include "cuda_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

OracleOp on_cuda(const std::string& op, int opset, const std::string& domain = "") {
  return std::move(OracleOp(op, opset, domain).providers({"cuda"}));
}

void expect_on_cuda(const test::OracleResult& r, const std::string& what) {
  EXPECT_EQ(r.provider, "cuda") << what;
  EXPECT_EQ(r.impl.rfind("cuda:", 0), 0u) << what << ": " << r.impl;
}

TEST(CudaElementwise, BinarySameShapeAndBroadcast) {
  PI_SKIP_WITHOUT_CUDA();
  const std::vector<std::pair<Shape, Shape>> cases = {{{1}, {1}},
                                                      {{257}, {257}},
                                                      {{3, 5, 7}, {3, 5, 7}},
                                                      {{2, 3, 4, 5}, {5}},
                                                      {{3, 1, 5}, {1, 4, 1}},
                                                      {{}, {3, 3}},
                                                      {{33, 1}, {1, 65}},
                                                      {{2, 1, 3, 1, 5, 1}, {1, 4, 1, 6, 1, 7}},
                                                      {{4, 1, 1}, {4, 3, 257}}};
  for (const std::string op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"})
    for (const auto& [a, b] : cases) {
      auto o = on_cuda(op, 14);
      if (op == "Div") o.random(a).random(b, 0.5f, 3.0f);
      else if (op == "Pow")
        o.random(a, 0.1f, 3.0f).random(b, -2.0f, 2.0f);
      else
        o.random(a).random(b);
      expect_on_cuda(o.check(1e-6, 1e-5), op + shape_str(a) + shape_str(b));
    }
}

TEST(CudaElementwise, Unary) {
  PI_SKIP_WITHOUT_CUDA();
  struct Case {
    const char* op;
    float lo, hi;
  };
  for (const Case c :
       {Case{"Relu", -3, 3}, Case{"LeakyRelu", -3, 3}, Case{"Sigmoid", -30, 30},
        Case{"Tanh", -30, 30}, Case{"Exp", -20, 20}, Case{"Log", 0.01f, 50}, Case{"Neg", -3, 3},
        Case{"Abs", -3, 3}, Case{"Sqrt", 0, 50}, Case{"Reciprocal", 0.1f, 9}, Case{"Erf", -4, 4},
        Case{"HardSigmoid", -6, 6}, Case{"HardSwish", -6, 6}})
    for (const Shape& s : std::vector<Shape>{{1}, {255}, {257}, {3, 17, 33}, {0, 4}}) {
      auto o = on_cuda(c.op, 14).random(s, c.lo, c.hi);
      if (std::string(c.op) == "LeakyRelu") o.attr("alpha", 0.2f);
      if (std::string(c.op) == "HardSigmoid") o.attr("alpha", 0.3f).attr("beta", 0.4f);
      expect_on_cuda(o.check(1e-6, 1e-5), c.op + shape_str(s));
    }
}

TEST(CudaElementwise, Gelu) {
  PI_SKIP_WITHOUT_CUDA();
  for (const std::string mode : {"none", "tanh"}) {
    expect_on_cuda(on_cuda("Gelu", 20).attr("approximate", mode).random({3, 257}, -6, 6).check(),
                   "Gelu " + mode);
    // The optimizer's Gelu for older models, checked against ONNX Gelu.
    expect_on_cuda(on_cuda("Gelu", 1, "ai.polyinfer")
                       .attr("approximate", mode)
                       .reference_as("Gelu", 20)
                       .random({3, 257}, -6, 6)
                       .check(),
                   "ai.polyinfer Gelu " + mode);
  }
}

TEST(CudaElementwise, ManyElementsUseTheGridStrideLoop) {
  PI_SKIP_WITHOUT_CUDA();
  // 2^24 + 3 elements broadcast against one: 65537 blocks of 256 and a 3-element tail.
  expect_on_cuda(on_cuda("Add", 14).random({(int64_t{1} << 24) + 3}).random({1}).check(),
                 "Add 2^24+3");
}

TEST(CudaElementwise, RefusedDtypeFallsBackWithTheReason) {
  PI_SKIP_WITHOUT_CUDA();
  auto r = OracleOp("Add", 14)
               .providers({"cuda", "cpu"})
               .input(Tensor::from_vector<int64_t>({3}, {1, 2, 3}))
               .input(Tensor::from_vector<int64_t>({3}, {4, 5, 6}))
               .check();
  EXPECT_EQ(r.provider, "cpu");
}

TEST(CudaSoftmax, EveryAxisLayout) {
  PI_SKIP_WITHOUT_CUDA();
  for (const std::string op : {"Softmax", "LogSoftmax"}) {
    for (const Shape& s : std::vector<Shape>{{1, 1}, {7, 1003}, {33, 4097}, {2, 3, 5}})
      expect_on_cuda(on_cuda(op, 13).attr("axis", int64_t{-1}).random(s, -10, 10).check(1e-6, 1e-5),
                     op + shape_str(s));
    // inner > 1: the column kernel.
    expect_on_cuda(
        on_cuda(op, 13).attr("axis", int64_t{1}).random({4, 37, 9}, -10, 10).check(1e-6, 1e-5),
        op + " axis 1");
    expect_on_cuda(
        on_cuda(op, 13).attr("axis", int64_t{0}).random({65, 300}, -10, 10).check(1e-6, 1e-5),
        op + " axis 0");
    // opset 11: flattened at axis 1.
    expect_on_cuda(on_cuda(op, 11).random({3, 4, 5}, -10, 10).check(1e-6, 1e-5), op + " opset 11");
  }
}

TEST(CudaMatMul, Batching) {
  PI_SKIP_WITHOUT_CUDA();
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{1, 1}, {1, 1}},
      {{7, 13}, {13, 5}},
      {{64, 300}, {300, 129}},
      {{2, 3, 7, 13}, {13, 5}},        // B one matrix: folded into rows
      {{4, 7, 13}, {4, 13, 5}},        // both full batch: strided
      {{7, 13}, {3, 13, 5}},           // A shared: stride 0
      {{2, 1, 7, 13}, {1, 3, 13, 5}},  // general broadcast: per-matrix calls
      {{13}, {13, 5}},
      {{4, 7, 13}, {13}},
      {{3, 7, 0}, {3, 0, 5}}};
  for (const auto& [a, b] : cases)
    expect_on_cuda(on_cuda("MatMul", 13).random(a).random(b).check(1e-4, 1e-4),
                   "MatMul" + shape_str(a) + shape_str(b));
}

TEST(CudaGemm, TransposesAndCShapes) {
  PI_SKIP_WITHOUT_CUDA();
  const int64_t M = 17, K = 33, N = 65;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (const Shape& c : std::vector<Shape>{{}, {N}, {1, N}, {M, 1}, {M, N}, {1}}) {
        auto o = on_cuda("Gemm", 13)
                     .attr("transA", int64_t{ta})
                     .attr("transB", int64_t{tb})
                     .attr("alpha", 0.75f)
                     .attr("beta", c == Shape{N} ? 1.0f : 1.5f);
        o.random(ta ? Shape{K, M} : Shape{M, K}).random(tb ? Shape{N, K} : Shape{K, N});
        if (!c.empty()) o.random(c);
        expect_on_cuda(o.check(1e-4, 1e-4), "Gemm ta=" + std::to_string(ta) +
                                                " tb=" + std::to_string(tb) + " C" + shape_str(c));
      }
}

// Every activation the optimizer fuses: Relu and GeluTanh in cuBLASLt's epilogue, the others
// by the element-wise kernel after the product; with and without a bias, and with a C that is
// not a row (FusedGemm: SGEMM path).
TEST(CudaGemm, FusedActivations) {
  PI_SKIP_WITHOUT_CUDA();
  struct Act {
    const char* name;
    std::vector<float> params;
  };
  for (const Act& act :
       {Act{"", {}}, Act{"Relu", {}}, Act{"GeluTanh", {}}, Act{"Gelu", {}},
        Act{"LeakyRelu", {0.1f}}, Act{"Clip", {-0.5f, 1.5f}}, Act{"Sigmoid", {}},
        Act{"HardSigmoid", {0.3f, 0.4f}}, Act{"HardSwish", {}}, Act{"Tanh", {}}, Act{"Silu", {}}}) {
    const std::string what = std::string("activation '") + act.name + "'";
    auto with_act = [&](OracleOp o) {
      if (*act.name) o.attr("activation", std::string(act.name));
      if (!act.params.empty()) o.attr("activation_params", act.params);
      return o;
    };
    expect_on_cuda(with_act(on_cuda("FusedGemm", 1, "ai.polyinfer").attr("transB", int64_t{1}))
                       .random({9, 40})
                       .random({70, 40})
                       .random({70})
                       .check(1e-4, 1e-4),
                   "FusedGemm row bias, " + what);
    expect_on_cuda(with_act(on_cuda("FusedGemm", 1, "ai.polyinfer").attr("beta", 0.5f))
                       .random({9, 40})
                       .random({40, 70})
                       .random({9, 70})
                       .check(1e-4, 1e-4),
                   "FusedGemm full C, " + what);
    expect_on_cuda(with_act(on_cuda("FusedGemm", 1, "ai.polyinfer"))
                       .random({9, 40})
                       .random({40, 70})
                       .check(1e-4, 1e-4),
                   "FusedGemm no C, " + what);
    expect_on_cuda(with_act(on_cuda("FusedMatMul", 1, "ai.polyinfer"))
                       .random({2, 5, 40})
                       .random({40, 70})
                       .random({70})
                       .check(1e-4, 1e-4),
                   "FusedMatMul, " + what);
    expect_on_cuda(with_act(on_cuda("FusedMatMul", 1, "ai.polyinfer"))
                       .random({3, 40})
                       .random({40, 70})
                       .check(1e-4, 1e-4),
                   "FusedMatMul no bias, " + what);
  }
}

TEST(CudaGemm, FusedMatMulWithABatchedBFallsBack) {
  PI_SKIP_WITHOUT_CUDA();
  auto r = OracleOp("FusedMatMul", 1, "ai.polyinfer")
               .providers({"cuda", "cpu"})
               .random({2, 4, 8})
               .random({2, 8, 3})
               .check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, "cpu");
}

}  // namespace
}  // namespace polyinfer
