// ai.polyinfer NhwcPointwiseDepthwiseConv: the optimizer's fusion of a 1x1 convolution into the
// 3x3 depthwise convolution that reads it (opt/pointwise_depthwise_fusion.cpp), the fused AVX2
// kernel (providers/cpu/fast/conv_pointwise_depthwise.cpp) and the split form that runs the two
// convolutions on their own kernels (providers/cpu/reference/pointwise_depthwise.cpp), each against
// the reference kernels (`cpu-ref`).
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

bool have_avx2() { return fast::avx2::supported(); }

using test::set_activation;
using test::set_ints;

struct Case {
  const char* name;
  Shape x;  // [N, H, W, C]
  int64_t e;
  int64_t stride;
  std::vector<int64_t> pads;  // top, left, bottom, right
  bool bias1, bias2;
  const char* act1;
  std::vector<float> params1;
  const char* act2;
  std::vector<float> params2;
  bool fusable = true;  // whether the fused AVX2 kernel takes it (else the split form runs)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The activation pass the fused kernel runs for the activation named `act` on this CPU (SiLU and
// Sigmoid where it has AVX-512), or null where the kernel's own epilogue applies it.
const char* pass_for(const std::string& act) {
  if (act == "Silu") return fast::activation_pass(ActKind::Silu);
  if (act == "Sigmoid") return fast::activation_pass(ActKind::Sigmoid);
  return nullptr;
}

// The impl the fused kernel reports for `c` on GEMM tile `tile`: its name, then each pass it
// runs.
std::string fused_impl(const Case& c, const test::Tile& tile) {
  std::string s = tile.impl("pointwise-depthwise");
  for (const char* act : {c.act1, c.act2})
    if (const char* pass = pass_for(act)) s += std::string(" + ") + pass;
  return s;
}

std::string fused_model(const Case& c, Shape* y_shape) {
  const int64_t C = c.x[3], E = c.e, s = c.stride;
  ModelBuilder m(17);
  auto* op = m.proto().add_opset_import();
  op->set_domain("ai.polyinfer");
  op->set_version(1);
  m.input("x", c.x).output("y", {});
  m.initializer("w1", {E, C, 1, 1}, random_values(E * C, 7));
  m.initializer("w2", {E, 1, 3, 3}, random_values(E * 9, 8));
  if (c.bias1) m.initializer("b1", {E}, random_values(E, 9));
  if (c.bias2) m.initializer("b2", {E}, random_values(E, 10));
  std::vector<std::string> ins = {"x", "w1", c.bias1 ? "b1" : "", "w2"};
  if (c.bias2) ins.push_back("b2");
  m.node("NhwcPointwiseDepthwiseConv", ins, {"y"}, "fused");
  auto* n = test::last_node(m);
  n->set_domain("ai.polyinfer");
  set_ints(n, "kernel_shape", {3, 3});
  set_ints(n, "strides", {s, s});
  set_ints(n, "pads", c.pads);
  auto* g = n->add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(E);
  set_activation(n, "pointwise_activation", c.act1, c.params1);
  set_activation(n, "activation", c.act2, c.params2);
  const int64_t oh = (c.x[1] + c.pads[0] + c.pads[2] - 3) / s + 1;
  const int64_t ow = (c.x[2] + c.pads[1] + c.pads[3] - 3) / s + 1;
  *y_shape = {c.x[0], oh, ow, E};
  return m.bytes();
}

Tensor run(const std::string& bytes, const std::vector<std::string>& providers, int threads,
           const Tensor& x, std::string* impl, SessionOptions o = {}) {
  o.optimization_level = 0;
  o.threads = threads;
  o.providers = providers;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  for (const auto& n : s.placement().nodes)
    if (n.node == "fused") *impl = n.impl;
  return s.run({{"x", x}})[0].tensor();
}

class PointwiseDepthwiseKernel : public ::testing::TestWithParam<Case> {};

TEST_P(PointwiseDepthwiseKernel, FusedAndSplitMatchTheReference) {
  const Case& c = GetParam();
  Shape y_shape;
  const std::string bytes = fused_model(c, &y_shape);
  const Tensor x = Tensor::from_vector<float>(c.x, random_values(shape_numel(c.x), 1));
  std::string ref_impl;
  const Tensor want = run(bytes, {"cpu-ref"}, 1, x, &ref_impl);
  ASSERT_EQ(want.shape(), y_shape);
  EXPECT_EQ(ref_impl, "reference + reference");
  // The fused kernel where the CPU has AVX2, its expansion on each GEMM tile (the zmm one
  // where the CPU has AVX-512), then the split form on the fast kernels.
  std::vector<std::pair<bool, const test::Tile*>> variants;
  const std::vector<test::Tile> tiles = test::gemm_tiles();
  if (have_avx2())
    for (const test::Tile& tile : tiles) variants.push_back({true, &tile});
  variants.push_back({false, &tiles.back()});
  for (const auto& [fused, tile] : variants) {
    SessionOptions o = tile->session();
    if (!fused) o.cpu.kernels["pointwise_depthwise"] = KernelSwitch::Off;
    const std::string impl = fused && c.fusable ? fused_impl(c, *tile) : "";
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(std::string("pointwise_depthwise=") + (fused ? "auto" : "off") + ", " +
                   tile->isa + " tile, threads " + std::to_string(threads));
      std::string ran;
      const Tensor got = run(bytes, {"cpu"}, threads, x, &ran, o);
      if (!impl.empty()) EXPECT_EQ(ran, impl);
      else
        EXPECT_NE(ran.find(" + "), std::string::npos) << ran;
      ASSERT_EQ(got.shape(), y_shape);
      // Sums of C products, then of 9: float rounding in another order.
      for (int64_t i = 0; i < got.numel(); ++i)
        ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i],
                    1e-4f * (1.f + std::fabs(want.data<float>()[i])))
            << "at flat index " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PointwiseDepthwiseKernel,
    ::testing::Values(
        // MobileNetV2's form: ReLU6 on both, stride 1 and 2, pads 1.
        Case{"relu6_stride1",
             {1, 20, 13, 16},
             48,
             1,
             {1, 1, 1, 1},
             true,
             true,
             "Clip",
             {0, 6},
             "Clip",
             {0, 6}},
        Case{"relu6_stride2",
             {1, 21, 17, 24},
             32,
             2,
             {1, 1, 1, 1},
             true,
             true,
             "Clip",
             {0, 6},
             "Clip",
             {0, 6}},
        // 40 channels: two blocks of 16 and a half one; 12 input channels; two images.
        Case{"tails_two_images",
             {2, 9, 11, 12},
             40,
             1,
             {1, 1, 1, 1},
             true,
             false,
             "Relu",
             {},
             "",
             {}},
        // No padding, asymmetric padding, a stride that skips the last column.
        Case{"no_pad", {1, 8, 9, 8}, 16, 1, {0, 0, 0, 0}, false, true, "", {}, "Relu", {}},
        Case{"asym_pads",
             {1, 10, 12, 8},
             24,
             2,
             {2, 0, 1, 2},
             true,
             true,
             "LeakyRelu",
             {0.1f},
             "LeakyRelu",
             {0.2f}},
        // Few output rows: the threads split the channel blocks instead of the rows.
        Case{"few_rows_many_channels",
             {1, 4, 30, 16},
             96,
             1,
             {1, 1, 1, 1},
             true,
             true,
             "Clip",
             {0, 6},
             "Clip",
             {-1, 1}},
        // The same with passes: each thread's channel range is part of an output row.
        Case{"few_rows_sigmoid_silu",
             {1, 4, 30, 16},
             96,
             1,
             {1, 1, 1, 1},
             true,
             true,
             "Sigmoid",
             {},
             "Silu",
             {}},
        // GELU after both convolutions (the pointwise one in the GEMM tile, the depthwise one in
        // its row loop).
        Case{"gelu", {1, 8, 9, 64}, 32, 1, {1, 1, 1, 1}, true, true, "Gelu", {}, "Gelu", {}},
        // EfficientNet's SiLU, MobileNetV3's hard activations, a plain sigmoid (with the
        // activation pass where the CPU has it: the padded borders of the expanded rows must
        // stay zero, not Sigmoid(0)).
        Case{"silu_both", {1, 12, 11, 16}, 40, 2, {1, 1, 1, 1}, true, true, "Silu", {}, "Silu", {}},
        Case{"silu_hardswish",
             {1, 8, 9, 16},
             32,
             2,
             {1, 1, 1, 1},
             true,
             true,
             "Silu",
             {},
             "HardSwish",
             {}},
        Case{"sigmoid_hardsigmoid",
             {1, 7, 6, 8},
             16,
             1,
             {1, 1, 1, 1},
             true,
             false,
             "Sigmoid",
             {},
             "HardSigmoid",
             {0.2f, 0.5f}},
        // Stride 3: the fused kernel declines (its depthwise loop knows strides 1 and 2).
        Case{"stride3_runs_split",
             {1, 13, 14, 8},
             16,
             3,
             {1, 1, 1, 1},
             true,
             true,
             "Relu",
             {},
             "Relu",
             {},
             false}),
    [](const auto& info) { return std::string(info.param.name); });

