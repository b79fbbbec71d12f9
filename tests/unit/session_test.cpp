// Import and Session::run checks on bad input: each is one clear Error, never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "infer/infer.h"
#include "model_builder.h"
#include "onnx/import.h"
#include "polyinfer/session.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

std::string identity_model() {
  return test::ModelBuilder()
      .input("x", {-1, 2})
      .output("y", {-1, 2})
      .node("Identity", {"x"}, {"y"})
      .bytes();
}

ErrorCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return ErrorCode::Internal;  // "no error" reads as a failure in the EXPECTs below
}

TEST(Import, RejectsTruncatedAndRandomBytes) {
  const std::string m = identity_model();
  EXPECT_EQ(code_of([&] { Session::load_bytes(m.data(), m.size() / 2); }), ErrorCode::InvalidModel);
  std::string junk(256, '\xff');
  EXPECT_EQ(code_of([&] { Session::load_bytes(junk.data(), junk.size()); }),
            ErrorCode::InvalidModel);
  EXPECT_EQ(code_of([&] { Session::load_bytes(m.data(), 0); }), ErrorCode::InvalidModel);
  EXPECT_EQ(code_of([&] { Session::load("/nonexistent/model.onnx"); }), ErrorCode::Io);
}

TEST(Import, RejectsExternalDataOutsideTheModelFolder) {
  test::ModelBuilder b;
  b.input("x", {1}).output("y", {1}).node("Identity", {"w"}, {"y"});
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(1);
  t->add_dims(1);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("../../etc/passwd");
  const auto dir = std::filesystem::temp_directory_path() / "polyinfer_ext_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "model.onnx").string();
  std::ofstream(path, std::ios::binary) << b.bytes();
  try {
    Session::load(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel);
    EXPECT_NE(std::string(e.what()).find("leaves the model's folder"), std::string::npos)
        << e.what();
  }
}

TEST(Import, UnknownOpIsUnsupportedAndNamesTheNode) {
  const std::string m = test::ModelBuilder()
                            .input("x", {1})
                            .output("y", {1})
                            .node("FrobnicateX", {"x"}, {"y"}, "frob")
                            .bytes();
  try {
    Session::load_bytes(m.data(), m.size());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp);
    EXPECT_NE(std::string(e.what()).find("FrobnicateX 'frob'"), std::string::npos) << e.what();
  }
}

TEST(Import, CyclesAndDanglingInputsAreInvalid) {
  const std::string cyc = test::ModelBuilder()
                              .input("x", {1})
                              .output("y", {1})
                              .node("Identity", {"b"}, {"a"})
                              .node("Identity", {"a"}, {"b"})
                              .node("Identity", {"a"}, {"y"})
                              .bytes();
  EXPECT_EQ(code_of([&] { Session::load_bytes(cyc.data(), cyc.size()); }), ErrorCode::InvalidModel);
  const std::string dangling = test::ModelBuilder()
                                   .input("x", {1})
                                   .output("y", {1})
                                   .node("Identity", {"nope"}, {"y"})
                                   .bytes();
  EXPECT_EQ(code_of([&] { Session::load_bytes(dangling.data(), dangling.size()); }),
            ErrorCode::InvalidModel);
}

