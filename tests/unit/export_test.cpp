// Import → export → import keeps the graph, its weights and its subgraphs.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "onnx/export.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

TEST(Export, RoundTripKeepsNodesWeightsTypesAndSubgraphs) {
  test::ModelBuilder b;
  b.input("x", {-1, 2}).output("y", {-1, 2}).initializer("w", {2}, {0.5f, -1.5f});
  b.node("Identity", {"w"}, {"y"}, "id");
  auto* ifn = b.proto().mutable_graph()->add_node();
  ifn->set_op_type("If");
  ifn->set_name("branch");
  ifn->add_input("x");
  ifn->add_output("z");
  auto* then_attr = ifn->add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* tg = then_attr->mutable_g();
  tg->set_name("then");
  auto* tn = tg->add_node();
  tn->set_op_type("Identity");
  tn->add_input("w");  // an outer-scope reference
  tn->add_output("t");
  tg->add_output()->set_name("t");

  const std::string bytes = b.bytes();
  const Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  const std::string exported = export_onnx_bytes(m);
  const Model back = import_onnx_bytes(exported.data(), exported.size(), "");
  const ir::Graph& g = *back.graph;
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.inputs.at(0).type.str(), "float32[N,2]");
  EXPECT_EQ(g.initializers.at("w").to_vector<float>(), (std::vector<float>{0.5f, -1.5f}));
  EXPECT_EQ(back.opsets.at(""), 17);
  const ir::Node* if_node = nullptr;
  for (const auto& n : g.nodes)
    if (n.op_type == "If") if_node = &n;
  ASSERT_NE(if_node, nullptr);
  ASSERT_NE(if_node->attr("then_branch"), nullptr);
  EXPECT_EQ(if_node->attr("then_branch")->g->nodes.at(0).inputs.at(0), "w");
  // The outer-scope reference became an implicit input of If, so lifetimes stay right.
  EXPECT_EQ(if_node->implicit_inputs, (std::vector<std::string>{"w"}));
}

}  // namespace
}  // namespace polyinfer