// An inverted-residual block as a plain ONNX model: 1x1 → ReLU6 → 3x3 depthwise → ReLU6 → 1x1,
// plus the residual at stride 1. `hw` sets the image size.
std::string block_model(int64_t hw, int64_t stride) {
  const int64_t C = 16, E = 64;
  ModelBuilder m(13);
  m.input("x", {1, C, hw, hw}).output("y", {});
  m.initializer("w1", {E, C, 1, 1}, random_values(E * C, 3));
  m.initializer("b1", {E}, random_values(E, 4));
  m.initializer("w2", {E, 1, 3, 3}, random_values(E * 9, 5));
  m.initializer("b2", {E}, random_values(E, 6));
  m.initializer("w3", {C, E, 1, 1}, random_values(E * C, 7, -0.2f, 0.2f));
  m.initializer("lo", {}, {0.f});
  m.initializer("hi", {}, {6.f});
  m.node("Conv", {"x", "w1", "b1"}, {"t1"}, "expand");
  m.node("Clip", {"t1", "lo", "hi"}, {"t2"}, "relu6_a");
  m.node("Conv", {"t2", "w2", "b2"}, {"t3"}, "depthwise");
  auto* n = test::last_node(m);
  set_ints(n, "pads", {1, 1, 1, 1});
  set_ints(n, "strides", {stride, stride});
  auto* g = n->add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(E);
  m.node("Clip", {"t3", "lo", "hi"}, {"t4"}, "relu6_b");
  m.node("Conv", {"t4", "w3"}, {stride == 1 ? "t5" : "y"}, "project");
  if (stride == 1) m.node("Add", {"t5", "x"}, {"y"}, "residual");
  return m.bytes();
}

