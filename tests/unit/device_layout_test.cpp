// The data-movement kernels of each device provider (vulkan, opencl; device_util.h) against
// cpu-ref: Transpose (every permutation of rank 3, the default reversal, rank 6) and Concat (every
// axis, unequal parts, one part, an empty part) on the strided copy (copy.comp, copy.cl); Reshape,
// Flatten, Squeeze, Unsqueeze and Identity as views, with their shape and axes inputs given at run
// time and as constants; int64 data (shape arithmetic) on both; elements of 1, 2 and 8 bytes
// through Transpose, Concat, Slice, Tile, Gather and Pad; the rank refusals falling back. Copies
// are exact: tolerance 0.
#include <algorithm>
#include <cstring>

#include "device_util.h"
#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

using test::OracleOp;

Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>({n}, v);
}

class DeviceLayout : public test::DeviceTest {};

// The element sizes besides 4 bytes, each an odd number of elements so that neighbouring
// work-items write within one 32-bit word: uint8, int8, bool (1 byte), float16 (2), float64 (8).
std::vector<Tensor> element_sizes(const Shape& shape) {
  const int64_t n = shape_numel(shape);
  std::vector<uint8_t> u8(n);
  std::vector<int8_t> i8(n);
  std::vector<Float16> f16(n);
  std::vector<double> f64(n);
  for (int64_t i = 0; i < n; ++i) {
    u8[i] = static_cast<uint8_t>(i * 37 + 200);
    i8[i] = static_cast<int8_t>(i * 29 - 100);
    f16[i] = Float16(0.25f * static_cast<float>(i) - 3.0f);
    f64[i] = 1.0 / static_cast<double>(i + 1) - 0.3 * static_cast<double>(i);
  }
  Tensor b = Tensor::empty(DType::Bool, shape);
  for (int64_t i = 0; i < n; ++i) b.data<bool>()[i] = (i * 7) % 3 == 0;
  return {Tensor::from_vector<uint8_t>(shape, u8), Tensor::from_vector<int8_t>(shape, i8), b,
          Tensor::from_vector<Float16>(shape, f16), Tensor::from_vector<double>(shape, f64)};
}

TEST_P(DeviceLayout, Transpose) {
  std::vector<int64_t> perm = {0, 1, 2};
  do {
    auto r = on_device("Transpose", 13).attr("perm", perm).random({3, 5, 7}).check(0, 0);
    EXPECT_EQ(r.provider, provider()) << perm[0] << perm[1] << perm[2];
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(on_device("Transpose", 13).random({2, 3, 4, 5}).check(0, 0).provider, provider());
  auto r = on_device("Transpose", 13)
               .attr("perm", std::vector<int64_t>{5, 0, 3, 1, 4, 2})
               .random({2, 3, 1, 4, 5, 3})
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  EXPECT_EQ(on_device("Transpose", 13).random({0, 3}).check(0, 0).provider, provider());
}

TEST_P(DeviceLayout, Concat) {
  for (int64_t axis = -3; axis < 3; ++axis) {
    Shape a{2, 3, 4}, b{2, 3, 4}, c{2, 3, 4};
    const size_t d = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    b[d] = 5;
    c[d] = 1;
    auto r = on_device("Concat", 13).attr("axis", axis).random(a).random(b).random(c).check(0, 0);
    EXPECT_EQ(r.provider, provider()) << axis;
  }
  EXPECT_EQ(on_device("Concat", 13).attr("axis", int64_t{0}).random({7}).check(0, 0).provider,
            provider());
  auto r =
      on_device("Concat", 13).attr("axis", int64_t{1}).random({2, 0}).random({2, 3}).check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceLayout, ViewsWithRunTimeShapes) {
  auto r = on_device("Reshape", 14)
               .random({2, 3, 4})
               .input(Tensor::from_vector<int64_t>({3}, {0, -1, 2}))
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  for (int64_t axis : {0, 1, 2, -1})
    EXPECT_EQ(on_device("Flatten", 13).attr("axis", axis).random({2, 3, 4}).check(0, 0).provider,
              provider());
  r = on_device("Squeeze", 13)
          .random({1, 3, 1, 4})
          .input(Tensor::from_vector<int64_t>({1}, {-2}))
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  EXPECT_EQ(on_device("Squeeze", 13).random({1, 3, 1, 4}).check(0, 0).provider, provider());
  EXPECT_EQ(on_device("Squeeze", 11)
                .attr("axes", std::vector<int64_t>{0})
                .random({1, 3})
                .check(0, 0)
                .provider,
            provider());
  r = on_device("Unsqueeze", 13)
          .random({3, 4})
          .input(Tensor::from_vector<int64_t>({2}, {0, -1}))
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  EXPECT_EQ(on_device("Identity", 13).random({5, 2}).check(0, 0).provider, provider());
}

// Reshape -> Transpose -> Unsqueeze with constant shape and axes: run on the device, kept on the
// host (no per-run copy of them to the device), and the views feed a kernel correctly.
TEST_P(DeviceLayout, ViewsWithConstantShapes) {
  test::ModelBuilder b(17);
  b.input("x", {2, 12}).output("y", {1, 4, 6});
  b.int64_initializer("shape", {2}, {6, 4});
  b.int64_initializer("axes", {1}, {0});
  b.node("Reshape", {"x", "shape"}, {"r"}, "reshape");
  b.node("Transpose", {"r"}, {"t"}, "transpose");
  b.node("Unsqueeze", {"t", "axes"}, {"y"}, "unsqueeze");
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.optimization_level = 0;
  o.providers = {provider()};
  Session vk = Session::load_bytes(bytes.data(), bytes.size(), o);
  o.providers = {"cpu"};
  Session cpu = Session::load_bytes(bytes.data(), bytes.size(), o);
  const Tensor x = test::random_tensor({2, 12});
  for (int run = 0; run < 2; ++run) {
    const auto got = vk.run({{"x", Value(x)}}).at(0).tensor();
    const auto want = cpu.run({{"x", Value(x)}}).at(0).tensor();
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
  }
  EXPECT_EQ(vk.placement().device_copies, 1);  // x only
}

// Integer data (the Concats and Reshapes of shape arithmetic) runs on the device, equal to cpu-ref.
TEST_P(DeviceLayout, Int64Data) {
  auto r = OracleOp("Concat", 13)
               .providers({provider(), "cpu"})
               .attr("axis", int64_t{0})
               .input(Tensor::from_vector<int64_t>({2}, {1, -(int64_t{1} << 33)}))
               .input(Tensor::from_vector<int64_t>({1}, {3}))
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  r = OracleOp("Transpose", 13)
          .providers({provider(), "cpu"})
          .input(Tensor::from_vector<int64_t>({2, 3}, {1, 2, 3, 4, 5, int64_t{1} << 50}))
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  r = OracleOp("Reshape", 14)
          .providers({provider(), "cpu"})
          .input(Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4}))
          .input(Tensor::from_vector<int64_t>({1}, {4}))
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

