// model_split.h: the skeleton plus the moved raw_data views must be the model protobuf itself
// parses, on well-formed models, on protobuf's merge and last-wins rules, and on mutated bytes.
#include <gtest/gtest.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "model_builder.h"
#include "onnx/import.h"
#include "onnx/model_split.h"

namespace polyinfer {
namespace {

using onnx_io::split_model;
using onnx_io::SplitModel;

// A float initializer stored as raw_data, as exporters write weights.
void add_raw(onnx::ModelProto& m, const std::string& name, int elem_type, int64_t count,
             size_t element_size) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  t->add_dims(count);
  std::string bytes(static_cast<size_t>(count) * element_size, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>((i * 131 + name.size()) & 0xff);
  t->set_raw_data(bytes);
}

onnx::ModelProto weights_model() {
  test::ModelBuilder b;
  b.input("x", {2048})
      .output("y", {2048})
      .node("Add", {"x", "big"}, {"s"})
      .node("Add", {"s", "small"}, {"y"});
  add_raw(b.proto(), "big", 1, 2048, 4);    // 8 KiB float: moved out
  add_raw(b.proto(), "small", 1, 16, 4);    // 64 bytes: stays
  add_raw(b.proto(), "shape", 7, 1024, 8);  // 8 KiB int64: stays (shape inference reads it)
  add_raw(b.proto(), "half", 10, 4096, 2);  // 8 KiB float16: moved out
  return b.proto();
}

// Parses the skeleton, puts each view back, and compares with protobuf's parse of the bytes.
void expect_same_as_protobuf(const std::string& bytes, const SplitModel& split) {
  onnx::ModelProto want, got;
  ASSERT_TRUE(want.ParseFromString(bytes));
  ASSERT_TRUE(got.ParseFromString(split.skeleton));
  ASSERT_EQ(split.raw_data.size(), static_cast<size_t>(got.graph().initializer_size()));
  for (size_t i = 0; i < split.raw_data.size(); ++i)
    if (split.raw_data[i].data())
      got.mutable_graph()
          ->mutable_initializer(static_cast<int>(i))
          ->set_raw_data(std::string(split.raw_data[i]));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(want, got));
}

TEST(ModelSplit, MovesLargeNonIntegerRawDataOnly) {
  const std::string bytes = weights_model().SerializeAsString();
  SplitModel split;
  ASSERT_TRUE(split_model(bytes.data(), bytes.size(), &split));
  ASSERT_EQ(split.raw_data.size(), 4u);
  EXPECT_EQ(split.raw_data[0].size(), 8192u);    // big
  EXPECT_EQ(split.raw_data[1].data(), nullptr);  // small
  EXPECT_EQ(split.raw_data[2].data(), nullptr);  // int64
  EXPECT_EQ(split.raw_data[3].size(), 8192u);    // float16
  // The views point into the caller's bytes, not copies.
  EXPECT_GE(split.raw_data[0].data(), bytes.data());
  EXPECT_LE(split.raw_data[0].data() + split.raw_data[0].size(), bytes.data() + bytes.size());
  EXPECT_LT(split.skeleton.size(), bytes.size() - 16000);
  onnx::ModelProto skeleton;
  ASSERT_TRUE(skeleton.ParseFromString(split.skeleton));
  EXPECT_EQ(skeleton.graph().initializer(0).raw_data().size(), 8u);
  EXPECT_EQ(skeleton.graph().initializer(2).raw_data().size(), 8192u);
  expect_same_as_protobuf(bytes, split);
}

TEST(ModelSplit, ImportedTensorsEqualTheirRawData) {
  const onnx::ModelProto m = weights_model();
  const std::string bytes = m.SerializeAsString();
  const Model model = import_onnx_bytes(bytes.data(), bytes.size(), "");
  for (const auto& tp : m.graph().initializer()) {
    const Tensor& t = model.graph->initializers.at(tp.name());
    ASSERT_EQ(t.nbytes(), tp.raw_data().size()) << tp.name();
    EXPECT_EQ(std::memcmp(t.raw_data(), tp.raw_data().data(), t.nbytes()), 0) << tp.name();
  }
}

TEST(ModelSplit, FollowsProtobufMergeAndLastValueRules) {
  // Two serialized models back to back parse as one: graph fields merge, initializers append.
  onnx::ModelProto a = weights_model(), b;
  b.mutable_graph()->set_name("second");
  add_raw(b, "more", 1, 4096, 4);
  std::string bytes = a.SerializeAsString() + b.SerializeAsString();
  SplitModel split;
  ASSERT_TRUE(split_model(bytes.data(), bytes.size(), &split));
  ASSERT_EQ(split.raw_data.size(), 5u);
  EXPECT_EQ(split.raw_data[4].size(), 16384u);
  expect_same_as_protobuf(bytes, split);

  // A tensor with raw_data twice keeps the last, and a data_type given twice the last too:
  // an int64 tensor (which would stay) followed by float fields and a longer raw_data.
  onnx::TensorProto first, second;
  first.set_name("twice");
  first.set_data_type(7);
  first.add_dims(3000);
  first.set_raw_data(std::string(8192, '\x11'));
  second.set_data_type(1);
  second.set_raw_data(std::string(12000, '\x3c'));
  const std::string tensor_bytes = first.SerializeAsString() + second.SerializeAsString();
  std::string graph_bytes, model_bytes;
  {
    google::protobuf::io::StringOutputStream raw(&graph_bytes);
    google::protobuf::io::CodedOutputStream out(&raw);
    out.WriteTag((5 << 3) | 2);  // GraphProto.initializer
    out.WriteVarint32(static_cast<uint32_t>(tensor_bytes.size()));
    out.WriteString(tensor_bytes);
  }
  {
    google::protobuf::io::StringOutputStream raw(&model_bytes);
    google::protobuf::io::CodedOutputStream out(&raw);
    out.WriteTag((7 << 3) | 2);  // ModelProto.graph
    out.WriteVarint32(static_cast<uint32_t>(graph_bytes.size()));
    out.WriteString(graph_bytes);
  }
  ASSERT_TRUE(split_model(model_bytes.data(), model_bytes.size(), &split));
  ASSERT_EQ(split.raw_data.size(), 1u);
  EXPECT_EQ(split.raw_data[0], std::string(12000, '\x3c'));
  expect_same_as_protobuf(model_bytes, split);
}

TEST(ModelSplit, UnwalkableBytesAreLeftToProtobuf) {
  const std::string bytes = weights_model().SerializeAsString();
  SplitModel split;
  EXPECT_FALSE(split_model(bytes.data(), bytes.size() - 100, &split));  // truncated
  const std::string group = std::string("\x0b", 1) + bytes;             // field 1, start group
  EXPECT_FALSE(split_model(group.data(), group.size(), &split));
  const std::string long_varint(12, '\xff');
  EXPECT_FALSE(split_model(long_varint.data(), long_varint.size(), &split));
}

// Random byte mutations of a model: wherever the walk succeeds, protobuf's verdict on the
// skeleton is its verdict on the bytes, and what it parses is the same model.
TEST(ModelSplit, MutatedBytesParseAlikeAsSkeleton) {
  const std::string original = weights_model().SerializeAsString();
  std::mt19937 rng(7);
  int walked = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = original;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      // Mutate near the front (the structure) more often than inside the payloads.
      const size_t at = rng() % 4 ? rng() % 200 : rng() % bytes.size();
      bytes[at] = static_cast<char>(rng() & 0xff);
    }
    SplitModel split;
    if (!split_model(bytes.data(), bytes.size(), &split)) continue;
    ++walked;
    onnx::ModelProto want, got;
    const bool want_ok = want.ParseFromString(bytes);
    const bool got_ok = got.ParseFromString(split.skeleton);
    ASSERT_EQ(want_ok, got_ok) << "round " << round;
    if (want_ok) expect_same_as_protobuf(bytes, split);
  }
  EXPECT_GT(walked, 1000);  // the property was exercised, not skipped
}

// The file path maps the model; the result equals the in-memory import.
TEST(ModelSplit, FileImportMatchesBytesImport) {
  const std::string bytes = weights_model().SerializeAsString();
  const auto path = std::filesystem::temp_directory_path() / "polyinfer_model_split_test.onnx";
  {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const Model from_file = import_onnx_file(path.string());
  const Model from_bytes = import_onnx_bytes(bytes.data(), bytes.size(), "");
  std::filesystem::remove(path);
  ASSERT_EQ(from_file.graph->initializers.size(), from_bytes.graph->initializers.size());
  for (const auto& [name, t] : from_bytes.graph->initializers) {
    const Tensor& u = from_file.graph->initializers.at(name);
    ASSERT_EQ(u.nbytes(), t.nbytes()) << name;
    EXPECT_EQ(std::memcmp(u.raw_data(), t.raw_data(), t.nbytes()), 0) << name;
  }
}

}  // namespace
}  // namespace polyinfer
