// The Gather kernel of each device provider (gather.comp, gather.cl; device_util.h) against
// cpu-ref: every axis (negative too) of ranks 1 to 4 and a rank-7 input, scalar and
// multi-dimensional indices, negative indices, int32 and int64 indices, at run time and as
// constants, an embedding-table lookup past a workgroup, empty indices; an out-of-range index
// failing with the CPU's error; int64 data (8-byte elements); the refusal of string data falling
// back with its reason. Gather copies: tolerance 0.
#include "device_util.h"
#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

class DeviceGather : public test::DeviceTest {};

Tensor i64(const Shape& s, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(s, v); }

TEST_P(DeviceGather, EveryAxis) {
  const std::vector<Shape> shapes = {{5}, {4, 3}, {3, 5, 2}, {2, 3, 4, 5}, {2, 1, 3, 1, 2, 1, 3}};
  for (const Shape& s : shapes) {
    const int64_t r = static_cast<int64_t>(s.size());
    for (int64_t axis = -r; axis < r; ++axis) {
      const int64_t dim = s[static_cast<size_t>(axis < 0 ? axis + r : axis)];
      const Tensor ind = i64({2, 2}, {0, dim - 1, -1, -dim});
      auto o = OracleOp("Gather", 13).providers({provider()}).attr("axis", axis).random(s);
      EXPECT_EQ(o.input(ind).check(0, 0).provider, provider()) << shape_str(s) << " " << axis;
      const auto c =
          test::check_with_constants(OracleOp("Gather", 13).attr("axis", axis),
                                     {test::random_tensor(s), ind}, {false, true}, {provider()});
      EXPECT_EQ(c.provider, provider()) << shape_str(s) << " " << axis;
    }
  }
}

TEST_P(DeviceGather, IndexShapesAndTypes) {
  // A scalar index drops the axis; int32 indices; an embedding lookup of 300 rows.
  auto r = OracleOp("Gather", 13)
               .providers({provider()})
               .attr("axis", int64_t{1})
               .random({3, 7, 2})
               .input(i64({}, {-2}))
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  r = OracleOp("Gather", 13)
          .providers({provider()})
          .random({9, 4})
          .input(Tensor::from_vector<int32_t>({5}, {8, -9, 0, 3, -1}))
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  std::vector<int64_t> tokens(300);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int64_t>((i * 37) % 1000);
  r = OracleOp("Gather", 13)
          .providers({provider()})
          .random({1000, 33})
          .input(i64({1, 300}, tokens))
          .check(0, 0);
  EXPECT_EQ(r.provider, provider());
  r = OracleOp("Gather", 13).providers({provider()}).random({4, 3}).input(i64({0}, {})).check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

TEST_P(DeviceGather, OutOfRangeFailsAsOnTheCpu) {
  for (int64_t bad : {4, -5}) {
    try {
      OracleOp("Gather", 13)
          .providers({provider()})
          .random({4, 3})
          .input(i64({2}, {0, bad}))
          .check(0, 0);
      FAIL() << "index " << bad << " ran";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("index " + std::to_string(bad) +
                                           " is out of range for a dimension of size 4"),
                std::string::npos)
          << e.what();
    }
  }
}

// Integer data (the Gathers of shapes and of int64 token tables) runs on the device, equal to
// cpu-ref element for element.
TEST_P(DeviceGather, Int64Data) {
  const auto r = OracleOp("Gather", 13)
                     .providers({provider(), "cpu"})
                     .input(i64({3, 2}, {5, -6, 7, int64_t{1} << 35, -9, 10}))
                     .input(i64({3}, {2, -3, 1}))
                     .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

// Strings never live in device memory: a Gather of strings falls back to cpu with the reason,
// and the device alone fails naming it.
TEST_P(DeviceGather, RefusalsFallBackWithTheReason) {
  test::ModelBuilder b(13);
  b.input("x", {3}, onnx::TensorProto::STRING)
      .int64_initializer("i", {2}, {2, -3})
      .node("Gather", {"x", "i"}, {"y"}, "gather")
      .output("y", {2}, onnx::TensorProto::STRING);
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.providers = {provider(), "cpu"};
  o.optimization_level = 0;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  ASSERT_EQ(s.placement().nodes.size(), 1u);
  EXPECT_EQ(s.placement().nodes[0].provider, "cpu");
  ASSERT_EQ(s.placement().fallbacks.size(), 1u);
  EXPECT_NE(s.placement().fallbacks[0].reason.find("dtype string"), std::string::npos)
      << s.placement().fallbacks[0].reason;
  Tensor x = Tensor::empty(DType::String, {3});
  x.data<std::string>()[0] = "zero";
  x.data<std::string>()[1] = "one";
  x.data<std::string>()[2] = "two";
  EXPECT_EQ(s.run({{"x", Value(x)}}).at(0).tensor().to_vector<std::string>(),
            (std::vector<std::string>{"two", "zero"}));
  o.providers = {provider()};
  try {
    Session::load_bytes(bytes.data(), bytes.size(), o);
    ADD_FAILURE() << "a Gather of strings loaded on " << provider() << " alone";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp) << e.what();
    EXPECT_NE(std::string(e.what()).find("dtype string"), std::string::npos) << e.what();
  }
}

// More elements than 2 workgroups of 256 cover: the kernel's grid-stride loop.
TEST_P(DeviceGather, PastTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 2);
  std::vector<int64_t> idx(41);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i % 7) - 3;
  auto r = OracleOp("Gather", 13)
               .providers({provider()})
               .attr("axis", int64_t{1})
               .random({3, 7, 29})
               .input(i64({41}, idx))
               .check(0, 0);
  EXPECT_EQ(r.provider, provider());
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceGather);

}  // namespace
}  // namespace polyinfer
