// Whole models on each device provider (`vulkan, cpu`, `opencl, cpu`) at the default optimization
// level: the digits example CNN (committed) must run every node on the device, classify the test
// split as the training script measured, and agree with cpu; the bench models (bench/models,
// gitignored, fetched by bench/export_models.py; or $POLYINFER_BENCH_MODELS) when present must
// agree with cpu and put their convolutions on the device. The placement is printed so the share
// on the device can be read off.
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

#include "device_util.h"
#include "polyinfer/io.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

class DeviceModels : public test::DeviceTest {};

const std::string kDigits = std::string(POLYINFER_SOURCE_DIR) + "/examples/digits/";

Session load(const std::string& path, std::vector<std::string> providers,
             Precision precision = Precision::Fp32) {
  SessionOptions o;
  o.providers = std::move(providers);
  o.precision = precision;
  return Session::load(path, o);  // default optimization level
}

int nodes_on(const Placement& pl, const std::string& provider) {
  for (const auto& s : pl.providers)
    if (s.provider == provider) return s.nodes;
  return 0;
}

void print_placement(const std::string& model, const Placement& pl, const std::string& provider) {
  std::cout << model << ": " << nodes_on(pl, provider) << " of " << pl.total_nodes << " nodes on "
            << provider << "\n";
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

TEST_P(DeviceModels, DigitsRunsEntirelyOnTheDevice) {
  Session vk = load(kDigits + "digits_cnn.onnx", {provider(), "cpu"});
  Session cpu = load(kDigits + "digits_cnn.onnx", {"cpu"});
  print_placement("digits", vk.placement(), provider());
  EXPECT_EQ(nodes_on(vk.placement(), provider()), vk.placement().total_nodes);
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

TEST_P(DeviceModels, DigitsStrictOnTheDeviceAlone) {
  Session vk = load(kDigits + "digits_cnn.onnx", {provider()});
  EXPECT_EQ(nodes_on(vk.placement(), provider()), vk.placement().total_nodes);
}

// A tiny BERT exported from PyTorch with int64 input_ids and attention_mask and dynamic batch and
// sequence (tests/data/vulkan_int_mask/make_model.py): its shape arithmetic (Shape, Gather,
// Concat, Range, Expand, ConstantOfShape of int64) and mask (Equal, Cast, Not, Where) run on
// the device with the rest, strict, and agree with cpu and with PyTorch's output; a second run at
// another sequence length and a third at the first check the values kept between runs.
TEST_P(DeviceModels, Int64MaskBertStrictOnTheDevice) {
  const std::string dir = std::string(POLYINFER_SOURCE_DIR) + "/tests/data/vulkan_int_mask/";
  Session vk = load(dir + "model.onnx", {provider()});
  Session cpu = load(dir + "model.onnx", {"cpu"});
  print_placement("int64-mask bert", vk.placement(), provider());
  EXPECT_EQ(nodes_on(vk.placement(), provider()), vk.placement().total_nodes);
  const Tensor ids = read_npy(dir + "input_ids.npy"), mask = read_npy(dir + "attention_mask.npy");
  const auto torch_out = read_npy(dir + "last_hidden_state.npy").to_vector<float>();
  // The first 5 tokens of each row (the second row's padding starts at 5): [2, 5].
  const auto first5 = [](const Tensor& t) {
    std::vector<int64_t> v = t.to_vector<int64_t>(), out;
    for (int64_t r = 0; r < 2; ++r) out.insert(out.end(), v.begin() + r * 8, v.begin() + r * 8 + 5);
    return Tensor::from_vector<int64_t>({2, 5}, out);
  };
  const std::vector<std::map<std::string, Value>> feeds = {
      {{"input_ids", Value(ids)}, {"attention_mask", Value(mask)}},
      {{"input_ids", Value(first5(ids))}, {"attention_mask", Value(first5(mask))}},
      {{"input_ids", Value(ids)}, {"attention_mask", Value(mask)}}};
  for (size_t run = 0; run < feeds.size(); ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    const Tensor got_t = vk.run(feeds[run]).at(0).tensor().to(Device::cpu());
    const Tensor want_t = cpu.run(feeds[run]).at(0).tensor();
    ASSERT_EQ(got_t.shape(), want_t.shape());
    const auto got = got_t.to_vector<float>(), want = want_t.to_vector<float>();
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::fabs(double(got[i]) - double(want[i])));
    EXPECT_LT(worst, 1e-4);
    if (got.size() == torch_out.size()) {
      double torch_worst = 0;
      for (size_t i = 0; i < got.size(); ++i)
        torch_worst = std::max(torch_worst, std::fabs(double(got[i]) - double(torch_out[i])));
      EXPECT_LT(torch_worst, 1e-4);
    }
  }
}

std::string bench_models() {
  if (const char* env = std::getenv("POLYINFER_BENCH_MODELS")) return env;
  return std::string(POLYINFER_SOURCE_DIR) + "/bench/models";
}

// `bound`: of the largest output, how far the device may be from cpu at float32.
void check_bench_model(const std::string& provider, const std::string& name,
                       int min_on_device_percent, Precision precision = Precision::Fp32,
                       double bound = 1e-4) {
  const std::string dir = bench_models() + "/";
  if (!std::filesystem::exists(dir + name + ".onnx"))
    GTEST_SKIP() << dir << name << ".onnx is absent (bench/export_models.py makes it)";
  Session vk = load(dir + name + ".onnx", {provider, "cpu"}, precision);
  Session cpu = load(dir + name + ".onnx", {"cpu"});
  print_placement(name, vk.placement(), provider);
  const Placement& pl = vk.placement();
  EXPECT_GE(nodes_on(pl, provider) * 100, min_on_device_percent * pl.total_nodes);
  for (const auto& n : pl.nodes)
    if (n.op == "Conv" || n.op == "ai.polyinfer.FusedConv") {
      EXPECT_EQ(n.provider, provider) << n.node;
    }
  const Tensor x = read_npy(dir + name + ".input.npy");
  const std::string in = vk.inputs().at(0).name;
  const auto got = vk.run({{in, x}}).at(0).tensor().to_vector<float>();
  const auto want = cpu.run({{in, x}}).at(0).tensor().to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  double largest = 0;
  for (float v : want) largest = std::max(largest, std::fabs(double(v)));
  // The bench's MobileNetV2 export (random weights) has logits of ~3e-9: below float16's
  // smallest subnormal (6e-8), so at fp16 they are 0 whatever the kernels do.
  if (precision == Precision::Fp16 && largest < 0x1p-14)
    GTEST_SKIP() << name << "'s outputs reach only " << largest
                 << " at float32, below float16's normal range (6.1e-5): not representable";
  const double err = relative_max_error(got, want);
  std::cout << name << " (" << precision_name(precision) << "): max error " << err
            << " of the largest output\n";
  EXPECT_LT(err, bound);
  if (want.size() == 1000) {  // class scores
    EXPECT_EQ(std::max_element(got.begin(), got.end()) - got.begin(),
              std::max_element(want.begin(), want.end()) - want.begin());
  }
}

TEST_P(DeviceModels, MobileNetV2) { check_bench_model(provider(), "mobilenet_v2", 90); }

TEST_P(DeviceModels, ResNet50) { check_bench_model(provider(), "resnet50", 90); }

TEST_P(DeviceModels, BertBase) { check_bench_model(provider(), "bert_base", 90); }

// precision fp16 on the device against cpu at fp32: every float16 node on it (the Casts too),
// within 1.5% of the largest logit. Why that bound: each layer stores its output in float16
// (2^-11 relative rounding) and reads float16 weights; over ~50 layers the roundings add up
// as a random walk to ~sqrt(50) * 2^-11 ≈ 0.35% of typical activations, and a few percent at
// worst on single logits. A wrong kernel moves logits by order 1.
TEST_P(DeviceModels, MobileNetV2Fp16) {
  if (!float16_storage()) GTEST_SKIP() << "this device has no 16-bit storage";
  check_bench_model(provider(), "mobilenet_v2", 100, Precision::Fp16, 1.5e-2);
}

TEST_P(DeviceModels, ResNet50Fp16) {
  if (!float16_storage()) GTEST_SKIP() << "this device has no 16-bit storage";
  check_bench_model(provider(), "resnet50", 100, Precision::Fp16, 1.5e-2);
}

// The digits CNN at precision fp16: every node on the device, strict, and the accuracy of float32
// within 3 images of the 450 (half precision moves logits by ~1e-3 relative: only near-ties
// can flip).
TEST_P(DeviceModels, DigitsFp16RunsEntirelyOnTheDevice) {
  if (!float16_storage()) GTEST_SKIP() << "this device has no 16-bit storage";
  Session vk = load(kDigits + "digits_cnn.onnx", {provider()}, Precision::Fp16);
  Session cpu = load(kDigits + "digits_cnn.onnx", {"cpu"});
  print_placement("digits fp16", vk.placement(), provider());
  EXPECT_EQ(nodes_on(vk.placement(), provider()), vk.placement().total_nodes);
  int casts = 0, fused = 0;
  for (const auto& n : vk.placement().nodes) {
    casts += n.op == "Cast";
    fused += n.op.rfind("ai.polyinfer.Fused", 0) == 0;
  }
  EXPECT_EQ(casts, 2);  // the pixels in, the logits out
  EXPECT_GT(fused, 0);
  const Tensor x = read_npy(kDigits + "test_x.npy");
  const auto y = read_npy(kDigits + "test_y.npy").to_vector<int64_t>();
  const auto got = vk.run({{"pixels", x}}).at(0).tensor().to_vector<float>();
  const auto want = cpu.run({{"pixels", x}}).at(0).tensor().to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  EXPECT_LT(relative_max_error(got, want), 1e-2);
  int64_t correct = 0;
  for (int64_t i = 0; i < x.dim(0); ++i)
    correct += std::max_element(&got[i * 10], &got[i * 10] + 10) - &got[i * 10] == y[i];
  EXPECT_NEAR(double(correct), 443.0, 3.0);
}

TEST_P(DeviceModels, ResNet18) { check_bench_model(provider(), "resnet18", 90); }

PI_INSTANTIATE_DEVICE_TESTS(DeviceModels);

}  // namespace
}  // namespace polyinfer
