// Weights left in the model file until first use (core/deferred.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/deferred.h"
#include "model_builder.h"
#include "onnx/import.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

// Bytes in a vector, standing in for a mapped file; counts the releases.
class VectorSource final : public DeferredSource {
 public:
  explicit VectorSource(std::vector<float> v, size_t byte_offset = 0)
      : bytes_(v.size() * sizeof(float) + byte_offset) {
    std::memcpy(bytes_.data() + byte_offset, v.data(), v.size() * sizeof(float));
  }
  const char* at(size_t offset) const { return bytes_.data() + offset; }
  char* mutable_at(size_t offset) { return bytes_.data() + offset; }
  void release(const void* p, size_t n) const override {
    ++releases;
    released_bytes += n;
  }
  mutable int releases = 0;
  mutable size_t released_bytes = 0;

 private:
  std::vector<char> bytes_;
};

TEST(DeferredTensor, ReadsItsSourceUntilFirstAccessThenOwnsACopy) {
  auto src = std::make_shared<VectorSource>(std::vector<float>{1, 2, 3, 4});
  Tensor t = make_deferred(DType::Float32, {2, 2}, src->at(0), src);
  EXPECT_TRUE(is_deferred(t));
  EXPECT_EQ(t.peek_bytes(), src->at(0));  // read in place, no copy made
  const float changed = 9;
  std::memcpy(src->mutable_at(0), &changed, sizeof(float));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{9, 2, 3, 4}));  // the source as it is now
  EXPECT_FALSE(is_deferred(t));
  EXPECT_EQ(src->releases, 1);
  EXPECT_EQ(src->released_bytes, 4 * sizeof(float));
  EXPECT_NE(t.peek_bytes(), src->at(0));
  const float later = 7;
  std::memcpy(src->mutable_at(0), &later, sizeof(float));
  EXPECT_EQ(t.data<float>()[0], 9);  // its own copy from then on
}

TEST(DeferredTensor, AnUnalignedSourceGivesAnAlignedCopy) {
  auto src = std::make_shared<VectorSource>(std::vector<float>{1.5f, -2, 3}, 1);
  Tensor t = make_deferred(DType::Float32, {3}, src->at(1), src);
  EXPECT_EQ(t.peek_bytes(), src->at(1));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % alignof(float), 0u);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1.5f, -2, 3}));
}

TEST(DeferredTensor, ViewsShareTheCopyAndClonesLeaveTheOriginalDeferred) {
  auto src = std::make_shared<VectorSource>(std::vector<float>{1, 2, 3, 4, 5, 6});
  Tensor t = make_deferred(DType::Float32, {2, 3}, src->at(0), src);
  Tensor c = t.clone();
  EXPECT_TRUE(is_deferred(t));
  EXPECT_FALSE(is_deferred(c));
  EXPECT_EQ(c.to_vector<float>(), t.to_vector<float>());
  Tensor a = make_deferred(DType::Float32, {2, 3}, src->at(0), src);
  Tensor v = a.reshaped({3, 2});
  v.data<float>()[5] = 60;  // materializes the storage both handles share
  EXPECT_FALSE(is_deferred(a));
  EXPECT_EQ(a.data<float>()[5], 60);
}

TEST(DeferredTensor, FreedUnreadItReleasesItsBytesOnce) {
  auto src = std::make_shared<VectorSource>(std::vector<float>(16, 1));
  { Tensor t = make_deferred(DType::Float32, {16}, src->at(0), src); }
  EXPECT_EQ(src->releases, 1);
  EXPECT_EQ(src->released_bytes, 16 * sizeof(float));
}

TEST(DeferredTensor, MaterializeAllCopiesTheLiveOnes) {
  auto src = std::make_shared<VectorSource>(std::vector<float>{1, 2, 3, 4});
  Tensor kept = make_deferred(DType::Float32, {2}, src->at(0), src);
  { Tensor dropped = make_deferred(DType::Float32, {2}, src->at(8), src); }
  EXPECT_EQ(src->releases, 1);
  src->materialize_all();
  EXPECT_FALSE(is_deferred(kept));
  EXPECT_EQ(src->releases, 2);
  std::memset(src->mutable_at(0), 0, 16);
  EXPECT_EQ(kept.to_vector<float>(), (std::vector<float>{1, 2}));
}

