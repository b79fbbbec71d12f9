// Map values and sequences of maps (include/polyinfer/tensor.h): their construction and
// descriptions, their .pb files (MapProto, SequenceProto of maps) both ways, comparison by key,
// their types through import, inference and export, and the ai.onnx.ml operators that make and
// read them, ZipMap and DictVectorizer, against expectations written out by hand.
#include <gtest/gtest.h>
// onnx_pb.h defines ONNX_API, which the other generated headers use.
#include <onnx/onnx_pb.h>

#include <onnx/onnx-data.pb.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/compare.h"
#include "infer/infer.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/tensor_file.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

namespace fs = std::filesystem;

Tensor strings(const std::vector<std::string>& v) {
  Tensor t = Tensor::empty(DType::String, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<std::string>()[i] = v[i];
  return t;
}

Value string_map(const std::vector<std::string>& k, const std::vector<float>& v) {
  return Value::map(strings(k), Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v));
}

Value int_map(const std::vector<int64_t>& k, const std::vector<float>& v) {
  return Value::map(Tensor::from_vector<int64_t>({static_cast<int64_t>(k.size())}, k),
                    Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v));
}

// A file in the test's own temporary folder.
class TempDir {
 public:
  TempDir() : dir_(fs::temp_directory_path() / ("pi_map_" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

// Runs f, which must throw an Error whose message holds `part`.
template <class F> void expect_error(F f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one about '" << part << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

ir::TypeInfo kind(ir::TypeInfo::Kind k, DType elem = DType::Undefined) {
  ir::TypeInfo t;
  t.kind = k;
  t.elem = elem;
  return t;
}

// ---- Value ----

TEST(MapValue, KindsAndDescriptions) {
  const Value m = string_map({"a", "b", "c"}, {1, 2, 3});
  EXPECT_TRUE(m.is_map());
  EXPECT_FALSE(m.is_tensor() || m.is_sequence());
  EXPECT_EQ(m.describe(), "map<string,float32>[3]");
  EXPECT_EQ(m.key_type(), DType::String);
  EXPECT_EQ(m.elem_type(), DType::Float32);
  EXPECT_EQ(m.map_keys().to_vector<std::string>(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(m.map_values().to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_THROW(m.tensor(), Error);
  EXPECT_THROW(m.items(), Error);

  const Value s = Value::map_sequence({int_map({0, 1}, {0.25f, 0.75f}), int_map({0, 1}, {1, 0})},
                                      DType::Int64, DType::Float32);
  EXPECT_TRUE(s.is_sequence());
  EXPECT_TRUE(s.holds_maps());
  EXPECT_EQ(s.describe(), "seq<map<int64,float32>>[2 items]");
  EXPECT_EQ(s.key_type(), DType::Int64);
  EXPECT_EQ(s.elem_type(), DType::Float32);
  ASSERT_EQ(s.maps().size(), 2u);
  EXPECT_EQ(s.maps()[1].map_values().to_vector<float>(), (std::vector<float>{1, 0}));
  EXPECT_THROW(s.items(), Error);  // not a sequence of tensors
  EXPECT_THROW(s.map_keys(), Error);

  // A sequence of tensors keeps its old form and has no maps.
  const Value t = Value::sequence({Tensor::from_vector<float>({1}, {1})}, DType::Float32);
  EXPECT_FALSE(t.holds_maps());
  EXPECT_EQ(t.key_type(), DType::Undefined);
  EXPECT_THROW(t.maps(), Error);
  EXPECT_EQ(t.items().size(), 1u);
  EXPECT_EQ(Value::map_sequence({}, DType::String, DType::Float32).describe(),
            "seq<map<string,float32>>[0 items]");
}

TEST(MapValue, RefusesMalformedMaps) {
  const Tensor f3 = Tensor::from_vector<float>({3}, {1, 2, 3});
  // Float keys, keys and values of different lengths, 2-D keys.
  EXPECT_THROW(Value::map(f3, f3), Error);
  EXPECT_THROW(Value::map(Tensor::from_vector<int64_t>({2}, {1, 2}), f3), Error);
  EXPECT_THROW(Value::map(Tensor::from_vector<int64_t>({1, 3}, {1, 2, 3}), f3), Error);
  EXPECT_THROW(Value::map(Tensor(), f3), Error);
  // Integer keys of any width are keys.
  EXPECT_NO_THROW(Value::map(Tensor::from_vector<int32_t>({3}, {1, 2, 3}), f3));
  // A sequence of maps holds one map type, and only maps.
  EXPECT_THROW(Value::map_sequence({int_map({1}, {1})}, DType::String, DType::Float32), Error);
  EXPECT_THROW(Value::map_sequence({Value(f3)}, DType::Int64, DType::Float32), Error);
  EXPECT_THROW(Value::map_sequence({}, DType::Float32, DType::Float32), Error);
}

// ---- .pb files ----

TEST(MapValue, RoundTripsThroughPbFiles) {
  TempDir tmp;
  const Value m = string_map({"x", "y"}, {0.5f, -2.0f});
  write_value_pb(tmp.file("m.pb"), m, "m");
  const ir::TypeInfo map_t = kind(ir::TypeInfo::Kind::Map);
  const Value back = read_value_pb(tmp.file("m.pb"), &map_t);
  ASSERT_TRUE(back.is_map()) << back.describe();
  EXPECT_EQ(back.map_keys().to_vector<std::string>(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(back.map_values().to_vector<float>(), (std::vector<float>{0.5f, -2.0f}));

  // int32 keys and double values keep their types.
  const Value m2 = Value::map(Tensor::from_vector<int32_t>({2}, {-7, 40000}),
                              Tensor::from_vector<double>({2}, {1.25, 3.5}));
  write_value_pb(tmp.file("m2.pb"), m2, "m2");
  const Value back2 = read_value_pb(tmp.file("m2.pb"), &map_t);
  EXPECT_EQ(back2.describe(), "map<int32,float64>[2]");
  EXPECT_EQ(back2.map_keys().to_vector<int32_t>(), (std::vector<int32_t>{-7, 40000}));
  EXPECT_EQ(back2.map_values().to_vector<double>(), (std::vector<double>{1.25, 3.5}));

  // A sequence of maps, and an empty one whose types come from the declared type.
  const Value s = Value::map_sequence({int_map({3, 1}, {0.1f, 0.9f}), int_map({3, 1}, {1, 0})},
                                      DType::Int64, DType::Float32);
  write_value_pb(tmp.file("s.pb"), s, "s");
  const ir::TypeInfo seq_t = kind(ir::TypeInfo::Kind::Sequence, DType::Float32);
  const Value sback = read_value_pb(tmp.file("s.pb"), &seq_t);
  ASSERT_TRUE(sback.holds_maps()) << sback.describe();
  EXPECT_EQ(sback.describe(), "seq<map<int64,float32>>[2 items]");
  EXPECT_EQ(compare_values(sback, s, {}), "");
  EXPECT_EQ(sback.maps()[0].map_keys().to_vector<int64_t>(), (std::vector<int64_t>{3, 1}));

  const Value empty = Value::map(strings({}), Tensor::from_vector<double>({0}, {}));
  write_value_pb(tmp.file("e.pb"), empty, "e");
  const ir::TypeInfo double_map = kind(ir::TypeInfo::Kind::Map, DType::Float64);
  EXPECT_EQ(read_value_pb(tmp.file("e.pb"), &double_map).describe(), "map<string,float64>[0]");
}

// A MapProto as onnx.numpy_helper.from_dict({1: np.float32(0.5), 3: np.float32(0.25)}) writes it
// (its text form printed by Python, transcribed here), with the values in float_data instead of
// raw_data once, as another writer may put them.
TEST(MapValue, ReadsMapProtoAsOnnxWritesIt) {
  TempDir tmp;
  onnx::MapProto p;
  p.set_name("m");
  p.set_key_type(7);  // INT64
  p.add_keys(1);
  p.add_keys(3);
  auto* seq = p.mutable_values();
  seq->set_elem_type(onnx::SequenceProto::TENSOR);
  auto* v0 = seq->add_tensor_values();
  v0->set_data_type(1);
  const float half = 0.5f;
  v0->set_raw_data(&half, 4);
  auto* v1 = seq->add_tensor_values();
  v1->set_data_type(1);
  v1->add_float_data(0.25f);
  {
    std::ofstream out(tmp.file("m.pb"), std::ios::binary);
    ASSERT_TRUE(p.SerializeToOstream(&out));
  }
  const ir::TypeInfo map_t = kind(ir::TypeInfo::Kind::Map);
  const Value m = read_value_pb(tmp.file("m.pb"), &map_t);
  EXPECT_EQ(m.describe(), "map<int64,float32>[2]");
  EXPECT_EQ(m.map_keys().to_vector<int64_t>(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(m.map_values().to_vector<float>(), (std::vector<float>{0.5f, 0.25f}));

  // Malformed: more keys than values; a key too large for int8 keys; a float key type.
  auto write = [&](const onnx::MapProto& q) {
    std::ofstream out(tmp.file("bad.pb"), std::ios::binary);
    q.SerializeToOstream(&out);
  };
  onnx::MapProto bad = p;
  bad.add_keys(5);
  write(bad);
  expect_error([&] { read_value_pb(tmp.file("bad.pb"), &map_t); }, "3 keys and 2 values");
  bad = p;
  bad.set_key_type(3);  // INT8
  bad.set_keys(1, 300);
  write(bad);
  expect_error([&] { read_value_pb(tmp.file("bad.pb"), &map_t); }, "does not fit");
  bad = p;
  bad.set_key_type(1);  // FLOAT
  write(bad);
  expect_error([&] { read_value_pb(tmp.file("bad.pb"), &map_t); }, "key type 1");
}

// ---- comparison ----

TEST(MapValue, ComparesByKeyThenValue) {
  const Tolerance tol;  // rtol 1e-3, atol 1e-5
  const Value a = string_map({"a", "b", "c"}, {1, 2, 3});
  // The same entries in another order match; a value within tolerance matches.
  EXPECT_EQ(compare_values(string_map({"c", "a", "b"}, {3, 1, 2.001f}), a, tol), "");
  // A value off by more names its key.
  const std::string off = compare_values(string_map({"c", "a", "b"}, {3, 1, 2.5f}), a, tol);
  EXPECT_NE(off.find("key 'b'"), std::string::npos) << off;
  EXPECT_NE(off.find("got 2.5"), std::string::npos) << off;
  EXPECT_NE(off.find("1 of 3"), std::string::npos) << off;
  // A key the expected map has and the result lacks; a different size; other types.
  EXPECT_NE(compare_values(string_map({"a", "b", "d"}, {1, 2, 3}), a, tol).find("key 'c'"),
            std::string::npos);
  EXPECT_NE(compare_values(string_map({"a", "b"}, {1, 2}), a, tol), "");
  EXPECT_NE(compare_values(int_map({1, 2, 3}, {1, 2, 3}), a, tol), "");
  EXPECT_NE(compare_values(Value(Tensor::from_vector<float>({3}, {1, 2, 3})), a, tol), "");

  const Value s = Value::map_sequence({int_map({0, 1}, {0.25f, 0.75f}), int_map({0, 1}, {1, 0})},
                                      DType::Int64, DType::Float32);
  const Value s_swapped = Value::map_sequence(
      {int_map({1, 0}, {0.75f, 0.25f}), int_map({0, 1}, {1, 0})}, DType::Int64, DType::Float32);
  EXPECT_EQ(compare_values(s_swapped, s, tol), "");
  const Value s_off =
      Value::map_sequence({int_map({0, 1}, {0.25f, 0.75f}), int_map({0, 1}, {0.5f, 0.5f})},
                          DType::Int64, DType::Float32);
  const std::string d = compare_values(s_off, s, tol);
  EXPECT_NE(d.find("item 1"), std::string::npos) << d;
  EXPECT_NE(
      compare_values(Value::map_sequence({s.maps()[0]}, DType::Int64, DType::Float32), s, tol), "");
  // A sequence of tensors is not a sequence of maps.
  EXPECT_NE(compare_values(Value::sequence({}, DType::Float32), s, tol), "");
}

// ---- models: ZipMap, DictVectorizer and their types ----

// A one-node ai.onnx.ml model; the input and output types are set by the caller.
struct MlModel {
  onnx::ModelProto m;
  onnx::NodeProto* node;
  explicit MlModel(const std::string& op) {
    m.set_ir_version(8);
    auto* d = m.add_opset_import();
    d->set_version(17);
    auto* ml = m.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(3);
    m.mutable_graph()->set_name("g");
    node = m.mutable_graph()->add_node();
    node->set_op_type(op);
    node->set_domain("ai.onnx.ml");
    node->set_name("n");
    node->add_input("X");
    node->add_output("Y");
  }
  onnx::TypeProto* input() {
    auto* v = m.mutable_graph()->add_input();
    v->set_name("X");
    return v->mutable_type();
  }
  onnx::TypeProto* output() {
    auto* v = m.mutable_graph()->add_output();
    v->set_name("Y");
    return v->mutable_type();
  }
  void strings(const std::string& k, const std::vector<std::string>& v) {
    auto* a = node->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const auto& s : v) a->add_strings(s);
  }
  void ints(const std::string& k, const std::vector<int64_t>& v) {
    auto* a = node->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  Session load() const {
    const std::string bytes = m.SerializeAsString();
    return Session::load_bytes(bytes.data(), bytes.size(), {}, "");
  }
};

void float_tensor_type(onnx::TypeProto* t, std::vector<int64_t> dims) {
  auto* tt = t->mutable_tensor_type();
  tt->set_elem_type(1);
  for (int64_t d : dims) {
    if (d < 0)
      tt->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(tt->shape().dim_size()));
    else
      tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
}

void map_type(onnx::TypeProto* t, int key, int value) {
  auto* mt = t->mutable_map_type();
  mt->set_key_type(key);
  mt->mutable_value_type()->mutable_tensor_type()->set_elem_type(value);
}

MlModel zipmap_model(bool string_labels) {
  MlModel z("ZipMap");
  float_tensor_type(z.input(), {-1, -1});
  map_type(z.output()->mutable_sequence_type()->mutable_elem_type(), string_labels ? 8 : 7, 1);
  if (string_labels) z.strings("classlabels_strings", {"cat", "dog", "eel"});
  else
    z.ints("classlabels_int64s", {10, 20, 30});
  return z;
}

TEST(ZipMap, MakesOneMapPerRowWithInt64Labels) {
  Session s = zipmap_model(false).load();
  EXPECT_EQ(s.outputs()[0].kind, "sequence");
  EXPECT_EQ(s.outputs()[0].key_dtype, DType::Int64);
  EXPECT_EQ(s.outputs()[0].dtype, DType::Float32);
  const auto out = s.run({{"X", Tensor::from_vector<float>({2, 3}, {0.1f, 0.2f, 0.7f, 1, 0, 0})}});
  ASSERT_TRUE(out[0].holds_maps()) << out[0].describe();
  EXPECT_EQ(out[0].describe(), "seq<map<int64,float32>>[2 items]");
  const auto& maps = out[0].maps();
  ASSERT_EQ(maps.size(), 2u);
  for (const Value& m : maps)
    EXPECT_EQ(m.map_keys().to_vector<int64_t>(), (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(maps[0].map_values().to_vector<float>(), (std::vector<float>{0.1f, 0.2f, 0.7f}));
  EXPECT_EQ(maps[1].map_values().to_vector<float>(), (std::vector<float>{1, 0, 0}));
  // No rows: no maps.
  EXPECT_EQ(s.run({{"X", Tensor::from_vector<float>({0, 3}, {})}})[0].maps().size(), 0u);
  // Two columns for three labels.
  expect_error(
      [&] {
        s.run({{"X", Tensor::from_vector<float>({1, 2}, {1, 2})}});
      },
      "2 columns for 3 class labels");
}

TEST(ZipMap, TakesStringLabelsAndOneDimensionalInput) {
  MlModel z("ZipMap");
  float_tensor_type(z.input(), {3});
  map_type(z.output()->mutable_sequence_type()->mutable_elem_type(), 8, 1);
  z.strings("classlabels_strings", {"cat", "dog", "eel"});
  Session s = z.load();
  const auto out = s.run({{"X", Tensor::from_vector<float>({3}, {0.5f, 0.25f, 0.25f})}});
  ASSERT_EQ(out[0].maps().size(), 1u);  // [C] is one row
  const Value& m = out[0].maps()[0];
  EXPECT_EQ(m.describe(), "map<string,float32>[3]");
  EXPECT_EQ(m.map_keys().to_vector<std::string>(), (std::vector<std::string>{"cat", "dog", "eel"}));
  EXPECT_EQ(m.map_values().to_vector<float>(), (std::vector<float>{0.5f, 0.25f, 0.25f}));
}

TEST(ZipMap, RefusesBothOrNoLabels) {
  MlModel none("ZipMap");
  float_tensor_type(none.input(), {1, 2});
  map_type(none.output()->mutable_sequence_type()->mutable_elem_type(), 7, 1);
  expect_error([&] { none.load(); }, "classlabels_int64s");
  MlModel both = none;
  both.node = both.m.mutable_graph()->mutable_node(0);
  both.ints("classlabels_int64s", {1, 2});
  both.strings("classlabels_strings", {"a", "b"});
  expect_error([&] { both.load(); }, "classlabels_int64s");
}

// Inference gives ZipMap's output its type where the model declares none, and export writes it.
TEST(ZipMap, InfersAndExportsTheSequenceOfMapsType) {
  MlModel z("ZipMap");
  float_tensor_type(z.input(), {-1, 3});
  z.ints("classlabels_int64s", {10, 20, 30});
  auto* out = z.m.mutable_graph()->add_output();
  out->set_name("Y");  // no type
  const std::string bytes = z.m.SerializeAsString();
  Model model = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(model);
  const ir::TypeInfo* t = model.graph->type_of("Y");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->str(), "seq(map(int64,float32[]))");

  const std::string again = export_onnx_bytes(model);
  onnx::ModelProto p;
  ASSERT_TRUE(p.ParseFromString(again));
  const onnx::TypeProto& tp = p.graph().output(0).type();
  ASSERT_TRUE(tp.has_sequence_type());
  ASSERT_TRUE(tp.sequence_type().elem_type().has_map_type());
  EXPECT_EQ(tp.sequence_type().elem_type().map_type().key_type(), 7);
  EXPECT_EQ(tp.sequence_type().elem_type().map_type().value_type().tensor_type().elem_type(), 1);
  Model reimported = import_onnx_bytes(again.data(), again.size(), "");
  EXPECT_EQ(reimported.graph->type_of("Y")->str(), "seq(map(int64,float32[]))");
}

MlModel dict_model(int key, int value, int out_elem) {
  MlModel d("DictVectorizer");
  map_type(d.input(), key, value);
  d.output()->mutable_tensor_type()->set_elem_type(out_elem);
  return d;
}

TEST(DictVectorizer, LaysOutAStringKeyedMapAlongTheVocabulary) {
  // The specification's example: vocabulary [a, c, b, z], {a: 4, c: 8} -> [4, 8, 0, 0]; "q" is
  // outside the vocabulary and left out.
  MlModel d = dict_model(8, 1, 1);
  d.strings("string_vocabulary", {"a", "c", "b", "z"});
  Session s = d.load();
  EXPECT_EQ(s.inputs()[0].kind, "map");
  EXPECT_EQ(s.inputs()[0].key_dtype, DType::String);
  EXPECT_EQ(s.outputs()[0].type, "float32[1,4]");
  const auto out = s.run({{"X", string_map({"c", "q", "a"}, {8, 1, 4})}});
  ASSERT_TRUE(out[0].is_tensor());
  EXPECT_EQ(out[0].tensor().shape(), (Shape{1, 4}));
  EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{4, 8, 0, 0}));
  // An empty map gives zeros.
  const auto zeros = s.run({{"X", string_map({}, {})}});
  EXPECT_EQ(zeros[0].tensor().to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
  // The session checks the input against the declared map type.
  expect_error([&] { s.run({{"X", Tensor::from_vector<float>({2}, {1, 2})}}); }, "must be a map");
  expect_error([&] { s.run({{"X", int_map({1}, {1})}}); }, "map<int64,float32>[1]");
}

TEST(DictVectorizer, TakesInt64KeysWithDoubleAndStringValues) {
  MlModel d = dict_model(7, 11, 11);
  d.ints("int64_vocabulary", {5, -1, 7});
  Session s = d.load();
  const Value m = Value::map(Tensor::from_vector<int64_t>({2}, {7, 5}),
                             Tensor::from_vector<double>({2}, {0.125, -3.5}));
  const auto out = s.run({{"X", m}});
  EXPECT_EQ(out[0].tensor().dtype(), DType::Float64);
  EXPECT_EQ(out[0].tensor().to_vector<double>(), (std::vector<double>{-3.5, 0, 0.125}));

  MlModel ds = dict_model(7, 8, 8);
  ds.ints("int64_vocabulary", {2, 1});
  Session ss = ds.load();
  const auto sout =
      ss.run({{"X", Value::map(Tensor::from_vector<int64_t>({1}, {1}), strings({"one"}))}});
  EXPECT_EQ(sout[0].tensor().to_vector<std::string>(), (std::vector<std::string>{"", "one"}));
}

TEST(DictVectorizer, RefusesAModelWithoutOneVocabulary) {
  MlModel d = dict_model(8, 1, 1);
  expect_error([&] { d.load(); }, "string_vocabulary");
  d.strings("string_vocabulary", {"a"});
  d.ints("int64_vocabulary", {1});
  expect_error([&] { d.load(); }, "string_vocabulary");
}

}  // namespace
}  // namespace polyinfer
