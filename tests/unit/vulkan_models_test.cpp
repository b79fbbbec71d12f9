// Whole models with `vulkan, cpu` at the default optimization level: the digits example CNN
// (committed) must run every node on vulkan, classify the test split as the training script
// measured, and agree with cpu; the bench models (bench/models, gitignored, fetched by
// bench/export_models.py; or $POLYINFER_BENCH_MODELS) when present must agree with cpu and put
// their convolutions on vulkan. The placement is printed so the share on vulkan can be read off.
//
// Tolerance against cpu: each layer's float32 sums are ordered the same on both sides (see the
// kernel tests), but cpu's fast kernels (oneDNN) reorder them and fuse differently; 1e-4 of the
// largest logit bounds what a few dozen layers of such rounding give, while one wrong layer
// moves the logits by order 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "polyinfer/io.h"
#include "polyinfer/session.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

const std::string kDigits = std::string(POLYINFER_SOURCE_DIR) + "/examples/digits/";

Session load(const std::string& path, std::vector<std::string> providers) {
  SessionOptions o;
  o.providers = std::move(providers);
  return Session::load(path, o);  // default optimization level
}

int nodes_on(const Placement& pl, const std::string& provider) {
  for (const auto& s : pl.providers)
    if (s.provider == provider) return s.nodes;
  return 0;
}

void print_placement(const std::string& model, const Placement& pl) {
  std::cout << model << ": " << nodes_on(pl, "vulkan") << " of " << pl.total_nodes
            << " nodes on vulkan\n";
  std::map<std::string, std::string> reasons;
  for (const auto& f : pl.fallbacks) reasons[f.op] = f.reason;
  for (const auto& [op, reason] : reasons)
    std::cout << "  fallback " << op << ": " << reason << "\n";
}

// Largest |a - b| over the largest |b|.
double relative_max_error(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    err = std::max(err, std::fabs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return scale > 0 ? err / scale : err;
}

TEST(VulkanModels, DigitsRunsEntirelyOnVulkan) {
  PI_SKIP_WITHOUT_VULKAN();
  Session vk = load(kDigits + "digits_cnn.onnx", {"vulkan", "cpu"});
  Session cpu = load(kDigits + "digits_cnn.onnx", {"cpu"});
  print_placement("digits", vk.placement());
  EXPECT_EQ(nodes_on(vk.placement(), "vulkan"), vk.placement().total_nodes);
  EXPECT_TRUE(vk.placement().fallbacks.empty());
  const Tensor x = read_npy(kDigits + "test_x.npy");
  const auto y = read_npy(kDigits + "test_y.npy").to_vector<int64_t>();
  for (int run = 0; run < 2; ++run) {
    const auto got = vk.run({{"pixels", x}}).at(0).tensor().to_vector<float>();
    const auto want = cpu.run({{"pixels", x}}).at(0).tensor().to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    EXPECT_LT(relative_max_error(got, want), 1e-4);
    int64_t same = 0, correct = 0;
    for (int64_t i = 0; i < x.dim(0); ++i) {
      const auto g = std::max_element(&got[i * 10], &got[i * 10] + 10) - &got[i * 10];
      const auto w = std::max_element(&want[i * 10], &want[i * 10] + 10) - &want[i * 10];
      same += g == w;
      correct += g == y[i];
    }
    EXPECT_EQ(same, x.dim(0));
    // examples/digits/expected.json: 443 of 450 (0.984444).
    EXPECT_EQ(correct, 443);
  }
  // The weights went to the device once, at load; each run copies only the pixels in.
  EXPECT_EQ(vk.placement().device_copies, 1);
}

TEST(VulkanModels, DigitsStrictOnVulkanAlone) {
  PI_SKIP_WITHOUT_VULKAN();
  Session vk = load(kDigits + "digits_cnn.onnx", {"vulkan"});
  EXPECT_EQ(nodes_on(vk.placement(), "vulkan"), vk.placement().total_nodes);
}

std::string bench_models() {
  if (const char* env = std::getenv("POLYINFER_BENCH_MODELS")) return env;
  return std::string(POLYINFER_SOURCE_DIR) + "/bench/models";
}

void check_bench_model(const std::string& name, int min_on_vulkan_percent) {
  const std::string dir = bench_models() + "/";
  if (!std::filesystem::exists(dir + name + ".onnx"))
    GTEST_SKIP() << dir << name << ".onnx is absent (bench/export_models.py makes it)";
  Session vk = load(dir + name + ".onnx", {"vulkan", "cpu"});
  Session cpu = load(dir + name + ".onnx", {"cpu"});
  print_placement(name, vk.placement());
  const Placement& pl = vk.placement();
  EXPECT_GE(nodes_on(pl, "vulkan") * 100, min_on_vulkan_percent * pl.total_nodes);
  for (const auto& n : pl.nodes)
    if (n.op == "Conv" || n.op == "ai.polyinfer.FusedConv") {
      EXPECT_EQ(n.provider, "vulkan") << n.node;
    }
  const Tensor x = read_npy(dir + name + ".input.npy");
  const std::string in = vk.inputs().at(0).name;
  const auto got = vk.run({{in, x}}).at(0).tensor().to_vector<float>();
  const auto want = cpu.run({{in, x}}).at(0).tensor().to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  EXPECT_LT(relative_max_error(got, want), 1e-4);
  if (want.size() == 1000) {  // class scores
    EXPECT_EQ(std::max_element(got.begin(), got.end()) - got.begin(),
              std::max_element(want.begin(), want.end()) - want.begin());
  }
}

TEST(VulkanModels, MobileNetV2) {
  PI_SKIP_WITHOUT_VULKAN();
  check_bench_model("mobilenet_v2", 90);
}

TEST(VulkanModels, ResNet50) {
  PI_SKIP_WITHOUT_VULKAN();
  check_bench_model("resnet50", 90);
}

TEST(VulkanModels, BertBase) {
  PI_SKIP_WITHOUT_VULKAN();
  check_bench_model("bert_base", 90);
}

TEST(VulkanModels, ResNet18) {
  PI_SKIP_WITHOUT_VULKAN();
  check_bench_model("resnet18", 90);
}

}  // namespace
}  // namespace polyinfer
