// The oneDNN convolutions beyond 2-D against the reference kernels (`cpu-ref`): 3-D Conv and
// FusedConv (onednn/conv.cpp; those whose window leaves the depth alone run as 2-D over the
// depth slices), 1-D Conv, and the ConvTranspose forms of onednn/conv_transpose.cpp. Each case
// is a one-node model with constant weights; the test checks that oneDNN ran it and compares
// the outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "model_builder.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;
using test::random_values;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Runs `m` on cpu and cpu-ref at level 0 with random inputs of `inputs`' shapes; expects the
// cpu node's implementation to start with `impl` and the outputs to agree.
void expect_matches_reference(ModelBuilder& m,
                              const std::vector<std::pair<std::string, Shape>>& inputs,
                              const std::string& impl = "onednn", int threads = 1) {
  const std::string bytes = m.bytes();
  SessionOptions fast, ref;
  fast.optimization_level = ref.optimization_level = 0;
  fast.threads = ref.threads = threads;
  ref.providers = {"cpu-ref"};
  Session a = Session::load_bytes(bytes.data(), bytes.size(), fast);
  Session b = Session::load_bytes(bytes.data(), bytes.size(), ref);
  std::map<std::string, Value> feed;
  uint32_t seed = 1;
  for (const auto& [name, shape] : inputs)
    feed[name] = Tensor::from_vector<float>(shape, random_values(numel(shape), seed++));
  const Tensor ya = a.run(feed)[0].tensor(), yb = b.run(feed)[0].tensor();
  ASSERT_EQ(a.placement().nodes.size(), 1u);
  EXPECT_EQ(a.placement().nodes[0].impl.rfind(impl, 0), 0u) << a.placement().nodes[0].impl;
  ASSERT_EQ(ya.shape(), yb.shape());
  const float* pa = ya.data<float>();
  const float* pb = yb.data<float>();
  for (int64_t i = 0; i < ya.numel(); ++i)
    ASSERT_NEAR(pa[i], pb[i], 1e-4f * (1.f + std::fabs(pb[i]))) << "at flat index " << i;
}

struct ConvCase {
  const char* name;
  Shape x, w;
  std::vector<int64_t> strides = {}, pads = {}, dilations = {};
  int64_t group = 1;
  const char* activation = "";  // FusedConv's; "" is a plain Conv
  bool bias = true, z = false;  // z: FusedConv with a residual input of Y's shape
};

// Y's shape for explicit pads (or none).
Shape conv_out(const ConvCase& c) {
  const size_t r = c.x.size() - 2;
  Shape y{c.x[0], c.w[0]};
  for (size_t i = 0; i < r; ++i) {
    const int64_t s = c.strides.empty() ? 1 : c.strides[i];
    const int64_t d = c.dilations.empty() ? 1 : c.dilations[i];
    const int64_t p = c.pads.empty() ? 0 : c.pads[i] + c.pads[i + r];
    y.push_back((c.x[2 + i] + p - d * (c.w[2 + i] - 1) - 1) / s + 1);
  }
  return y;
}

class OnednnConvNdTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(OnednnConvNdTest, MatchesReference) {
  const ConvCase& c = GetParam();
  const bool fused = *c.activation || c.z;
  ModelBuilder m(17);
  if (fused) {
    auto* op = m.proto().add_opset_import();
    op->set_domain("ai.polyinfer");
    op->set_version(1);
  }
  m.input("x", c.x).output("y", {}).initializer("w", c.w, random_values(numel(c.w), 7));
  std::vector<std::string> ins{"x", "w"};
  if (c.bias || c.z) ins.push_back(c.bias ? "b" : "");
  if (c.bias) m.initializer("b", {c.w[0]}, random_values(c.w[0], 8));
  std::vector<std::pair<std::string, Shape>> feeds{{"x", c.x}};
  if (c.z) {
    m.input("z", conv_out(c));
    ins.push_back("z");
    feeds.emplace_back("z", conv_out(c));
  }
  m.node(fused ? "FusedConv" : "Conv", ins, {"y"}, "conv");
  auto* n = test::last_node(m);
  if (fused) {
    n->set_domain("ai.polyinfer");
    test::set_activation(n, "activation", c.activation, {});
  }
  if (!c.strides.empty()) test::set_ints(n, "strides", c.strides);
  if (!c.pads.empty()) test::set_ints(n, "pads", c.pads);
  if (!c.dilations.empty()) test::set_ints(n, "dilations", c.dilations);
  if (c.group != 1) test::set_int(n, "group", c.group);
  expect_matches_reference(m, feeds);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OnednnConvNdTest,
    ::testing::Values(
        // 3-D windows: oneDNN's 3-D convolution.
        ConvCase{"k3", {1, 4, 5, 6, 7}, {8, 4, 3, 3, 3}, {}, {1, 1, 1, 1, 1, 1}, {}},
        ConvCase{"batch2_strides", {2, 3, 7, 8, 9}, {5, 3, 3, 2, 3}, {2, 1, 2}, {1, 0, 1, 0, 1, 1}},
        ConvCase{"dilated", {1, 4, 7, 7, 7}, {6, 4, 2, 3, 3}, {}, {1, 1, 1, 1, 1, 1}, {2, 2, 1}},
        ConvCase{"grouped", {1, 12, 4, 6, 6}, {9, 4, 3, 3, 3}, {}, {1, 1, 1, 1, 1, 1}, {}, 3},
        ConvCase{"depthwise", {1, 8, 4, 6, 6}, {8, 1, 3, 3, 3}, {1, 2, 2}, {}, {}, 8},
        ConvCase{"no_bias", {1, 3, 4, 5, 5}, {4, 3, 2, 2, 2}, {}, {}, {}, 1, "", false},
        ConvCase{"pointwise_stride2", {1, 6, 5, 8, 8}, {7, 6, 1, 1, 1}, {2, 2, 2}},
        ConvCase{
            "fused_relu", {1, 4, 5, 6, 7}, {8, 4, 3, 3, 3}, {}, {1, 1, 1, 1, 1, 1}, {}, 1, "Relu"},
        ConvCase{"fused_sum_relu",
                 {1, 4, 5, 6, 7},
                 {8, 4, 3, 3, 3},
                 {},
                 {1, 1, 1, 1, 1, 1},
                 {},
                 1,
                 "Relu",
                 true,
                 true},
        // Depth-1 windows (RivaGAN's 1x11x11): 2-D over the depth slices where X is one image
        // or D is 1, else 3-D.
        ConvCase{"depth1_one_slice", {1, 3, 1, 20, 18}, {8, 3, 1, 5, 5}, {}, {0, 2, 2, 0, 2, 2}},
        ConvCase{"depth1_slices", {1, 3, 4, 12, 10}, {8, 3, 1, 3, 3}, {}, {0, 1, 1, 0, 1, 1}},
        ConvCase{"depth1_slices_strided",
                 {1, 4, 3, 11, 9},
                 {6, 2, 1, 3, 2},
                 {1, 2, 2},
                 {0, 1, 0, 0, 1, 1},
                 {1, 2, 1},
                 2},
        ConvCase{
            "depth1_batch2_one_slice", {2, 5, 1, 9, 9}, {7, 5, 1, 3, 3}, {}, {0, 1, 1, 0, 1, 1}},
        ConvCase{"depth1_batch2_slices", {2, 5, 3, 9, 9}, {7, 5, 1, 3, 3}, {}, {0, 1, 1, 0, 1, 1}},
        ConvCase{"depth1_pointwise_stride2", {1, 6, 3, 9, 8}, {7, 6, 1, 1, 1}, {1, 2, 2}},
        ConvCase{"depth1_depth_stride2", {1, 4, 5, 6, 6}, {4, 4, 1, 3, 3}, {2, 1, 1}},
        ConvCase{"depth1_depth_padded", {1, 4, 3, 6, 6}, {4, 4, 1, 3, 3}, {}, {1, 1, 1, 1, 1, 1}},
        ConvCase{"depth1_fused_relu",
                 {1, 32, 1, 16, 16},
                 {32, 32, 1, 11, 11},
                 {},
                 {0, 5, 5, 0, 5, 5},
                 {},
                 1,
                 "Relu"},
        ConvCase{"depth1_slices_fused_sum",
                 {1, 4, 3, 7, 7},
                 {4, 4, 1, 3, 3},
                 {},
                 {0, 1, 1, 0, 1, 1},
                 {},
                 1,
                 "Sigmoid",
                 true,
                 true},
        ConvCase{
            "depth1_k3x3_winograd", {1, 64, 2, 12, 12}, {64, 64, 1, 3, 3}, {}, {0, 1, 1, 0, 1, 1}},
        // Depth slices of width 1: over [1, H] too (onednn::conv_dims), the slices' strides
        // swapped with them.
        ConvCase{"depth1_width1_slices",
                 {1, 4, 3, 12, 1},
                 {6, 4, 1, 3, 1},
                 {1, 2, 1},
                 {0, 1, 0, 0, 1, 0},
                 {}},
        ConvCase{
            "depth1_width1_batch2", {2, 4, 1, 12, 1}, {6, 4, 1, 5, 1}, {}, {0, 2, 0, 0, 2, 0}, {}},
        // 1-D.
        ConvCase{"conv1d_k3", {1, 80, 50}, {96, 80, 3}, {}, {1, 1}},
        ConvCase{"conv1d_stride2", {2, 16, 41}, {24, 16, 3}, {2}, {1, 1}},
        ConvCase{"conv1d_stft", {1, 1, 1760}, {33, 1, 64}, {16}},
        ConvCase{"conv1d_depthwise", {1, 12, 30}, {12, 1, 5}, {}, {2, 2}, {}, 12},
        ConvCase{"conv1d_fused_relu", {1, 8, 30}, {16, 8, 3}, {}, {1, 1}, {2}, 1, "Relu"}),
    [](const auto& info) { return std::string(info.param.name); });

