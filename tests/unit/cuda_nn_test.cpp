// The CUDA Conv/FusedConv (cuDNN), pooling and normalization kernels against cpu-ref through the
// oracle harness: 1-D, 2-D and 3-D convolutions with groups (depthwise included), strides,
// dilations, symmetric and asymmetric pads (the explicit-padding path), every auto_pad, bias,
// FusedConv's residual Z and activations; the algorithm choice persisted in the tuning cache;
// MaxPool/AveragePool windows, global pools, LayerNormalization along every axis,
// BatchNormalization; and the refusals. Each skips with the probe's reason without a usable GPU.
//
// Convolution tolerance: cuDNN may pick FFT or Winograd algorithms, whose float32 rounding
// differs from a direct sum by more than one rounding per tap; atol = 1e-5 * K (K taps of
// products in [-1, 1], sums of order sqrt(K)) still fails a wrong tap or channel, which is off
// by order 1.
#include <cstdlib>
#include <filesystem>

#include "cuda_util.h"
#include "oracle.h"
#include "runtime/cache_file.h"
#include "runtime/tuning_cache.h"
#include "vulkan_util.h"

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

OracleOp conv(const Shape& x, const Shape& w, bool bias = true) {
  auto o = on_cuda("Conv", 11);
  o.random(x, -1, 1).random(w, -1, 1);
  if (bias) o.random({w[0]}, -1, 1);
  return o;
}

double tol(const Shape& w) {
  double k = 1;
  for (size_t d = 1; d < w.size(); ++d) k *= static_cast<double>(w[d]);
  return 1e-5 * k;
}

