// Model-local functions inlined at import (src/onnx/inline_functions.h): the inlined model
// computes what the same graph written without functions computes.
#include <gtest/gtest.h>

#include <cmath>

#include "model_builder.h"
#include "onnx/import.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

// Act(x; slope) = -LeakyRelu(x, alpha=slope), in domain "local".
onnx::FunctionProto* add_act(onnx::ModelProto& m) {
  auto* f = m.add_functions();
  f->set_name("Act");
  f->set_domain("local");
  f->add_input("x");
  f->add_output("y");
  f->add_attribute("slope");
  auto* op = f->add_opset_import();
  op->set_domain("");
  op->set_version(13);
  auto* leaky = f->add_node();
  leaky->set_op_type("LeakyRelu");
  leaky->add_input("x");
  leaky->add_output("t");
  auto* a = leaky->add_attribute();
  a->set_name("alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_ref_attr_name("slope");
  auto* neg = f->add_node();
  neg->set_op_type("Neg");
  neg->add_input("t");
  neg->add_output("y");
  return f;
}

void add_local_opset(onnx::ModelProto& m) {
  auto* op = m.add_opset_import();
  op->set_domain("local");
  op->set_version(1);
}

void set_slope(onnx::NodeProto* n, float v) {
  auto* a = n->add_attribute();
  a->set_name("slope");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

std::vector<float> run(const std::string& bytes, const std::vector<float>& x) {
  Session s = Session::load_bytes(bytes.data(), bytes.size());
  return s.run({{"x", Tensor::from_vector<float>({1, 4}, x)}})[0].tensor().to_vector<float>();
}

TEST(InlineFunctions, CallsBecomeTheirBodiesWithAttributesBound) {
  // b = Act(Act(x; slope 0.5); default slope): the second call leaves alpha to LeakyRelu's
  // default, 0.01.
  test::ModelBuilder b(13);
  b.input("x", {1, 4})
      .output("y", {1, 4})
      .node("Act", {"x"}, {"a"}, "first")
      .node("Act", {"a"}, {"y"}, "second");
  auto& m = b.proto();
  add_local_opset(m);
  add_act(m);
  m.mutable_graph()->mutable_node(0)->set_domain("local");
  m.mutable_graph()->mutable_node(1)->set_domain("local");
  set_slope(m.mutable_graph()->mutable_node(0), 0.5f);

  test::ModelBuilder plain(13);
  plain.input("x", {1, 4})
      .output("y", {1, 4})
      .node("LeakyRelu", {"x"}, {"t1"})
      .node("Neg", {"t1"}, {"a"})
      .node("LeakyRelu", {"a"}, {"t2"})
      .node("Neg", {"t2"}, {"y"});
  auto* alpha = plain.proto().mutable_graph()->mutable_node(0)->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.5f);

  const std::vector<float> x = {-2, -0.5f, 1, 3};
  const auto got = run(b.bytes(), x), want = run(plain.bytes(), x);
  ASSERT_EQ(got.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(got[i], want[i]) << i;
  // Independently: -leaky(-leaky(x, 0.5), 0.01).
  for (size_t i = 0; i < 4; ++i) {
    const float a = -(x[i] < 0 ? 0.5f * x[i] : x[i]);
    EXPECT_FLOAT_EQ(got[i], -(a < 0 ? 0.01f * a : a)) << i;
  }

  const std::string bytes = b.bytes();
  const Model model = import_onnx_bytes(bytes.data(), bytes.size(), "");
  ASSERT_EQ(model.graph->nodes.size(), 4u);
  EXPECT_EQ(model.graph->nodes[0].name, "first/LeakyRelu_0");
  EXPECT_NE(model.graph->nodes[0].outputs[0], model.graph->nodes[2].outputs[0])
      << "the two calls' inner values are renamed apart";
}

TEST(InlineFunctions, NestedCallsAreExpanded) {
  // Twice(x; s) = Act(Act(x; s); s), binding the outer attribute through to the inner calls.
  test::ModelBuilder b(13);
  b.input("x", {1, 4}).output("y", {1, 4}).node("Twice", {"x"}, {"y"}, "call");
  auto& m = b.proto();
  add_local_opset(m);
  add_act(m);
  auto* f = m.add_functions();
  f->set_name("Twice");
  f->set_domain("local");
  f->add_input("u");
  f->add_output("v");
  f->add_attribute("s");
  for (int k = 0; k < 2; ++k) {
    auto* call = f->add_node();
    call->set_op_type("Act");
    call->set_domain("local");
    call->add_input(k == 0 ? "u" : "mid");
    call->add_output(k == 0 ? "mid" : "v");
    auto* a = call->add_attribute();
    a->set_name("slope");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_ref_attr_name("s");
  }
  m.mutable_graph()->mutable_node(0)->set_domain("local");
  auto* s = m.mutable_graph()->mutable_node(0)->add_attribute();
  s->set_name("s");
  s->set_type(onnx::AttributeProto::FLOAT);
  s->set_f(0.25f);
  const std::vector<float> x = {-4, -1, 0, 2};
  const auto got = run(b.bytes(), x);
  for (size_t i = 0; i < 4; ++i) {
    const float a = -(x[i] < 0 ? 0.25f * x[i] : x[i]);
    EXPECT_FLOAT_EQ(got[i], -(a < 0 ? 0.25f * a : a)) << i;
  }
}

void expect_error(const std::string& bytes, ErrorCode code, const std::string& text) {
  try {
    import_onnx_bytes(bytes.data(), bytes.size(), "");
    FAIL() << "imported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(InlineFunctions, BadFunctionsAreClearErrors) {
  {  // A function calling itself.
    test::ModelBuilder b(13);
    b.input("x", {1, 4}).output("y", {1, 4}).node("Loopy", {"x"}, {"y"});
    auto& m = b.proto();
    add_local_opset(m);
    m.mutable_graph()->mutable_node(0)->set_domain("local");
    auto* f = m.add_functions();
    f->set_name("Loopy");
    f->set_domain("local");
    f->add_input("x");
    f->add_output("y");
    auto* n = f->add_node();
    n->set_op_type("Loopy");
    n->set_domain("local");
    n->add_input("x");
    n->add_output("y");
    expect_error(b.bytes(), ErrorCode::InvalidModel, "calls itself");
  }
  {  // Another opset version than the model's.
    test::ModelBuilder b(13);
    b.input("x", {1, 4}).output("y", {1, 4}).node("Act", {"x"}, {"y"});
    auto& m = b.proto();
    add_local_opset(m);
    m.mutable_graph()->mutable_node(0)->set_domain("local");
    add_act(m)->mutable_opset_import(0)->set_version(11);
    expect_error(b.bytes(), ErrorCode::UnsupportedOp, "uses opset 11");
  }
  {  // A body reading a value from nowhere.
    test::ModelBuilder b(13);
    b.input("x", {1, 4}).output("y", {1, 4}).node("Act", {"x"}, {"y"});
    auto& m = b.proto();
    add_local_opset(m);
    m.mutable_graph()->mutable_node(0)->set_domain("local");
    add_act(m)->mutable_node(1)->set_input(0, "elsewhere");
    expect_error(b.bytes(), ErrorCode::InvalidModel, "reads 'elsewhere'");
  }
}

}  // namespace
}  // namespace polyinfer
