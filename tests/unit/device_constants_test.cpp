// Weights read by nodes on a device are copied there once, when the session is created, not at
// every run (runtime/executor.cpp): a run's device copies are only its activations crossing
// provider borders. Checked on the Vulkan provider (Mesa llvmpipe in CI); the same path serves
// CUDA.
#include <gtest/gtest.h>

#include <cmath>

#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

TEST(DeviceConstants, WeightsAreCopiedOnceNotPerRun) {
  PI_SKIP_WITHOUT_VULKAN();
  std::vector<float> w(37);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25f * static_cast<float>(i) - 3.0f;
  // y = (x + w) * w: both nodes on vulkan read the weight w.
  test::ModelBuilder b(17);
  b.input("x", {4, 37}).output("y", {4, 37});
  b.initializer("w", {37}, w);
  b.node("Add", {"x", "w"}, {"s"}, "add").node("Mul", {"s", "w"}, {"y"}, "mul");
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.providers = {"vulkan"};
  o.optimization_level = 0;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  const Tensor x = test::random_tensor({4, 37});
  const std::vector<float> xv = x.to_vector<float>();
  for (int run = 0; run < 2; ++run) {
    const auto out = s.run({{"x", x}});
    // x goes in; w was already on the device; y stays there (the caller copies it).
    EXPECT_EQ(s.placement().device_copies, 1) << "run " << run;
    const std::vector<float> y = out[0].tensor().to_vector<float>();
    ASSERT_EQ(y.size(), xv.size());
    for (size_t i = 0; i < y.size(); ++i)
      EXPECT_FLOAT_EQ(y[i], (xv[i] + w[i % 37]) * w[i % 37]) << i;
  }
}

// A weight read only by device nodes through their device copies (the Vulkan Concat does not
// prepack its inputs; the CUDA kernels prepack none) loses its host copy; one that a host node
// also reads, or that is a graph output, keeps it.
TEST(DeviceConstants, HostCopiesStayOnlyWhereTheHostReadsThem) {
  PI_SKIP_WITHOUT_VULKAN();
  const std::vector<float> c(2 * 37, 0.5f), w(37, 2.0f), u(37, -1.0f);
  // y = Concat(x, c, u) on vulkan; z = Mod(x, w) on the cpu (no Vulkan Mod), w also in y's
  // Concat; u is also a graph output.
  test::ModelBuilder b(17);
  b.input("x", {4, 37}).output("y", {8, 37}).output("z", {4, 37}).output("u", {1, 37});
  b.initializer("c", {2, 37}, c).initializer("w", {1, 37}, w).initializer("u", {1, 37}, u);
  b.node("Concat", {"x", "c", "w", "u"}, {"y"}, "concat");
  auto* axis = test::last_node(b)->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  b.node("Mod", {"x", "w"}, {"z"}, "mod");
  auto* fmod = test::last_node(b)->add_attribute();
  fmod->set_name("fmod");
  fmod->set_type(onnx::AttributeProto::INT);
  fmod->set_i(1);
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.providers = {"vulkan", "cpu"};
  o.optimization_level = 0;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  for (const auto& n : s.placement().nodes)
    EXPECT_EQ(n.provider, n.node == "mod" ? "cpu" : "vulkan") << n.node;
  EXPECT_EQ(s.host_weight_bytes(), 2 * 37 * sizeof(float));  // w and u stay, c goes
  const Tensor x = test::random_tensor({4, 37});
  for (int run = 0; run < 2; ++run) {
    const auto out = s.run({{"x", x}});
    const std::vector<float> xv = x.to_vector<float>(), y = out[0].tensor().to_vector<float>(),
                             z = out[1].tensor().to_vector<float>();
    ASSERT_EQ(y.size(), 8u * 37);
    for (size_t i = 0; i < y.size(); ++i) {
      const size_t r = i / 37;
      const float want = r < 4 ? xv[i] : r < 6 ? 0.5f : r == 6 ? 2.0f : -1.0f;
      EXPECT_EQ(y[i], want) << i;
    }
    for (size_t i = 0; i < xv.size(); ++i) EXPECT_FLOAT_EQ(z[i], std::fmod(xv[i], 2.0f)) << i;
    EXPECT_EQ(out[2].tensor().to_vector<float>(), u);
  }
}

}  // namespace
}  // namespace polyinfer
