// MatMul, Gemm and ai.polyinfer FusedMatMul / FusedGemm with constant weights on the packed
// kernel (providers/cpu/fast/matmul_packed.cpp), against the reference kernels (`cpu-ref`),
// with each register tile this CPU runs (AVX2's, and AVX-512's where it has it), and what the
// kernel leaves to oneDNN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "gemm_tiles.h"
#include "model_builder.h"
#include "polyinfer/session.h"
#include "providers/cpu/fast/activation_pass.h"
#include "providers/cpu/fast/avx2_util.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;
using test::random_values;

struct Case {
  const char* name;
  Shape a, b;        // B is a constant initializer
  bool fused, bias;  // FusedMatMul (with its activation) or MatMul
  const char* activation;
  std::vector<float> params;
  // Gemm (FusedGemm when `fused`) instead of MatMul: B is [N, K] under trans_b; C has c_shape
  // ([N] when empty).
  bool gemm = false, trans_b = false;
  float alpha = 1.f, beta = 1.f;
  Shape c_shape = {};
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string model(const Case& c) {
  ModelBuilder m(17);
  auto* op = m.proto().add_opset_import();
  op->set_domain("ai.polyinfer");
  op->set_version(1);
  m.input("a", c.a).output("y", {});
  m.initializer("b", c.b, random_values(shape_numel(c.b), 9));
  std::vector<std::string> ins = {"a", "b"};
  if (c.bias) {
    const Shape cs = c.c_shape.empty() ? Shape{c.b[c.trans_b ? 0 : 1]} : c.c_shape;
    m.initializer("c", cs, random_values(shape_numel(cs), 10));
    ins.push_back("c");
  }
  const std::string kind = c.gemm ? "Gemm" : "MatMul";
  m.node(c.fused ? "Fused" + kind : kind, ins, {"y"}, "mm");
  if (c.fused) test::last_node(m)->set_domain("ai.polyinfer");
  if (c.gemm) {
    test::set_int(test::last_node(m), "transB", c.trans_b ? 1 : 0);
    test::set_float(test::last_node(m), "alpha", c.alpha);
    test::set_float(test::last_node(m), "beta", c.beta);
  }
  test::set_activation(test::last_node(m), "activation", c.activation, c.params);
  return m.bytes();
}

// Runs the case on `cpu` (with `fast`'s CPU options) and `cpu-ref`; returns the implementation
// `cpu` picked and checks the outputs agree.
std::string run_and_compare(const Case& c, int threads, SessionOptions fast = {}) {
  const std::string bytes = model(c);
  SessionOptions ref;
  fast.optimization_level = ref.optimization_level = 0;
  fast.threads = ref.threads = threads;
  ref.providers = {"cpu-ref"};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), fast);
  Session r = Session::load_bytes(bytes.data(), bytes.size(), ref);
  std::map<std::string, Value> feed;
  feed["a"] = Tensor::from_vector<float>(c.a, random_values(shape_numel(c.a), 1));
  const Tensor got = s.run(feed)[0].tensor(), want = r.run(feed)[0].tensor();
  EXPECT_EQ(got.shape(), want.shape());
  if (got.shape() == want.shape()) {
    // Sums of up to 4500 products of values in [-1, 1] in another order.
    for (int64_t i = 0; i < got.numel(); ++i)
      EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i],
                  1e-4f * (1.f + std::fabs(want.data<float>()[i])))
          << "at flat index " << i << ", " << threads << " threads";
  }
  return s.placement().nodes.at(0).impl;
}

bool packed(const std::string& impl) { return impl.find("-packed") != std::string::npos; }

class PackedMatMulTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!fast::avx2::supported()) GTEST_SKIP() << "the packed MatMul needs AVX2 and FMA";
  }
};

