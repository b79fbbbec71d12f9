// Weights read by nodes on a device are copied there once, when the session is created, not at
// every run (runtime/executor.cpp): a run's device copies are only its activations crossing
// provider borders. Checked on the Vulkan provider (Mesa llvmpipe in CI); the same path serves
// CUDA.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace polyinfer
