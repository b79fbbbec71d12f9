// Pad in the optimizer: fuse-pad (src/opt/pad_fusion.cpp) folds a zero Pad into the Conv or
// AveragePool after it, and the channels-last pass keeps a Pad channels-last
// (src/opt/channels_last.cpp). Results compared with the unoptimized model on cpu-ref.
#include <gtest/gtest.h>

#include "opt/channels_last.h"
#include "opt_test_util.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;

struct PadCase {
  const char* consumer = "AveragePool";  // or "Conv"
  std::vector<int64_t> pads = {0, 0, 1, 2, 0, 0, 2, 1};
  float value = 0.f;
  const char* mode = "constant";
  std::vector<int64_t> own_pads = {};  // the consumer's pads
  bool second_reader = false;
  bool ceil_mode = false;
};

ModelBuilder pad_model(const PadCase& c) {
  ModelBuilder b(13);
  b.input("x", {2, 3, 7, 6}).output("y", {-1, -1, -1, -1});
  if (c.second_reader) b.output("p", {-1, -1, -1, -1});
  test::int64_initializer(b, "pads", {8}, c.pads);
  b.initializer("v", {}, {c.value});
  b.node("Pad", {"x", "pads", "v"}, {"p"}, "pad");
  auto* pad = b.proto().mutable_graph()->mutable_node(0);
  auto* mode = pad->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s(c.mode);
  std::vector<std::string> ins = {"p"};
  if (std::string(c.consumer) == "Conv") {
    test::random_initializer(b, "w", {4, 3, 3, 3}, 3);
    ins.push_back("w");
  }
  b.node(c.consumer, ins, {"y"}, "next");
  auto* n = b.proto().mutable_graph()->mutable_node(1);
  auto* k = n->add_attribute();
  k->set_name("kernel_shape");
  k->set_type(onnx::AttributeProto::INTS);
  for (int64_t d : {3, 3}) k->add_ints(d);
  if (c.ceil_mode) {
    auto* cm = n->add_attribute();
    cm->set_name("ceil_mode");
    cm->set_type(onnx::AttributeProto::INT);
    cm->set_i(1);
  }
  if (!c.own_pads.empty()) {
    auto* p = n->add_attribute();
    p->set_name("pads");
    p->set_type(onnx::AttributeProto::INTS);
    for (int64_t d : c.own_pads) p->add_ints(d);
  }
  return b;
}

TEST(OptPad, ZeroPadFoldsIntoAveragePoolAndConv) {
  for (const PadCase& c :
       {PadCase{}, PadCase{"Conv"},
        PadCase{"Conv", {0, 0, 1, 0, 0, 0, 0, 2}, 0.f, "constant", {1, 1, 1, 1}}}) {
    SCOPED_TRACE(std::string(c.consumer) + (c.own_pads.empty() ? "" : " with its own pads"));
    auto pass = opt::make_pad_fusion();
    Model m = test::run_pass_and_compare(pad_model(c).bytes(), *pass, 1, 1e-6);
    EXPECT_EQ(test::count_op(*m.graph, "Pad"), 0);
    ASSERT_EQ(m.graph->nodes.size(), 1u);
    const ir::Node& n = m.graph->nodes[0];
    EXPECT_EQ(n.inputs[0], "x");
    std::vector<int64_t> want = {c.pads[2], c.pads[3], c.pads[6], c.pads[7]};
    for (size_t i = 0; i < c.own_pads.size(); ++i) want[i] += c.own_pads[i];
    EXPECT_EQ(opt::attr_ints(n, "pads"), want);
    if (n.op_type == "AveragePool") {
      EXPECT_EQ(opt::attr_int(n, "count_include_pad", 0), 1);
    }
  }
}

TEST(OptPad, OtherPadsStay) {
  const std::vector<std::pair<const char*, PadCase>> cases = {
      {"non-zero value", PadCase{"AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 1.f}},
      {"reflect", PadCase{"AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 0.f, "reflect"}},
      {"channel pads", PadCase{"Conv", {0, 1, 1, 1, 0, 0, 1, 1}}},
      {"pool with pads",
       PadCase{"AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 0.f, "constant", {1, 1, 1, 1}}},
      {"second reader", PadCase{"Conv", {0, 0, 1, 1, 0, 0, 1, 1}, 0.f, "constant", {}, true}},
      {"ceil mode",
       PadCase{"AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 0.f, "constant", {}, false, true}},
  };
  for (const auto& [why, c] : cases) {
    SCOPED_TRACE(why);
    Model m = test::import_bytes(pad_model(c).bytes());
    EXPECT_EQ(opt::make_pad_fusion()->run(*m.graph), 0);
  }
}

// A reflect Pad between two convolutions: no layout transposes around it, and the same result.
TEST(OptPad, PadStaysChannelsLast) {
  ModelBuilder b(13);
  b.input("x", {2, 3, 7, 6}).output("y", {-1, -1, -1, -1});
  test::random_initializer(b, "w1", {8, 3, 1, 1}, 5);
  test::random_initializer(b, "w2", {4, 8, 3, 3}, 6);
  test::int64_initializer(b, "pads", {8}, {0, 0, 1, 2, 0, 0, 2, 1});
  b.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  b.node("Pad", {"c1", "pads"}, {"p"}, "pad");
  auto* mode = b.proto().mutable_graph()->mutable_node(1)->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("reflect");
  b.node("Conv", {"p", "w2"}, {"y"}, "conv2");
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  ASSERT_TRUE(opt::to_channels_last(*m.graph));
  EXPECT_EQ(test::count_op(*m.graph, "Transpose"), 2);  // x in, y out
  m.opsets["ai.polyinfer"] = 1;
  const auto in = test::random_inputs(bytes);
  EXPECT_LE(test::max_rel_diff(test::run_model(test::export_bytes(m), 0, in),
                               test::run_model(bytes, 0, in)),
            1e-6);
}

}  // namespace
}  // namespace polyinfer