TEST_P(PackedMatMulTest, MatchesReference) {
  for (const test::Tile& tile : test::gemm_tiles()) {
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(tile.impl("packed") + ", " + std::to_string(threads) + " threads");
      EXPECT_EQ(run_and_compare(GetParam(), threads, tile.session()), tile.impl("packed"));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PackedMatMulTest,
    ::testing::Values(
        // Leading dimensions flattened into rows; 48 columns = three panels.
        Case{"rows_3d", {2, 13, 64}, {64, 48}, false, false, "", {}},
        // A 1-D A: one row, and Y loses that dimension.
        Case{"vector_a", {40}, {40, 16}, false, false, "", {}},
        // 24 columns: a panel and a half (AVX2) or three quarters of one (AVX-512); bias and
        // ReLU in registers.
        Case{"half_panel_bias_relu", {7, 33}, {33, 24}, true, true, "Relu", {}},
        // 128 rows (BERT-base's sequence): 22 tiles, 18 of 6 rows and 4 of 5 (AVX-512: 16 of 8).
        Case{"rows_128", {128, 40}, {40, 16}, true, true, "", {}},
        // 45 rows: AVX-512's tiles of up to 8 as 3 of 8 and 3 of 7; 96 columns = 3 32-wide
        // panels, 6 16-wide ones.
        Case{"rows_45_panels_3", {45, 19}, {19, 96}, true, true, "Relu", {}},
        // 400 rows: several row blocks (and row blocks per thread).
        Case{"row_blocks_clip", {400, 20}, {20, 32}, true, true, "Clip", {-0.5f, 0.5f}},
        // K = 4500: two K blocks, the second continuing the sums left in Y; 8 columns.
        Case{"k_blocks_leaky", {5, 4500}, {4500, 8}, true, false, "LeakyRelu", {0.1f}},
        // GELU in registers: K = 200 spreads the sums to about +-5, so lanes below -3 take the
        // exact formula.
        Case{"gelu", {9, 200}, {200, 40}, true, true, "Gelu", {}},
        // The exp-based and piecewise epilogues (EfficientNet's SiLU, MobileNetV3's hard ones);
        // a 1-D A runs the one-row path, whose epilogue dispatches at run time.
        Case{"silu", {9, 200}, {200, 40}, true, true, "Silu", {}},
        Case{"sigmoid", {13, 50}, {50, 24}, true, false, "Sigmoid", {}},
        Case{"hardswish", {7, 33}, {33, 24}, true, true, "HardSwish", {}},
        Case{"hardsigmoid_one_row", {40}, {40, 16}, true, false, "HardSigmoid", {0.2f, 0.5f}},
        // A classifier's last layer: one row, B as [N, K] (transposed while packing), 1000
        // columns = 62.5 16-wide panels (31.25 32-wide) taken 64 columns at a time (one_row),
        // alpha and beta folded in.
        Case{"gemm_one_row_trans_b",
             {1, 300},
             {1000, 300},
             false,
             true,
             "",
             {},
             true,
             true,
             0.5f,
             2.f},
        // Gemm with B as [K, N], C as [1, N], and a ReLU (FusedGemm).
        Case{"fused_gemm_relu",
             {11, 70},
             {70, 40},
             true,
             true,
             "Relu",
             {},
             true,
             false,
             1.f,
             1.f,
             {1, 40}},
        // One row, 56 columns (the last panel half full), no C.
        Case{"gemm_one_row_no_c", {1, 64}, {56, 64}, false, false, "", {}, true, true}),
    [](const auto& info) { return std::string(info.param.name); });

// What the packed kernel leaves to oneDNN: activations it does not apply in registers,
// column counts that are not multiples of 8 on the AVX2 tile, and, switched off, everything.
TEST(PackedMatMulSelection, DeclinesWhatItDoesNotCover) {
  if (!fast::avx2::supported()) GTEST_SKIP() << "the packed MatMul needs AVX2 and FMA";
  EXPECT_FALSE(packed(run_and_compare(Case{"tanh", {6, 32}, {32, 16}, true, true, "Tanh", {}}, 1)));
  SessionOptions avx2;
  avx2.cpu.gemm_tile = GemmTile::Avx2;
  EXPECT_FALSE(
      packed(run_and_compare(Case{"n12", {6, 32}, {32, 12}, false, false, "", {}}, 1, avx2)));
  // A C of N values that is not a per-column bias: [N, 1] broadcasts along the rows.
  EXPECT_FALSE(packed(run_and_compare(
      Case{"c_column", {16, 32}, {32, 16}, false, true, "", {}, true, false, 1.f, 1.f, {16, 1}},
      1)));
  SessionOptions off;
  off.cpu.kernels["packed_matmul"] = KernelSwitch::Off;
  EXPECT_FALSE(
      packed(run_and_compare(Case{"off", {6, 32}, {32, 16}, false, false, "", {}}, 1, off)));
}

// Column counts that are not multiples of 8 (a 10-class head, 1001 ImageNet classes, 3 and 1):
// packed on the zmm tiles, whose last panel stores under a mask, against the reference; left to
// oneDNN on the AVX2 tile.
TEST(PackedMatMulSelection, AnyColumnCountOnTheZmmTiles) {
  if (!fast::avx2::supported()) GTEST_SKIP() << "the packed MatMul needs AVX2 and FMA";
  for (const Case& c : {Case{"head10_gemm", {1, 64}, {10, 64}, false, true, "", {}, true, true},
                        Case{"n1001_rows", {5, 40}, {40, 1001}, true, true, "Relu", {}},
                        Case{"n3_rows_200", {200, 24}, {24, 3}, true, true, "", {}},
                        Case{"n1_vector", {33}, {33, 1}, false, false, "", {}}}) {
    for (const test::Tile& tile : test::gemm_tiles()) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(c.name) + " " + tile.isa + " " + std::to_string(threads));
        const std::string impl = run_and_compare(c, threads, tile.session());
        if (std::string(tile.isa) == "avx2") EXPECT_FALSE(packed(impl)) << impl;
        else
          EXPECT_EQ(impl, tile.impl("packed"));
      }
    }
  }
}