// Elements of 1, 2 and 8 bytes move as bits too.
TEST_P(DeviceLayout, ElementSizes) {
  for (const Tensor& x : element_sizes({3, 5})) {
    const std::string what = dtype_name(x.dtype());
    EXPECT_EQ(on_device("Transpose", 13).input(x).check(0, 0).provider, provider()) << what;
    auto r = on_device("Concat", 13).attr("axis", int64_t{1}).input(x).input(x).check(0, 0);
    EXPECT_EQ(r.provider, provider()) << what;
    r = on_device("Slice", 13)
            .input(x)
            .input(ints({4, 2}))
            .input(ints({0, 3}))
            .input(ints({1, 0}))
            .input(ints({-2, 1}))
            .check(0, 0);
    EXPECT_EQ(r.provider, provider()) << what;
    r = on_device("Tile", 13).input(x).input(ints({2, 3})).check(0, 0);
    EXPECT_EQ(r.provider, provider()) << what;
    r = on_device("Gather", 13)
            .attr("axis", int64_t{1})
            .input(x)
            .input(ints({4, -1, 0}))
            .check(0, 0);
    EXPECT_EQ(r.provider, provider()) << what;
    r = on_device("Pad", 13)
            .attr("mode", std::string("reflect"))
            .input(x)
            .input(ints({1, 2, 2, 1}))
            .check(0, 0);
    EXPECT_EQ(r.provider, provider()) << what;
    // The constant's bits at each element size.
    Tensor value = Tensor::empty(x.dtype(), {});
    const size_t size = dtype_size(x.dtype());
    std::memcpy(value.raw_data(), static_cast<const char*>(x.raw_data()) + 7 * size, size);
    r = on_device("Pad", 13).input(x).input(ints({1, 0, 0, 3})).input(value).check(0, 0);
    EXPECT_EQ(r.provider, provider()) << what;
  }
}

// Ranks above what the kernels walk fall back to cpu with the reason.
TEST_P(DeviceLayout, RefusalsFallBack) {
  const Shape rank7 = {2, 1, 1, 1, 1, 1, 3};
  auto r = test::check_with_constants(OracleOp("Concat", 13).attr("axis", int64_t{0}),
                                      {test::random_tensor(rank7), test::random_tensor(rank7, 2)},
                                      {false, false}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("rank 7"), std::string::npos) << r.reason;
  r = test::check_with_constants(
      OracleOp("Reshape", 14), {test::random_tensor(rank7), Tensor::from_vector<int64_t>({1}, {6})},
      {false, true}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("rank 7"), std::string::npos) << r.reason;
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceLayout);

}  // namespace
}  // namespace polyinfer