// The fusion at level 3: taken where the expanded tensor is large (64x64x64 floats: 1 MB),
// left alone where it is small; results unchanged either way.
TEST(PointwiseDepthwiseFusion, FusesLargeBlocksAndKeepsResults) {
  struct Want {
    int64_t hw, stride;
    bool fused;
  };
  for (const Want w : {Want{64, 1, true}, Want{65, 2, true}, Want{16, 1, false}}) {
    SCOPED_TRACE("image " + std::to_string(w.hw) + ", stride " + std::to_string(w.stride));
    const std::string bytes = block_model(w.hw, w.stride);
    const Shape xs = {1, 16, w.hw, w.hw};
    const Tensor x = Tensor::from_vector<float>(xs, random_values(shape_numel(xs), 2));
    SessionOptions ref, opt;
    ref.optimization_level = 0;
    ref.providers = {"cpu-ref"};
    opt.optimization_level = 3;
    Session a = Session::load_bytes(bytes.data(), bytes.size(), ref);
    Session b = Session::load_bytes(bytes.data(), bytes.size(), opt);
    int fused = 0;
    for (const auto& n : b.placement().nodes)
      fused += n.op == "ai.polyinfer.NhwcPointwiseDepthwiseConv";
    EXPECT_EQ(fused, w.fused ? 1 : 0);
    const Tensor want = a.run({{"x", x}})[0].tensor(), got = b.run({{"x", x}})[0].tensor();
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i],
                  1e-4f * (1.f + std::fabs(want.data<float>()[i])))
          << "at flat index " << i;
  }
}

}  // namespace
}  // namespace polyinfer
