// The normalization kernels of each device provider (device_util.h) against cpu-ref.
// LayerNormalization (layer_norm.comp, layer_norm.cl): every axis of a rank-4 input, rows shorter
// and longer than a work-group, BERT's [.., 768] rows, scale and bias per element or single, no
// bias, the optimizer's ai.polyinfer form, more rows than the dispatch limit, and the refusals
// (Mean/InvStdDev outputs, stash_type double, other broadcasts). InstanceNormalization (the same
// kernels, a row per (n, c) plane) and BatchNormalization (batch_norm.comp, batch_norm.cl) at the
// end.
//
// Tolerance: both sides use float32 and the same two passes, but cpu-ref sums each row in order
// and the kernels in 256 strided partial sums and a tree; the mean and variance of n terms then
// differ by at most about n * 2^-24 relative (768: 4.6e-5) and typically sqrt(n) * 2^-24
// (1.7e-6). Outputs are within a few units of 0, so atol 2e-5 with rtol 1e-5; a wrong row,
// stride or missing epsilon moves them by far more.
#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceLayerNorm : public test::DeviceTest {
 protected:
  OracleOp layer_norm() const { return on_device("LayerNormalization", 17); }
};
class DeviceInstanceNorm : public test::DeviceTest {};
class DeviceBatchNorm : public test::DeviceTest {
 protected:
};

TEST_P(DeviceLayerNorm, EveryAxis) {
  const Shape x{2, 3, 4, 5};
  for (int64_t axis = -4; axis < 4; ++axis) {
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
    const Shape inner(x.begin() + static_cast<std::ptrdiff_t>(a), x.end());
    auto r =
        layer_norm().attr("axis", axis).random(x).random(inner).random(inner).check(2e-5, 1e-5);
    EXPECT_EQ(r.provider, provider()) << axis;
  }
}

TEST_P(DeviceLayerNorm, RowLengthsScaleBiasForms) {
  for (int64_t n : {1, 7, 255, 256, 257, 768, 3001}) {
    auto r = layer_norm().random({3, n}).random({n}).random({n}).check(2e-5, 1e-5);
    EXPECT_EQ(r.provider, provider()) << n;
  }
  // No bias; a single scale and bias; a block with a leading 1; epsilon.
  EXPECT_EQ(layer_norm().random({2, 5, 768}).random({768}).check(2e-5, 1e-5).provider, provider());
  EXPECT_EQ(layer_norm().random({4, 33}).random({1}).random({1}).check(2e-5, 1e-5).provider,
            provider());
  // The block [1, 33] with a scale of [33].
  EXPECT_EQ(layer_norm()
                .attr("epsilon", 0.5f)
                .attr("axis", int64_t{1})
                .random({4, 1, 33})
                .random({33})
                .random({1, 33})
                .check(2e-5, 1e-5)
                .provider,
            provider());
}

TEST_P(DeviceLayerNorm, PolyinferForm) {
  auto r = OracleOp("LayerNormalization", 1, "ai.polyinfer")
               .providers({provider()})
               .reference_as("LayerNormalization", 17)
               .random({2, 9, 64})
               .random({64})
               .random({64})
               .check(2e-5, 1e-5);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceLayerNorm, MoreRowsThanTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 3);
  EXPECT_EQ(layer_norm().random({10, 40}).random({40}).random({40}).check(2e-5, 1e-5).provider,
            provider());
}

TEST_P(DeviceLayerNorm, RefusalsFallBack) {
  auto r = OracleOp("LayerNormalization", 17)
               .providers({provider(), "cpu"})
               .outputs(3)
               .random({3, 8})
               .random({8})
               .random({8})
               .check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, "cpu");
  r = OracleOp("LayerNormalization", 17)
          .providers({provider(), "cpu"})
          .attr("stash_type", int64_t{11})
          .random({3, 8})
          .random({8})
          .check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, "cpu");
  // Scale broadcast along the row's first dimension only ([4, 1] over [4, 5]).
  r = OracleOp("LayerNormalization", 17)
          .providers({provider(), "cpu"})
          .attr("axis", int64_t{1})
          .random({2, 4, 5})
          .random({4, 1})
          .check(1e-5, 1e-5);
  EXPECT_EQ(r.provider, "cpu");
}