struct DeconvCase {
  const char* name;
  Shape x, w;  // W is [C, M/group, k...]
  std::vector<int64_t> strides = {}, pads = {}, output_padding = {};
  int64_t group = 1;
  bool bias = true;
};

class OnednnConvTransposeNdTest : public ::testing::TestWithParam<DeconvCase> {};

TEST_P(OnednnConvTransposeNdTest, MatchesReference) {
  const DeconvCase& c = GetParam();
  ModelBuilder m(17);
  m.input("x", c.x).output("y", {}).initializer("w", c.w, random_values(numel(c.w), 7));
  std::vector<std::string> ins{"x", "w"};
  if (c.bias) {
    m.initializer("b", {c.w[1] * c.group}, random_values(c.w[1] * c.group, 8));
    ins.push_back("b");
  }
  m.node("ConvTranspose", ins, {"y"}, "deconv");
  auto* n = test::last_node(m);
  if (!c.strides.empty()) test::set_ints(n, "strides", c.strides);
  if (!c.pads.empty()) test::set_ints(n, "pads", c.pads);
  if (!c.output_padding.empty()) test::set_ints(n, "output_padding", c.output_padding);
  if (c.group != 1) test::set_int(n, "group", c.group);
  expect_matches_reference(m, {{"x", c.x}});
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OnednnConvTransposeNdTest,
    ::testing::Values(
        // Window = stride, unpadded (the DBNet and YOLO-seg upsamplers): one matrix product.
        DeconvCase{"k2s2", {1, 24, 9, 11}, {24, 24, 2, 2}, {2, 2}},
        DeconvCase{"k2s2_one_output", {1, 24, 9, 11}, {24, 1, 2, 2}, {2, 2}},
        DeconvCase{"k2s2_batch2_no_bias", {2, 16, 5, 7}, {16, 8, 2, 2}, {2, 2}, {}, {}, 1, false},
        DeconvCase{"k3s3", {1, 5, 4, 6}, {5, 3, 3, 3}, {3, 3}},
        DeconvCase{"k2x1s2x1", {1, 6, 4, 5}, {6, 4, 2, 1}, {2, 1}},
        DeconvCase{"k2s2_1d", {1, 8, 13}, {8, 3, 2}, {2}},
        DeconvCase{"k2s2_3d", {1, 4, 3, 4, 5}, {4, 3, 2, 2, 2}, {2, 2, 2}},
        // Not covered by that: oneDNN's deconvolution.
        DeconvCase{"k2s2_output_padding", {1, 6, 4, 5}, {6, 4, 2, 2}, {2, 2}, {}, {1, 1}},
        DeconvCase{"k2s2_grouped", {1, 8, 4, 5}, {8, 3, 2, 2}, {2, 2}, {}, {}, 2},
        DeconvCase{"k4s2p1", {1, 16, 7, 7}, {16, 8, 4, 4}, {2, 2}, {1, 1, 1, 1}}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace polyinfer