TEST(Session, RunsAndChecksInputs) {
  const std::string m = identity_model();
  Session s = Session::load_bytes(m.data(), m.size());
  ASSERT_EQ(s.inputs().size(), 1u);
  EXPECT_EQ(s.inputs()[0].type, "float32[N,2]");
  auto out = s.run({{"x", Tensor::from_vector<float>({3, 2}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  EXPECT_EQ(code_of([&] { s.run({}); }), ErrorCode::InvalidArgument);  // missing input
  EXPECT_EQ(code_of([&] {
              s.run({{"x", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
            }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(code_of([&] {
              s.run({{"x", Tensor::from_vector<int64_t>({1, 2}, {1, 2})}});
            }),
            ErrorCode::InvalidArgument);  // wrong dtype
  EXPECT_EQ(code_of([&] {
              s.run({{"x", Tensor::from_vector<float>({1, 2}, {1, 2})}, {"z", Value()}});
            }),
            ErrorCode::InvalidArgument);  // unknown input name
}

TEST(Session, ReportsTheOptimizationLevelItRan) {
  const std::string m = identity_model();
  EXPECT_EQ(Session::load_bytes(m.data(), m.size()).optimization_level(), 3);
  SessionOptions o;
  o.optimization_level = 1;
  EXPECT_EQ(Session::load_bytes(m.data(), m.size(), o).optimization_level(), 1);
}

// Level 3's channels-last operators exist on the CPU alone: a session with another provider
// first stops at level 2, and says so (bench's JSON reports this, not the level asked for).
TEST(Session, AnotherDeviceFirstStopsAtLevelTwo) {
  PI_SKIP_WITHOUT_VULKAN();
  const std::string m = identity_model();
  SessionOptions o;
  o.providers = {"vulkan", "cpu"};
  EXPECT_EQ(Session::load_bytes(m.data(), m.size(), o).optimization_level(), 2);
  o.optimization_level = 1;
  EXPECT_EQ(Session::load_bytes(m.data(), m.size(), o).optimization_level(), 1);
}

TEST(Session, OldIrModelsListInitializersAsInputsAndTheyAreNotFeeds) {
  test::ModelBuilder b(6);
  b.proto().set_ir_version(3);
  b.input("x", {2})
      .input("w", {2})
      .output("y", {2})
      .initializer("w", {2}, {5, 6})
      .node("Identity", {"w"}, {"y"});
  const std::string bytes = b.bytes();
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  EXPECT_EQ(s.inputs().size(), 1u);
  auto out = s.run({{"x", Tensor::from_vector<float>({2}, {0, 0})}});
  EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{5, 6}));
}

// Found by tests/fuzz/fuzz_model: libonnx's shape inference read out of bounds on a ConvInteger
// whose weight rank differs from its input's. Import must check the graph first and keep
// malformed models away from it.
// Found by tests/fuzz/fuzz_model: an AveragePool with no output reached the channels-last pass,
// which indexed its first output. Import checks every standard operator's input and output
// counts against its schema (where libonnx knows the opset).
TEST(Import, AnOperatorWithTooFewOutputsIsInvalid) {
  const std::string dir = std::string(POLYINFER_SOURCE_DIR) + "/tests/data/fuzz/";
  try {
    Session::load(dir + "model_averagepool_no_output.onnx");
    FAIL() << "expected InvalidModel";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel);
    EXPECT_NE(std::string(e.what()).find("has 0 outputs; AveragePool at opset 11 gives 1 to 1"),
              std::string::npos)
        << e.what();
  }
}

// A GPT-2-like decoder's com.microsoft.MatMulNBits (ONNX Runtime's 4-bit weight-only product)
// crashed the process inside libonnx's shape inference, which the optimizer called. Now the
// model imports, infers and runs (src/providers/cpu/contrib/matmul_nbits.cpp).
TEST(Import, AComMicrosoftOperatorImportsAndRuns) {
  test::ModelBuilder b(17);
  auto* ms = b.proto().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  b.input("a", {1, 4, 32}).output("y", {});
  b.initializer("scales", {8}, std::vector<float>(8, 0.1f));
  auto* w = b.proto().mutable_graph()->add_initializer();
  w->set_name("b");
  w->set_data_type(2);  // uint8: 8 rows of one 16-byte block of 32 4-bit values
  w->add_dims(8);
  w->add_dims(1);
  w->add_dims(16);
  w->set_raw_data(std::string(8 * 16, '\x11'));
  b.node("MatMulNBits", {"a", "b", "scales"}, {"h"}, "mm");
  auto* n = test::last_node(b);
  n->set_domain("com.microsoft");
  test::set_int(n, "K", 32);
  test::set_int(n, "N", 8);
  test::set_int(n, "bits", 4);
  test::set_int(n, "block_size", 32);
  b.node("Relu", {"h"}, {"y"}, "relu");
  const std::string bytes = b.bytes();
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  // Every weight is code 1 with the default zero point 8 and scale 0.1: W = -0.7, so each
  // output is -0.7 * 32 * a = 22.4 for a = -1.
  const auto y = s.run({{"a", Tensor::from_vector<float>({1, 4, 32}, std::vector<float>(128, -1))}})
                     .at(0)
                     .tensor()
                     .to_vector<float>();
  ASSERT_EQ(y.size(), 32u);
  for (float v : y) EXPECT_NEAR(v, 22.4f, 1e-4f);
}

// Malformed models the fuzzer found crashing libonnx's shape inference, which polyinfer no
// longer calls: its own inference leaves what it cannot tell unknown and says why, and the
// kernels refuse such nodes with a clear error.
TEST(Import, MalformedModelsNeitherCrashInferenceNorLoad) {
  const std::string dir = std::string(POLYINFER_SOURCE_DIR) + "/tests/data/fuzz/";
  EXPECT_EQ(code_of([&] { Session::load(dir + "model_convinteger_rank_mismatch.onnx"); }),
            ErrorCode::InvalidModel);
  // LayerNormalization with axis -7 on a rank-4 input: loads (the kernel checks the axis when
  // it runs).
  Model ln = import_onnx_file(dir + "model_layernorm_axis_out_of_range.onnx");
  EXPECT_NO_THROW(infer::infer_types(ln));
  // AveragePool with strides [3, 0]: inference says why it left the output unknown; the kernel
  // refuses the stride when the model runs.
  const std::string zero_stride = dir + "model_averagepool_zero_stride.onnx";
  Model ap = import_onnx_file(zero_stride);
  const infer::Report r = infer::infer_types(ap);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("strides and dilations must be positive"), std::string::npos)
      << r.notes[0];
  EXPECT_EQ(code_of([&] {
              Session s = Session::load(zero_stride);
              s.run({{"x", Tensor::zeros(DType::Float32, {1, 3, 32, 32})}});
            }),
            ErrorCode::InvalidModel);
  // A Conv whose weight rank differs from its input's: the output's spatial size is unknown.
  test::ModelBuilder b;
  b.input("x", {1, 3, 3}).input("w", {1, 1, 2, 2}).output("y", {});
  b.node("Conv", {"x", "w"}, {"y"}, "conv");
  const std::string bytes = b.bytes();
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  EXPECT_NO_THROW(infer::infer_types(m));
}

}  // namespace
}  // namespace polyinfer

namespace polyinfer {
namespace {

// SessionOptions::keep_values returns intermediates after the outputs, even where the optimizer
// would otherwise fuse them away (Conv-free chain: Relu → Neg → Relu; level 3).
TEST(Session, KeptValuesComeBackAfterTheOutputs) {
  const std::string m = test::ModelBuilder()
                            .input("x", {3})
                            .output("y", {3})
                            .node("Relu", {"x"}, {"a"}, "relu")
                            .node("Neg", {"a"}, {"b"}, "neg")
                            .node("Abs", {"b"}, {"y"}, "abs")
                            .bytes();
  SessionOptions o;
  o.keep_values = {"b", "a"};
  Session s = Session::load_bytes(m.data(), m.size(), o);
  ASSERT_EQ(s.outputs().size(), 3u);
  EXPECT_EQ(s.outputs()[1].name, "b");
  EXPECT_EQ(s.outputs()[2].name, "a");
  auto out = s.run({{"x", Tensor::from_vector<float>({3}, {-1, 2, -3})}});
  EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{0, 2, 0}));
  EXPECT_EQ(out[1].tensor().to_vector<float>(), (std::vector<float>{0, -2, 0}));
  EXPECT_EQ(out[2].tensor().to_vector<float>(), (std::vector<float>{0, 2, 0}));
  o.keep_values = {"nope"};
  try {
    Session::load_bytes(m.data(), m.size(), o);
    FAIL() << "expected an error for a value no node produces";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace polyinfer
