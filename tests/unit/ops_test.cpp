// polyinfer::ops: results against plain loops on the CPU, the same calls on vulkan (llvmpipe in
// CI) agreeing with the CPU, the operand checks, and the session cache (built once per key).
#include <gtest/gtest.h>

#include <cmath>

#include "oracle.h"
#include "polyinfer/ops.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol + tol * std::abs(want[i])) << "element " << i;
}

// a [2,3] op b [3] (broadcast over rows), computed with plain loops.
std::vector<float> broadcast(const std::vector<float>& a, const std::vector<float>& b,
                             float (*f)(float, float)) {
  std::vector<float> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = f(a[i], b[i % b.size()]);
  return out;
}

TEST(Ops, ArithmeticOnCpuMatchesPlainLoops) {
  const std::vector<float> av{1, -2, 3.5f, 4, -5, 6}, bv{0.5f, 2, -4};
  const Tensor a = Tensor::from_vector<float>({2, 3}, av);
  const Tensor b = Tensor::from_vector<float>({3}, bv);
  expect_near(values(ops::add(a, b)), broadcast(av, bv, [](float x, float y) { return x + y; }));
  expect_near(values(ops::sub(a, b)), broadcast(av, bv, [](float x, float y) { return x - y; }));
  expect_near(values(ops::mul(a, b)), broadcast(av, bv, [](float x, float y) { return x * y; }));
  expect_near(values(ops::div(a, b)), broadcast(av, bv, [](float x, float y) { return x / y; }));
  std::vector<float> relu(av.size()), sig(av.size()), neg(av.size());
  for (size_t i = 0; i < av.size(); ++i) {
    relu[i] = std::max(av[i], 0.0f);
    sig[i] = 1.0f / (1.0f + std::exp(-av[i]));
    neg[i] = -av[i];
  }
  expect_near(values(ops::relu(a)), relu);
  expect_near(values(ops::sigmoid(a)), sig);
  expect_near(values(ops::neg(a)), neg);
  // [2,3] x [3,2].
  const Tensor m = Tensor::from_vector<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor p = ops::matmul(a, m);
  EXPECT_EQ(p.shape(), (Shape{2, 2}));
  expect_near(values(p), {1 - 6 + 17.5f, 2 - 8 + 21, 4 - 15 + 30, 8 - 20 + 36});
  EXPECT_EQ(ops::add(a, b).device(), Device::cpu());
}

TEST(Ops, IntegerArithmeticOnCpu) {
  const Tensor a = Tensor::from_vector<int64_t>({3}, {1, 2, 3});
  const Tensor b = Tensor::from_vector<int64_t>({3}, {10, 20, 30});
  EXPECT_EQ(ops::mul(a, b).to_vector<int64_t>(), (std::vector<int64_t>{10, 40, 90}));
}

TEST(Ops, OperandChecksSayWhich) {
  const Tensor f = Tensor::from_vector<float>({2}, {1, 2});
  const Tensor i = Tensor::from_vector<int64_t>({2}, {1, 2});
  try {
    ops::add(f, i);
    FAIL() << "float32 + int64";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ops::relu(Tensor()), Error);
  EXPECT_THROW(ops::add(f, Tensor::from_vector<float>({3}, {1, 2, 3})), Error);  // no broadcast
}

TEST(Ops, ASessionIsBuiltOncePerKey) {
  const Tensor a = Tensor::from_vector<float>({7, 5}, std::vector<float>(35, 1.5f));
  const ops::CacheStats before = ops::cache_stats();
  ops::sub(a, a);
  const ops::CacheStats once = ops::cache_stats();
  EXPECT_EQ(once.built, before.built + 1);
  for (int i = 0; i < 3; ++i) expect_near(values(ops::sub(a, a)), std::vector<float>(35, 0.0f));
  const ops::CacheStats again = ops::cache_stats();
  EXPECT_EQ(again.built, once.built);
  EXPECT_EQ(again.reused, once.reused + 3);
  // Another shape is another key.
  ops::sub(a.reshaped({35}), a.reshaped({35}));
  EXPECT_EQ(ops::cache_stats().built, once.built + 1);
}

TEST(OpsVulkan, SameResultsOnTheDeviceAsOnCpu) {
  PI_SKIP_WITHOUT_VULKAN();
  const Device vk{DeviceKind::Vulkan, 0};
  const Tensor a = test::random_tensor({4, 33}, 1), b = test::random_tensor({33}, 2);
  const Tensor m = test::random_tensor({33, 9}, 3);
  const Tensor da = a.to(vk), db = b.to(vk), dm = m.to(vk);
  for (auto f : {&ops::add, &ops::sub, &ops::mul}) {
    const Tensor got = (*f)(da, db);
    EXPECT_EQ(got.device(), vk);
    expect_near(values(got), values((*f)(a, b)));
  }
  expect_near(values(ops::relu(da)), values(ops::relu(a)));
  expect_near(values(ops::sigmoid(da)), values(ops::sigmoid(a)), 1e-5f);
  expect_near(values(ops::tanh(da)), values(ops::tanh(a)), 1e-5f);
  expect_near(values(ops::matmul(da, dm)), values(ops::matmul(a, m)), 1e-4f);
  // Chained on the device without leaving it.
  const Tensor chained = ops::relu(ops::mul(ops::add(da, db), da));
  EXPECT_EQ(chained.device(), vk);
  expect_near(values(chained), values(ops::relu(ops::mul(ops::add(a, b), a))), 1e-5f);
}

TEST(OpsVulkan, MismatchedDevicesAndMissingKernelsAreErrors) {
  PI_SKIP_WITHOUT_VULKAN();
  const Device vk{DeviceKind::Vulkan, 0};
  const Tensor a = test::random_tensor({3});
  try {
    ops::add(a.to(vk), a);
    FAIL() << "vulkan + cpu";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    const std::string what = e.what();
    EXPECT_NE(what.find("vulkan:0"), std::string::npos) << what;
    EXPECT_NE(what.find("cpu"), std::string::npos) << what;
  }
  // No Vulkan kernel takes int64 (float32 and float16 only): strict, no silent CPU run.
  const Tensor i = Tensor::from_vector<int64_t>({2}, {1, 2}).to(vk);
  try {
    ops::add(i, i);
    FAIL() << "int64 add on vulkan";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp) << e.what();
  }
}

}  // namespace
}  // namespace polyinfer
