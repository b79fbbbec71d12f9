#include <gtest/gtest.h>

#include "core/shape_util.h"
#include "polyinfer/tensor.h"

namespace polyinfer {

TEST(Tensor, FromVectorRoundTripsAndReshapesAsAView) {
  auto t = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.describe(), "float32[2,3]");
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  auto v = t.reshaped({3, 2});
  EXPECT_EQ(v.raw_data(), t.raw_data());  // a view, not a copy
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  auto c = t.clone();
  EXPECT_NE(c.raw_data(), t.raw_data());
  EXPECT_EQ(c.to_vector<float>(), t.to_vector<float>());
}

TEST(Tensor, RejectsBadShapesAndTypeMismatches) {
  EXPECT_THROW(Tensor::empty(DType::Float32, {2, -1}), Error);
  EXPECT_THROW(Tensor::empty(DType::Float32, {1 << 30, 1 << 30, 1 << 30}), Error);
  auto t = Tensor::from_vector<int64_t>({2}, {1, 2});
  EXPECT_THROW(t.data<float>(), Error);
  EXPECT_THROW(t.reshaped({3}), Error);
  EXPECT_THROW(Tensor::from_vector<float>({3}, {1, 2}), Error);
}

TEST(Tensor, StringsAndEmptyTensors) {
  auto s = Tensor::empty(DType::String, {2});
  s.data<std::string>()[0] = "a";
  s.data<std::string>()[1] = "bc";
  EXPECT_EQ(s.clone().to_vector<std::string>(), (std::vector<std::string>{"a", "bc"}));
  auto e = Tensor::empty(DType::Float32, {0, 3});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.to_vector<float>().size(), 0u);
}

// copy_from writes into the tensor's own memory, which every handle to it shares.
TEST(Tensor, CopyFromWritesIntoSharedMemoryAndChecksTheMatch) {
  auto dst = Tensor::from_vector<float>({2, 2}, {0, 0, 0, 0});
  const Tensor alias = dst;  // another handle to the same memory
  const void* where = dst.raw_data();
  dst.copy_from(Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(dst.raw_data(), where);
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  try {
    dst.copy_from(Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("float32[2,2] <- float32[4]"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(dst.copy_from(Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4})), Error);
  auto s = Tensor::empty(DType::String, {1});
  auto t = Tensor::empty(DType::String, {1});
  t.data<std::string>()[0] = "x";
  s.copy_from(t);
  EXPECT_EQ(s.to_vector<std::string>(), (std::vector<std::string>{"x"}));
}

TEST(Tensor, BorrowedMemoryIsReadInPlaceAndClonedIntoItsOwn) {
  std::vector<float> lent{1, 2, 3, 4, 5, 6};
  const Tensor b = Tensor::borrow(DType::Float32, {2, 3}, lent.data(), lent.size() * sizeof(float));
  EXPECT_EQ(b.data<float>(), lent.data());
  // A view of it (an output that is an input, reshaped) cloned: new memory, same values.
  const Tensor c = b.reshaped({3, 2}).clone();
  ASSERT_NE(c.data<float>(), lent.data());
  lent[0] = 100;
  EXPECT_EQ(c.data<float>()[0], 1.f);
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_EQ(c.data<float>()[5], 6.f);
  EXPECT_THROW(Tensor::borrow(DType::Float32, {2, 3}, lent.data(), 5 * sizeof(float)), Error);
}

TEST(Tensor, ToUnknownDeviceIsAClearError) {
  auto t = Tensor::from_vector<float>({1}, {1});
  try {
    t.to(Device::parse("cuda:3"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ProviderUnavailable);
    EXPECT_NE(std::string(e.what()).find("cuda:3"), std::string::npos);
  }
}

TEST(Value, KindsAndDescriptions) {
  Value none;
  EXPECT_TRUE(none.is_none());
  EXPECT_THROW(none.tensor(), Error);
  Value seq = Value::sequence({Tensor::from_vector<float>({1}, {1})}, DType::Float32);
  EXPECT_EQ(seq.describe(), "seq<float32>[1 items]");
  EXPECT_THROW(seq.tensor(), Error);
}

TEST(ShapeUtil, BroadcastAndAxes) {
  EXPECT_EQ(broadcast_shapes(Shape{2, 1, 3}, Shape{4, 1}, "t"), (Shape{2, 4, 3}));
  EXPECT_THROW(broadcast_shapes(Shape{2, 3}, Shape{4}, "t"), Error);
  EXPECT_EQ(broadcast_strides({4, 1}, {2, 4, 3}), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(normalize_axis(-1, 3, "t"), 2);
  EXPECT_EQ(normalize_axis(-1, 3, "t", true), 3);
  EXPECT_THROW(normalize_axis(3, 3, "t"), Error);
}

TEST(ShapeUtil, ForEachBroadcastVisitsInputOffsets) {
  const Shape out{2, 3};
  const std::vector<int64_t> s[2] = {broadcast_strides({2, 1}, out), broadcast_strides({3}, out)};
  std::vector<std::pair<int64_t, int64_t>> seen;
  for_each_broadcast<2>(out, s, [&](int64_t, int64_t a, int64_t b) { seen.push_back({a, b}); });
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, int64_t>>{
                      {0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}));
}

TEST(Device, ParsesAndPrints) {
  EXPECT_EQ(Device::parse("cuda").str(), "cuda:0");
  EXPECT_EQ(Device::parse("vulkan:2").str(), "vulkan:2");
  EXPECT_THROW(Device::parse("tpu"), Error);
  EXPECT_THROW(Device::parse("cuda:x"), Error);
}

}  // namespace polyinfer