TEST(CudaConv, TwoDimensional) {
  PI_SKIP_WITHOUT_CUDA();
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, dilations, pads;
    int64_t group;
  };
  const std::vector<Case> cases = {
      {{1, 1, 8, 8}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},
      {{2, 3, 9, 11}, {5, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1},
      {{1, 3, 17, 13}, {70, 3, 5, 3}, {2, 1}, {1, 1}, {2, 1, 0, 2}, 1},  // asymmetric pads
      {{1, 17, 10, 10}, {66, 17, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},
      {{1, 8, 12, 12}, {8, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 8},  // depthwise
      {{2, 6, 11, 9}, {9, 2, 3, 2}, {1, 2}, {2, 1}, {2, 0, 1, 1}, 3},   // groups, dilations
      {{1, 4, 70, 3}, {4, 4, 3, 3}, {1, 1}, {3, 1}, {3, 1, 3, 1}, 1},
      {{1, 2, 5, 5}, {3, 2, 5, 5}, {3, 3}, {1, 1}, {2, 2, 2, 2}, 1},
      {{1, 64, 56, 56}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1},   // a ResNet shape
      {{1, 3, 224, 224}, {32, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1}};  // MobileNetV2's stem
  for (const Case& c : cases)
    for (bool bias : {true, false}) {
      auto o = conv(c.x, c.w, bias);
      o.attr("strides", c.strides).attr("dilations", c.dilations).attr("pads", c.pads);
      o.attr("group", c.group);
      expect_on_cuda(o.check(tol(c.w), 1e-4), shape_str(c.x) + shape_str(c.w));
    }
}

TEST(CudaConv, AutoPad) {
  PI_SKIP_WITHOUT_CUDA();
  for (const std::string pad : {"SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"})
    for (int64_t s : {1, 2}) {
      auto o = conv({1, 3, 10, 7}, {4, 3, 4, 3});
      o.attr("auto_pad", pad).attr("strides", std::vector<int64_t>{s, s});
      expect_on_cuda(o.check(tol({4, 3, 4, 3}), 1e-4), pad + std::to_string(s));
    }
}

TEST(CudaConv, OneAndThreeDimensional) {
  PI_SKIP_WITHOUT_CUDA();
  auto o = conv({2, 4, 50}, {6, 2, 5});
  o.attr("strides", std::vector<int64_t>{2}).attr("pads", std::vector<int64_t>{3, 1});
  o.attr("dilations", std::vector<int64_t>{2}).attr("group", int64_t{2});
  expect_on_cuda(o.check(tol({6, 2, 5}), 1e-4), "1-D");
  auto s = conv({1, 4, 17}, {3, 4, 3});
  s.attr("pads", std::vector<int64_t>{1, 1});
  expect_on_cuda(s.check(tol({3, 4, 3}), 1e-4), "1-D symmetric");
  auto t = conv({2, 3, 6, 7, 5}, {4, 3, 3, 2, 3});
  t.attr("pads", std::vector<int64_t>{1, 0, 1, 1, 0, 1});
  t.attr("strides", std::vector<int64_t>{2, 1, 1});
  expect_on_cuda(t.check(tol({4, 3, 3, 2, 3}), 1e-4), "3-D");
}

TEST(CudaConv, FusedConvWithResidualAndActivations) {
  PI_SKIP_WITHOUT_CUDA();
  struct Act {
    const char* name;
    std::vector<float> params;
  };
  const std::vector<Act> acts = {
      {"", {}},     {"Relu", {}},    {"LeakyRelu", {0.2f}}, {"Clip", {0.f, 6.f}}, {"HardSwish", {}},
      {"Silu", {}}, {"Sigmoid", {}}, {"Gelu", {}},          {"Tanh", {}}};
  for (const Act& a : acts)
    for (bool z : {false, true})
      for (bool bias : {false, true}) {
        auto o = on_cuda("FusedConv", 1, "ai.polyinfer");
        o.attr("pads", std::vector<int64_t>{1, 1, 1, 1});
        o.attr("strides", std::vector<int64_t>{2, 2});
        if (*a.name) o.attr("activation", std::string(a.name)).attr("activation_params", a.params);
        o.random({2, 6, 9, 9}, -1, 1).random({5, 6, 3, 3}, -1, 1);
        if (bias || z) o.input(bias ? test::random_tensor({5}, 5, -1, 1) : Tensor());
        if (z) o.random({2, 5, 5, 5}, -1, 1);
        expect_on_cuda(
            o.check(tol({5, 6, 3, 3}), 1e-4),
            std::string(a.name) + " z=" + std::to_string(z) + " b=" + std::to_string(bias));
      }
}

TEST(CudaConv, ConstantWeightsAsTheOptimizerLeavesThem) {
  PI_SKIP_WITHOUT_CUDA();
  const Shape w{8, 4, 3, 3};
  const auto r = test::check_with_constants(
      OracleOp("Conv", 11).attr("pads", std::vector<int64_t>{1, 1, 1, 1}),
      {test::random_tensor({1, 4, 12, 12}, 1, -1, 1), test::random_tensor(w, 2, -1, 1),
       test::random_tensor({8}, 3, -1, 1)},
      {false, true, true}, {"cuda"}, tol(w), 1e-4);
  EXPECT_EQ(r.provider, "cuda");
}

// The algorithm chosen by timing is written to the tuning cache, keyed by shape and GPU.
TEST(CudaConv, TimedAlgorithmIsPersisted) {
  PI_SKIP_WITHOUT_CUDA();
  const std::string path =
      tuning_cache_path(std::getenv("POLYINFER_CUDA_TUNING_CACHE"), "cuda-conv-tuning.json");
  if (path.empty()) GTEST_SKIP() << "the tuning cache is disabled here (in memory only)";
  // A shape no other test uses, so this process times it.
  auto o = conv({1, 3, 23, 29}, {5, 3, 3, 3});
  expect_on_cuda(o.check(tol({5, 3, 3, 3}), 1e-4), "conv");
  const std::string text = read_small_file(path, size_t{4} << 20);
  EXPECT_NE(text.find("conv x=1x3x23x29 w=5x3x3x3"), std::string::npos) << path;
  TuningCache again(path);
  EXPECT_TRUE(again.notes().empty());
  EXPECT_GE(again.size(), 1u);
}

TEST(CudaConv, RefusalsFallBack) {
  PI_SKIP_WITHOUT_CUDA();
  // Asymmetric explicit pads in 3-D, and int inputs.
  auto r = OracleOp("Conv", 11)
               .providers({"cuda", "cpu"})
               .attr("pads", std::vector<int64_t>{0, 1, 0, 1, 0, 0})
               .random({1, 2, 4, 4, 4})
               .random({3, 2, 2, 2, 2})
               .check(1e-4, 1e-4);
  EXPECT_EQ(r.provider, "cpu");
}

TEST(CudaPool, MaxAndAverageWindows) {
  PI_SKIP_WITHOUT_CUDA();
  struct Case {
    Shape x;
    std::vector<int64_t> kernel, strides, dilations, pads;
    int64_t ceil;
  };
  const std::vector<Case> cases = {
      {{1, 1, 8, 8}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 0},
      {{2, 3, 9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0},
      {{2, 3, 9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1},
      {{1, 4, 13, 7}, {3, 2}, {2, 3}, {1, 1}, {0, 1, 2, 0}, 1},
      {{1, 2, 10, 10}, {2, 3}, {1, 2}, {2, 2}, {1, 0, 1, 2}, 0},
      {{3, 5, 17}, {4}, {3}, {1}, {1, 2}, 1},
      {{1, 64, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0},  // ResNet's MaxPool
      {{1, 2, 8, 10}, {3, 3}, {2, 2}, {1, 1}, {0, 1, 0, 1}, 1}};
  for (const Case& c : cases) {
    for (int64_t include_pad : {0, 1}) {
      auto o = on_cuda("AveragePool", 19);
      o.attr("kernel_shape", c.kernel).attr("strides", c.strides).attr("pads", c.pads);
      o.attr("dilations", c.dilations).attr("ceil_mode", c.ceil);
      o.attr("count_include_pad", include_pad);
      expect_on_cuda(o.random(c.x).check(1e-6, 1e-6), "avg " + shape_str(c.x));
    }
    auto o = on_cuda("MaxPool", 12);
    o.attr("kernel_shape", c.kernel).attr("strides", c.strides).attr("pads", c.pads);
    o.attr("dilations", c.dilations).attr("ceil_mode", c.ceil);
    expect_on_cuda(o.random(c.x).check(0, 0), "max " + shape_str(c.x));
  }
  for (const std::string pad : {"SAME_UPPER", "SAME_LOWER", "VALID"})
    for (const std::string op : {"MaxPool", "AveragePool"}) {
      auto o = on_cuda(op, 11);
      o.attr("auto_pad", pad).attr("kernel_shape", std::vector<int64_t>{3, 2});
      o.attr("strides", std::vector<int64_t>{2, 2});
      expect_on_cuda(o.random({2, 3, 10, 7}).check(1e-6, 1e-6), op + pad);
    }
}

TEST(CudaPool, Global) {
  PI_SKIP_WITHOUT_CUDA();
  for (const Shape& s : std::vector<Shape>{
           {1, 3, 7}, {2, 5, 7, 7}, {1, 1280, 7, 7}, {2, 3, 4, 5, 6}, {1, 1, 1, 1}, {1, 2, 3000}}) {
    expect_on_cuda(on_cuda("GlobalAveragePool", 1).random(s).check(1e-6, 1e-5), shape_str(s));
    expect_on_cuda(on_cuda("GlobalMaxPool", 1).random(s).check(0, 0), shape_str(s));
  }
}

TEST(CudaPool, RefusalsFallBack) {
  PI_SKIP_WITHOUT_CUDA();
  auto o = OracleOp("MaxPool", 12).providers({"cuda", "cpu"}).outputs(2);
  o.attr("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_EQ(o.random({1, 2, 4, 4}).check().provider, "cpu");
}

TEST(CudaLayerNorm, EveryAxisAndParamForm) {
  PI_SKIP_WITHOUT_CUDA();
  const Shape x{2, 3, 5, 769};
  for (int64_t axis = -4; axis < 4; ++axis) {
    const int64_t a = axis < 0 ? axis + 4 : axis;
    const Shape inner(x.begin() + a, x.end());
    expect_on_cuda(on_cuda("LayerNormalization", 17)
                       .attr("axis", axis)
                       .attr("epsilon", 1e-3f)
                       .random(x)
                       .random(inner)
                       .random(inner)
                       .check(1e-5, 1e-4),
                   "axis " + std::to_string(axis));
  }
  // No bias; a single scale value; BERT's rows.
  expect_on_cuda(on_cuda("LayerNormalization", 17).random({7, 33}).random({33}).check(1e-5, 1e-4),
                 "no bias");
  expect_on_cuda(
      on_cuda("LayerNormalization", 17).random({7, 33}).random({1}).random({33}).check(1e-5, 1e-4),
      "single scale");
  expect_on_cuda(on_cuda("LayerNormalization", 17)
                     .attr("epsilon", 1e-12f)
                     .random({1, 128, 768})
                     .random({768})
                     .random({768})
                     .check(1e-5, 1e-4),
                 "BERT");
  expect_on_cuda(on_cuda("LayerNormalization", 1, "ai.polyinfer")
                     .reference_as("LayerNormalization", 17)
                     .random({4, 65})
                     .random({65})
                     .random({65})
                     .check(1e-5, 1e-4),
                 "ai.polyinfer");
}

TEST(CudaLayerNorm, RefusalsFallBack) {
  PI_SKIP_WITHOUT_CUDA();
  auto o = OracleOp("LayerNormalization", 17).providers({"cuda", "cpu"}).outputs(2);
  EXPECT_EQ(o.random({3, 8}).random({8}).random({8}).check(1e-5, 1e-5).provider, "cpu");
}

TEST(CudaBatchNorm, InferenceMode) {
  PI_SKIP_WITHOUT_CUDA();
  for (const Shape& s : std::vector<Shape>{{2, 3}, {2, 5, 7, 9}, {1, 4, 33}, {2, 3, 2, 3, 4}}) {
    const int64_t c = s[1];
    expect_on_cuda(on_cuda("BatchNormalization", 15)
                       .attr("epsilon", 1e-3f)
                       .random(s)
                       .random({c})
                       .random({c})
                       .random({c})
                       .random({c}, 0.1f, 2.0f)
                       .check(1e-5, 1e-5),
                   shape_str(s));
  }
}

}  // namespace
}  // namespace polyinfer