// y = relu(x @ W + B) * S, x [32,64]: W is prepacked by the MatMul kernel, S stays a constant
// the Mul reads on every run. Each weight is over the 4 KiB up to which the import copies.
std::string dense_model(const std::vector<float>& w, const std::vector<float>& b,
                        const std::vector<float>& s) {
  test::ModelBuilder m;
  m.input("x", {32, 64}).output("y", {32, 64});
  m.raw_initializer("W", {64, 64}, w).raw_initializer("B", {32, 64}, b);
  m.raw_initializer("S", {32, 64}, s).int64_initializer("small", {2}, {32, 64});
  m.node("MatMul", {"x", "W"}, {"xw"}, "mm");
  m.node("Add", {"xw", "B"}, {"a"}, "add");
  m.node("Relu", {"a"}, {"r"}, "relu");
  m.node("Mul", {"r", "S"}, {"y"}, "scale");
  return m.bytes();
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const auto dir = std::filesystem::temp_directory_path() / "polyinfer_deferred_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

TEST(DeferredImport, LargeRawWeightsStayInTheFileWhenAsked) {
  const auto w = test::random_values(64 * 64, 1), b = test::random_values(2048, 2);
  const std::string path = write_temp("import.onnx", dense_model(w, b, b));
  ImportOptions opts;
  opts.defer_weights = true;
  const Model m = import_onnx_file(path, opts);
  ASSERT_NE(m.deferred, nullptr);
  EXPECT_TRUE(is_deferred(m.graph->initializers.at("W")));
  EXPECT_TRUE(is_deferred(m.graph->initializers.at("B")));
  EXPECT_FALSE(is_deferred(m.graph->initializers.at("small")));  // 16 bytes: copied
  EXPECT_EQ(m.graph->initializers.at("W").to_vector<float>(), w);
  const Model copied = import_onnx_file(path);  // the default copies everything
  EXPECT_EQ(copied.deferred, nullptr);
  EXPECT_FALSE(is_deferred(copied.graph->initializers.at("B")));
}

// A session never reads its model file after creation: truncated under it, it still runs (a
// weight read from the file would fault: SIGBUS) and gives the same outputs.
TEST(DeferredImport, ASessionOutlivesItsModelFileBeingTruncated) {
  const auto w = test::random_values(64 * 64, 3), b = test::random_values(2048, 4),
             sc = test::random_values(2048, 6);
  const std::string path = write_temp("truncated.onnx", dense_model(w, b, sc));
  const Tensor x = Tensor::from_vector<float>({32, 64}, test::random_values(2048, 5));
  std::vector<float> expected;
  {
    Session fresh = Session::load(path);
    expected = fresh.run({{"x", x}})[0].tensor().to_vector<float>();
  }
  // Checked against a plain reference, so that the comparison below means something.
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 64; ++c) {
      double v = b[r * 64 + c];
      for (int k = 0; k < 64; ++k) v += double(x.data<float>()[r * 64 + k]) * w[k * 64 + c];
      ASSERT_NEAR(expected[r * 64 + c], std::max(v, 0.0) * sc[r * 64 + c], 1e-4) << r << "," << c;
    }
  Session s = Session::load(path);
  std::filesystem::resize_file(path, 0);
  EXPECT_EQ(s.run({{"x", x}})[0].tensor().to_vector<float>(), expected);
}

// The prepacking kernels (Winograd, im2col, fused pointwise+depthwise, oneDNN's 1x1 and Gemm,
// the packed MatMul) read weights where the file put them, at any address: names of 0-3 extra
// characters shift every weight's offset in the file. Each such session must give what the
// same model loaded from memory (every weight copied, aligned) gives, bit for bit.
std::string conv_stack(const std::string& pad) {
  test::ModelBuilder m;
  m.input("x", {1, 16, 64, 64}).output("y1", {1, 40}).output("y2", {1, 48});
  uint32_t seed = 10;
  auto weight = [&](const std::string& name, std::vector<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    m.raw_initializer(name + pad, dims, test::random_values(n, seed++, -0.2f, 0.2f));
    return name + pad;
  };
  auto conv = [&](const std::string& x, const std::string& w, const std::string& y, int64_t k,
                  int64_t stride, int64_t group) {
    m.node("Conv", {x, w}, {y}, y);
    test::set_ints(test::last_node(m), "kernel_shape", {k, k});
    test::set_ints(test::last_node(m), "strides", {stride, stride});
    const int64_t p = k / 2;
    test::set_ints(test::last_node(m), "pads", {p, p, p, p});
    test::set_int(test::last_node(m), "group", group);
  };
  conv("x", weight("w_winograd", {32, 16, 3, 3}), "c1", 3, 1, 1);
  m.node("Relu", {"c1"}, {"r1"});
  conv("r1", weight("w_im2col", {32, 32, 3, 3}), "c2", 3, 2, 1);
  conv("c2", weight("w_expand", {256, 32, 1, 1}), "c3", 1, 1, 1);
  m.node("Relu", {"c3"}, {"r3"});
  conv("r3", weight("w_depthwise", {256, 1, 3, 3}), "c4", 3, 1, 256);
  conv("c4", weight("w_project", {32, 256, 1, 1}), "c5", 1, 1, 1);
  m.node("GlobalAveragePool", {"c5"}, {"g"});
  m.node("Flatten", {"g"}, {"f"});
  m.node("Gemm", {"f", weight("w_gemm", {40, 32})}, {"y1"});
  test::set_int(test::last_node(m), "transB", 1);
  m.node("MatMul", {"f", weight("w_matmul", {32, 48})}, {"y2"});
  return m.bytes();
}

TEST(DeferredImport, KernelsReadWeightsAtAnyAddressInTheFile) {
  const Tensor x = Tensor::from_vector<float>({1, 16, 64, 64}, test::random_values(65536, 9));
  int misaligned = 0;  // weights a float* could not point to: what this test is about
  for (const std::string pad : {"", "_", "__", "___"}) {
    const std::string bytes = conv_stack(pad);
    const std::string path = write_temp("stack" + pad + ".onnx", bytes);
    ImportOptions defer;
    defer.defer_weights = true;
    const Model deferred = import_onnx_file(path, defer);
    for (const auto& [name, t] : deferred.graph->initializers)
      misaligned += reinterpret_cast<uintptr_t>(t.peek_bytes()) % alignof(float) != 0;
    Session from_file = Session::load(path);
    Session from_memory = Session::load_bytes(bytes.data(), bytes.size());
    const auto a = from_file.run({{"x", x}}), b = from_memory.run({{"x", x}});
    for (size_t i = 0; i < 2; ++i)
      EXPECT_EQ(a[i].tensor().to_vector<float>(), b[i].tensor().to_vector<float>())
          << "output " << i << ", names padded by " << pad.size();
    if (pad.empty())
      for (const auto& n : from_file.placement().nodes)
        std::printf("  %s: %s\n", n.node.c_str(), n.impl.c_str());
  }
  EXPECT_GT(misaligned, 0);
}

}  // namespace
}  // namespace polyinfer