// BatchNormalization in inference mode: the CPU's formula per element, so only the device's
// division and sqrt (a few ulp in GLSL and OpenCL, where the CPU rounds correctly) differ: rtol
// 1e-5.
// InstanceNormalization: the statistics of each (n, c) plane as LayerNormalization's rows (the
// same tolerance and reason); planes of 1, a work-group's tail and 3-D; scale/bias as constants
// (uploaded once); more planes than the dispatch limit; integer data falling back.
TEST_P(DeviceInstanceNorm, PlanesAndRanks) {
  const std::vector<Shape> shapes = {{2, 3}, {1, 4, 1}, {2, 3, 257}, {2, 5, 7, 9}, {1, 2, 3, 4, 5}};
  for (const Shape& x : shapes) {
    const int64_t c = x[1];
    auto r = OracleOp("InstanceNormalization", 6)
                 .providers({provider()})
                 .attr("epsilon", 1e-3f)
                 .random(x)
                 .random({c})
                 .random({c})
                 .check(2e-5, 1e-5);
    EXPECT_EQ(r.provider, provider()) << shape_str(x);
    const auto k = test::check_with_constants(
        OracleOp("InstanceNormalization", 22),
        {test::random_tensor(x), test::random_tensor({c}, 5), test::random_tensor({c}, 6)},
        {false, true, true}, {provider()}, 2e-5, 1e-5);
    EXPECT_EQ(k.provider, provider()) << shape_str(x);
  }
  test::DeviceGroupLimit limit(provider(), 3);
  auto r = OracleOp("InstanceNormalization", 6)
               .providers({provider()})
               .random({3, 5, 11})
               .random({5})
               .random({5})
               .check(2e-5, 1e-5);
  EXPECT_EQ(r.provider, provider());
  r = OracleOp("InstanceNormalization", 6)
          .providers({provider(), "cpu"})
          .input(Tensor::from_vector<double>({1, 2, 2}, {1, 2, 3, 4}))
          .input(Tensor::from_vector<double>({2}, {1, 1}))
          .input(Tensor::from_vector<double>({2}, {0, 0}))
          .check(1e-9, 1e-9);
  EXPECT_EQ(r.provider, "cpu");
}

TEST_P(DeviceBatchNorm, InferenceMode) {
  for (int opset : {9, 15})
    for (const Shape& x :
         std::vector<Shape>{{2, 3, 5, 7}, {4, 6}, {1, 1, 1}, {2, 3, 4, 5, 6}, {1, 70, 17}}) {
      const Shape c{x[1]};
      auto o = OracleOp("BatchNormalization", opset).providers({provider()});
      o.attr("epsilon", 1e-3f).random(x).random(c).random(c).random(c).random(c, 0.1f, 2.0f);
      EXPECT_EQ(o.check(1e-6, 1e-5).provider, provider()) << opset << shape_str(x);
    }
}

TEST_P(DeviceBatchNorm, TrainingModeFallsBack) {
  auto o = OracleOp("BatchNormalization", 15).providers({provider(), "cpu"});
  o.attr("training_mode", int64_t{1}).random({2, 3, 4}).random({3}).random({3}).random({3});
  EXPECT_EQ(o.random({3}, 0.1f, 2.0f).check(1e-5, 1e-5).provider, "cpu");
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceLayerNorm);
PI_INSTANTIATE_DEVICE_TESTS(DeviceInstanceNorm);
PI_INSTANTIATE_DEVICE_TESTS(DeviceBatchNorm);

}  // namespace
}  // namespace polyinfer