// With the packed kernel off, oneDNN's matmul takes FusedMatMul; SiLU and Sigmoid then run as
// the AVX-512 pass after it where the CPU has one (onednn::split_activation), else as oneDNN
// post-ops: either way the reference's values, at 1 and 3 threads (300 x 40 outputs, enough
// for the pass to split).
TEST(OnednnMatMulActivation, SiluAndSigmoidMatchTheReference) {
  SessionOptions off;
  off.cpu.kernels["packed_matmul"] = KernelSwitch::Off;
  for (const char* act : {"Silu", "Sigmoid"})
    for (int threads : {1, 3}) {
      SCOPED_TRACE(std::string(act) + ", " + std::to_string(threads) + " threads");
      const std::string impl =
          run_and_compare(Case{"onednn", {300, 50}, {50, 40}, true, true, act, {}}, threads, off);
      EXPECT_EQ(impl.rfind("onednn:", 0), 0u) << impl;
      const char* pass =
          fast::activation_pass(std::string(act) == "Silu" ? ActKind::Silu : ActKind::Sigmoid);
      EXPECT_EQ(impl.find(" + fast:avx512-") != std::string::npos, pass != nullptr) << impl;
    }
}

// One row's sums are formed in blocks of K (one_row): sequentially in float32, 4000 products of
// 1 and 0.1f drift by 3.8e-5 of the total (ResNet-50's 2048-deep classifier differed from ORT
// by 1.4e-4, against 5e-5 on oneDNN); in blocks of 128, by 1.3e-6.
TEST(PackedMatMulOneRow, SumsInBlocksStayCloseToTheExactDot) {
  if (!fast::avx2::supported()) GTEST_SKIP() << "the packed MatMul needs AVX2 and FMA";
  const int64_t K = 4000, N = 16;
  ModelBuilder m(17);
  m.input("a", {1, K}).output("y", {});
  m.initializer("b", {K, N}, std::vector<float>(static_cast<size_t>(K * N), 0.1f));
  m.node("MatMul", {"a", "b"}, {"y"}, "mm");
  const std::string bytes = m.bytes();
  for (const test::Tile& tile : test::gemm_tiles()) {
    SessionOptions o = tile.session();
    o.optimization_level = 0;
    Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
    ASSERT_EQ(s.placement().nodes.at(0).impl, tile.impl("packed"));
    std::map<std::string, Value> feed;
    feed["a"] = Tensor::from_vector<float>({1, K}, std::vector<float>(static_cast<size_t>(K), 1.f));
    const Tensor y = s.run(feed)[0].tensor();
    const double exact = static_cast<double>(K) * static_cast<double>(0.1f);
    for (int64_t j = 0; j < N; ++j)
      EXPECT_NEAR(y.data<float>()[j], exact, 1e-5 * exact) << tile.isa << ", column " << j;
  }
}

}  // namespace
}  // namespace polyinfer
