// Level-2 fusions into ai.polyinfer operators: the pattern is replaced by the fused node, and the
// fused model (run by the reference Fused* kernels) computes what the decomposed one does.
// Tolerances: the fused kernels compute the same float32 operations in the same order except
// where noted (LayerNorm's statistics, GELU's formula), so differences stay near float epsilon
// relative to the output's scale.
#include <functional>

#include "opt_test_util.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;

const std::string kPoly = "ai.polyinfer";

std::string attr_s(const ir::Node& n, const std::string& k) {
  return opt::attr_string(n, k, "<none>");
}

TEST(OptActivation, ConvGemmMatMulWithEachActivation) {
  struct Case {
    const char* op;
    const char* act;
    std::vector<float> params;
  };
  const std::vector<Case> cases = {{"Relu", "Relu", {}},
                                   {"LeakyRelu", "LeakyRelu", {0.01f}},
                                   {"Sigmoid", "Sigmoid", {}},
                                   {"Tanh", "Tanh", {}},
                                   {"HardSigmoid", "HardSigmoid", {0.2f, 0.5f}},
                                   {"HardSwish", "HardSwish", {}},
                                   {"Clip", "Clip", {-0.5f, 0.75f}}};
  for (const auto& c : cases) {
    ModelBuilder b(14);
    b.input("x", {1, 2, 5, 5}).input("a", {3, 4}).input("a3", {2, 3, 4});
    b.output("y1", {1, 3, 5, 5}).output("y2", {3, 6}).output("y3", {2, 3, 6});
    test::random_initializer(b, "w", {3, 2, 3, 3}, 1);
    test::random_initializer(b, "wb", {3}, 2);
    test::random_initializer(b, "g", {4, 6}, 3);
    test::random_initializer(b, "gb", {6}, 4);
    b.initializer("lo", {}, {-0.5f}).initializer("hi", {}, {0.75f});
    auto act = [&](const std::string& in, const std::string& out) {
      if (std::string(c.op) == "Clip") b.node("Clip", {in, "lo", "hi"}, {out});
      else
        b.node(c.op, {in}, {out});
    };
    b.node("Conv", {"x", "w", "wb"}, {"c"}, "conv");
    test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
    act("c", "y1");
    b.node("Gemm", {"a", "g", "gb"}, {"gm"}, "gemm");
    act("gm", "y2");
    b.node("MatMul", {"a3", "g"}, {"mm"}, "mm");
    act("mm", "y3");
    auto pass = opt::make_activation_fusion();
    Model m = test::run_pass_and_compare(b.bytes(), *pass, 3, 1e-6);
    ASSERT_EQ(m.graph->nodes.size(), 3u) << c.op;
    for (const auto& n : m.graph->nodes) {
      EXPECT_EQ(n.domain, kPoly);
      EXPECT_EQ(attr_s(n, "activation"), c.act);
      const auto* p = n.attr("activation_params");
      EXPECT_EQ(p ? p->floats : std::vector<float>{}, c.params) << c.op;
    }
    EXPECT_EQ(m.graph->nodes[0].op_type, "FusedConv");
    EXPECT_EQ(m.graph->nodes[0].name, "conv");
    EXPECT_EQ(m.graph->nodes[1].op_type, "FusedGemm");
    EXPECT_EQ(m.graph->nodes[2].op_type, "FusedMatMul");
    EXPECT_EQ(m.graph->opsets.at(kPoly), 1);
  }
}

TEST(OptActivation, SiluAndSharedOutputsAreHandled) {
  ModelBuilder b(13);
  b.input("x", {1, 2, 4, 4}).output("y", {1, 3, 4, 4}).output("z", {1, 3, 4, 4});
  b.output("c2", {1, 3, 4, 4});
  test::random_initializer(b, "w", {3, 2, 1, 1}, 1);
  b.node("Conv", {"x", "w"}, {"c"}).node("Sigmoid", {"c"}, {"s"}).node("Mul", {"s", "c"}, {"y"});
  // A Conv whose output is also a graph output cannot take the activation.
  b.node("Conv", {"x", "w"}, {"c2"}).node("Relu", {"c2"}, {"z"});
  // HardSwish as torch writes it below opset 14.
  b.output("h", {1, 3, 4, 4});
  b.node("Conv", {"x", "w"}, {"c3"}).node("HardSigmoid", {"c3"}, {"hs"});
  test::set_float(test::last_node(b), "alpha", 1.0f / 6);
  b.node("Mul", {"c3", "hs"}, {"h"});
  auto pass = opt::make_activation_fusion();
  Model m = test::run_pass_and_compare(b.bytes(), *pass, 2, 1e-6);
  EXPECT_EQ(test::count_op(*m.graph, "FusedConv", kPoly), 2);
  EXPECT_EQ(test::count_op(*m.graph, "Sigmoid"), 0);
  EXPECT_EQ(test::count_op(*m.graph, "HardSigmoid"), 0);
  EXPECT_EQ(test::count_op(*m.graph, "Relu"), 1);
  std::vector<std::string> acts;
  for (const auto& n : m.graph->nodes)
    if (n.op_type == "FusedConv") acts.push_back(attr_s(n, "activation"));
  EXPECT_EQ(acts, (std::vector<std::string>{"Silu", "HardSwish"}));
}

TEST(OptResidual, ConvAddReluBecomesOneFusedConv) {
  ModelBuilder b(13);
  b.input("x", {1, 4, 6, 6}).output("y", {1, 4, 6, 6});
  test::random_initializer(b, "w1", {4, 4, 3, 3}, 1);
  test::random_initializer(b, "w2", {4, 4, 3, 3}, 2);
  test::random_initializer(b, "b2", {4}, 3);
  b.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"});
  b.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2");
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  b.node("Add", {"x", "c2"}, {"s"}).node("Relu", {"s"}, {"y"});
  Model m = test::import_bytes(b.bytes());
  opt::optimize(*m.graph, 2);  // the fusions alone: level 3 adds the layout pass
  ASSERT_EQ(m.graph->nodes.size(), 2u);
  const ir::Node& f = m.graph->nodes[1];
  EXPECT_EQ(f.op_type, "FusedConv");
  EXPECT_EQ(f.name, "conv2");
  ASSERT_EQ(f.inputs.size(), 4u);
  EXPECT_EQ(f.inputs[3], "x");
  EXPECT_EQ(attr_s(f, "activation"), "Relu");
  EXPECT_EQ(attr_s(m.graph->nodes[0], "activation"), "Relu");
  const auto in = test::random_inputs(b.bytes());
  EXPECT_LE(test::max_rel_diff(test::run_model(test::export_bytes(m), 0, in),
                               test::run_model(b.bytes(), 0, in)),
            1e-6);
  // Through a Session at the default level, on the default provider.
  EXPECT_LE(test::max_rel_diff(test::run_model(b.bytes(), 3, in, "cpu"),
                               test::run_model(b.bytes(), 0, in)),
            1e-5);
}

TEST(OptResidual, BroadcastingAddIsLeft) {
  ModelBuilder b(13);
  b.input("x", {1, 4, 6, 6}).input("z", {1, 4, 1, 1}).output("y", {1, 4, 6, 6});
  test::random_initializer(b, "w", {4, 4, 1, 1}, 1);
  b.node("Conv", {"x", "w"}, {"c"}).node("Add", {"c", "z"}, {"y"});
  Model m = test::import_bytes(b.bytes());
  EXPECT_EQ(opt::make_conv_add_fusion()->run(*m.graph), 0);
}

// A BERT-like block at opset 13: LayerNorm decomposed, linear layers as MatMul + Add, GELU in
// erf form (as torch exports nn.GELU below opset 20).
ModelBuilder bert_block(int opset, bool tanh_gelu) {
  ModelBuilder b(opset);
  const int64_t H = 8, F = 16;
  b.input("x", {2, 3, H}).output("y", {2, 3, H});
  test::random_initializer(b, "gamma", {H}, 1, 0.5f, 1.5f);
  test::random_initializer(b, "beta", {H}, 2);
  test::random_initializer(b, "w1", {H, F}, 3);
  test::random_initializer(b, "b1", {F}, 4);
  test::random_initializer(b, "w2", {F, H}, 5);
  test::random_initializer(b, "b2", {H}, 6);
  b.initializer("two", {}, {2.0f}).initializer("eps", {}, {1e-5f});
  b.initializer("half", {}, {0.5f}).initializer("one", {}, {1.0f});
  b.initializer("sqrt2", {}, {1.4142135381698608f});
  b.initializer("c044", {}, {0.044715f}).initializer("k", {}, {0.7978845608f});
  b.initializer("three", {}, {3.0f});
  b.node("ReduceMean", {"x"}, {"m"});
  test::set_ints(test::last_node(b), "axes", {-1});
  b.node("Sub", {"x", "m"}, {"d"}).node("Pow", {"d", "two"}, {"p"});
  b.node("ReduceMean", {"p"}, {"v"});
  test::set_ints(test::last_node(b), "axes", {-1});
  b.node("Add", {"v", "eps"}, {"ve"}).node("Sqrt", {"ve"}, {"sd"}).node("Div", {"d", "sd"}, {"n"});
  b.node("Mul", {"n", "gamma"}, {"ng"}).node("Add", {"ng", "beta"}, {"ln"});
  b.node("MatMul", {"ln", "w1"}, {"h0"}, "fc1").node("Add", {"b1", "h0"}, {"h"});
  if (tanh_gelu) {  // HF gelu_new: 0.5 * h * (1 + tanh(k * (h + 0.044715 * h^3)))
    b.node("Pow", {"h", "three"}, {"h3"}).node("Mul", {"c044", "h3"}, {"q"});
    b.node("Add", {"h", "q"}, {"r"}).node("Mul", {"k", "r"}, {"s"}).node("Tanh", {"s"}, {"t"});
    b.node("Add", {"one", "t"}, {"a"}).node("Mul", {"half", "h"}, {"hh"});
    b.node("Mul", {"hh", "a"}, {"g"});
  } else {  // torch nn.GELU: (h * (1 + erf(h / sqrt2))) * 0.5
    b.node("Div", {"h", "sqrt2"}, {"e0"}).node("Erf", {"e0"}, {"e"});
    b.node("Add", {"e", "one"}, {"a"}).node("Mul", {"h", "a"}, {"ha"});
    b.node("Mul", {"ha", "half"}, {"g"});
  }
  b.node("MatMul", {"g", "w2"}, {"o0"}, "fc2").node("Add", {"o0", "b2"}, {"o"});
  b.node("Add", {"o", "x"}, {"y"});
  return b;
}

TEST(OptTransformer, LayerNormPatternBecomesOneNode) {
  for (int opset : {13, 17}) {
    auto pass = opt::make_layer_norm_fusion();
    // Mean and variance in one float32 pass instead of separate nodes: ~1e-6.
    Model m = test::run_pass_and_compare(bert_block(opset, false).bytes(), *pass, 1, 1e-5);
    const std::string dom = opset >= 17 ? "" : kPoly;
    ASSERT_EQ(test::count_op(*m.graph, "LayerNormalization", dom), 1) << opset;
    EXPECT_EQ(test::count_op(*m.graph, "ReduceMean"), 0);
    EXPECT_EQ(test::count_op(*m.graph, "Sqrt"), 0);
  }
}

TEST(OptTransformer, GeluPatternsBecomeGelu) {
  for (bool tanh : {false, true}) {
    auto pass = opt::make_gelu_fusion();
    Model m = test::run_pass_and_compare(bert_block(13, tanh).bytes(), *pass, 1, 1e-5);
    ASSERT_EQ(test::count_op(*m.graph, "Gelu", kPoly), 1) << tanh;
    EXPECT_EQ(test::count_op(*m.graph, tanh ? "Tanh" : "Erf"), 0);
    for (const auto& n : m.graph->nodes)
      if (n.op_type == "Gelu") {
        EXPECT_EQ(attr_s(n, "approximate"), tanh ? "tanh" : "<none>");
      }
  }
  // At opset 20 the standard operator.
  Model m = test::import_bytes(bert_block(20, false).bytes());
  EXPECT_EQ(opt::make_gelu_fusion()->run(*m.graph), 1);
  EXPECT_EQ(test::count_op(*m.graph, "Gelu", ""), 1);
}

// A tanh GELU of input x whose 0.044715·x³ term `cube` writes into "q" (nodes of its own,
// from x, "c" = 0.044715 and "two" = 2): tf2onnx's tail, 0.5 as (a · 0.5) · x.
std::string tanh_gelu_model(const std::function<void(ModelBuilder&)>& cube) {
  ModelBuilder b(13);
  b.input("x", {2, 3, 8}).input("y2", {2, 3, 8}).output("y", {2, 3, 8});
  b.initializer("c", {}, {0.044715f}).initializer("k", {}, {0.7978845608f});
  b.initializer("half", {}, {0.5f}).initializer("one", {}, {1.0f}).initializer("two", {}, {2.0f});
  b.initializer("c1", {}, {0.2f}).initializer("c2", {}, {0.223575f});
  cube(b);
  b.node("Add", {"x", "q"}, {"r"}).node("Mul", {"k", "r"}, {"s"}).node("Tanh", {"s"}, {"t"});
  b.node("Add", {"one", "t"}, {"a"}).node("Mul", {"half", "a"}, {"ah"});
  b.node("Mul", {"x", "ah"}, {"g"}).node("Add", {"g", "y2"}, {"y"});
  return b.bytes();
}

TEST(OptTransformer, TanhGeluCubeInAnyOrderBecomesGelu) {
  const std::map<std::string, std::function<void(ModelBuilder&)>> spellings = {
      {"x*(x*(c*x)) (tf2onnx)",
       [](ModelBuilder& b) {
         b.node("Mul", {"c", "x"}, {"q0"}).node("Mul", {"x", "q0"}, {"q1"});
         b.node("Mul", {"x", "q1"}, {"q"});
       }},
      {"((c*x)*x)*x",
       [](ModelBuilder& b) {
         b.node("Mul", {"c", "x"}, {"q0"}).node("Mul", {"q0", "x"}, {"q1"});
         b.node("Mul", {"q1", "x"}, {"q"});
       }},
      {"((x*x)*x)*c",
       [](ModelBuilder& b) {
         b.node("Mul", {"x", "x"}, {"q0"}).node("Mul", {"q0", "x"}, {"q1"});
         b.node("Mul", {"q1", "c"}, {"q"});
       }},
      {"(x*c)*(x*x)",
       [](ModelBuilder& b) {
         b.node("Mul", {"x", "c"}, {"q0"}).node("Mul", {"x", "x"}, {"q1"});
         b.node("Mul", {"q0", "q1"}, {"q"});
       }},
      {"Pow(x,2)*(c*x)",
       [](ModelBuilder& b) {
         b.node("Pow", {"x", "two"}, {"q0"}).node("Mul", {"c", "x"}, {"q1"});
         b.node("Mul", {"q0", "q1"}, {"q"});
       }},
      {"x*(c*(x*x))",
       [](ModelBuilder& b) {
         b.node("Mul", {"x", "x"}, {"q0"}).node("Mul", {"c", "q0"}, {"q1"});
         b.node("Mul", {"x", "q1"}, {"q"});
       }},
  };
  for (const auto& [name, cube] : spellings) {
    SCOPED_TRACE(name);
    auto pass = opt::make_gelu_fusion();
    // The Gelu's formula against the decomposed one's operations: ~1e-6.
    Model m = test::run_pass_and_compare(tanh_gelu_model(cube), *pass, 1, 1e-5);
    ASSERT_EQ(test::count_op(*m.graph, "Gelu", kPoly), 1);
    for (const auto& n : m.graph->nodes) {
      if (n.op_type == "Gelu") {
        EXPECT_EQ(attr_s(n, "approximate"), "tanh");
      }
    }
    // Gelu and the Add after it.
    EXPECT_EQ(m.graph->nodes.size(), 2u);
  }
}

TEST(OptTransformer, TanhGeluCubeOfOtherFactorsStays) {
  const std::map<std::string, std::function<void(ModelBuilder&)>> spellings = {
      {"x*(x*(c*y2)): another value",
       [](ModelBuilder& b) {
         b.node("Mul", {"c", "y2"}, {"q0"}).node("Mul", {"x", "q0"}, {"q1"});
         b.node("Mul", {"x", "q1"}, {"q"});
       }},
      {"x^4*c",
       [](ModelBuilder& b) {
         b.node("Mul", {"x", "x"}, {"q0"}).node("Mul", {"q0", "q0"}, {"q1"});
         b.node("Mul", {"q1", "c"}, {"q"});
       }},
      {"x*x*c: a square",
       [](ModelBuilder& b) {
         b.node("Mul", {"x", "x"}, {"q0"}).node("Mul", {"q0", "c"}, {"q"});
       }},
      {"(c1*x)*(c2*(x*x)): two constants",
       [](ModelBuilder& b) {
         b.node("Mul", {"c1", "x"}, {"q0"}).node("Mul", {"x", "x"}, {"q1"});
         b.node("Mul", {"c2", "q1"}, {"q2"}).node("Mul", {"q0", "q2"}, {"q"});
       }},
      {"x*(x*(k*x)): another constant",
       [](ModelBuilder& b) {
         b.node("Mul", {"k", "x"}, {"q0"}).node("Mul", {"x", "q0"}, {"q1"});
         b.node("Mul", {"x", "q1"}, {"q"});
       }},
  };
  for (const auto& [name, cube] : spellings) {
    SCOPED_TRACE(name);
    Model m = test::import_bytes(tanh_gelu_model(cube));
    EXPECT_EQ(opt::make_gelu_fusion()->run(*m.graph), 0);
  }
  // An intermediate of the cube that is a graph output too.
  Model m = test::import_bytes(tanh_gelu_model([](ModelBuilder& b) {
    b.output("q1", {2, 3, 8});
    b.node("Mul", {"c", "x"}, {"q0"}).node("Mul", {"x", "q0"}, {"q1"});
    b.node("Mul", {"x", "q1"}, {"q"});
  }));
  EXPECT_EQ(opt::make_gelu_fusion()->run(*m.graph), 0);
}

TEST(OptTransformer, WholeBlockFusesToFourNodes) {
  for (bool tanh : {false, true}) {
    const std::string bytes = bert_block(13, tanh).bytes();
    Model m = test::import_bytes(bytes);
    const auto r = opt::optimize(*m.graph, 3);
    EXPECT_TRUE(r.polyinfer_only);
    // LayerNormalization, FusedMatMul(+bias, Gelu), FusedMatMul(+bias), Add.
    ASSERT_EQ(m.graph->nodes.size(), 4u) << r.summary();
    EXPECT_EQ(m.graph->nodes[1].op_type, "FusedMatMul");
    EXPECT_EQ(attr_s(m.graph->nodes[1], "activation"), tanh ? "GeluTanh" : "Gelu");
    EXPECT_EQ(m.graph->nodes[1].inputs.size(), 3u);
    EXPECT_EQ(m.graph->nodes[2].op_type, "FusedMatMul");
    EXPECT_EQ(attr_s(m.graph->nodes[2], "activation"), "<none>");
    const auto in = test::random_inputs(bytes);
    EXPECT_LE(test::max_rel_diff(test::run_model(test::export_bytes(m), 0, in),
                                 test::run_model(bytes, 0, in)),
              1e-5);
    EXPECT_LE(
        test::max_rel_diff(test::run_model(bytes, 3, in, "cpu"), test::run_model(bytes, 0, in)),
        1e-5);
  }
}

TEST(OptTransformer, IntermediateReadElsewhereBlocksTheFusion) {
  ModelBuilder b = bert_block(13, false);
  b.output("e", {2, 3, 16});  // the Erf output is a graph output too
  Model m = test::import_bytes(b.bytes());
  EXPECT_EQ(opt::make_gelu_fusion()->run(*m.graph), 0);
}

TEST(OptFusedKernels, RejectBadAttributesWithTheNodeName) {
  ModelBuilder b(13);
  b.input("a", {2, 3}).output("y", {2, 4});
  test::random_initializer(b, "w", {3, 4}, 1);
  b.node("FusedMatMul", {"a", "w"}, {"y"}, "fm");
  auto* n = test::last_node(b);
  n->set_domain("ai.polyinfer");
  test::set_string(n, "activation", "Swish");
  auto* op = b.proto().add_opset_import();
  op->set_domain("ai.polyinfer");
  op->set_version(1);
  const std::string bytes = b.bytes();
  try {
    Session::load_bytes(bytes.data(), bytes.size());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("FusedMatMul 'fm'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace polyinfer

namespace polyinfer {
namespace {

using test::ModelBuilder;

// The fused reference kernels on the less common shapes: grouped strided Conv without bias and
// with a residual, Gemm with transB and alpha/beta, MatMul with a broadcast batch.
TEST(OptFusedKernels, OddConfigurationsMatchTheUnfusedGraph) {
  ModelBuilder b(13);
  b.input("x", {2, 4, 7, 5}).input("res", {2, 6, 4, 3}).input("a", {3, 5});
  b.input("a4", {2, 3, 1, 5});
  b.output("y1", {2, 6, 4, 3}).output("y2", {3, 4}).output("y3", {2, 3, 1, 4});
  test::random_initializer(b, "w", {6, 2, 3, 2}, 1);
  b.node("Conv", {"x", "w"}, {"c"}, "gconv");
  test::set_int(test::last_node(b), "group", 2);
  test::set_ints(test::last_node(b), "strides", {2, 2});
  test::set_ints(test::last_node(b), "pads", {1, 0, 1, 1});
  b.node("Add", {"c", "res"}, {"s"}).node("LeakyRelu", {"s"}, {"y1"});
  test::set_float(test::last_node(b), "alpha", 0.2f);
  test::random_initializer(b, "gw", {4, 5}, 2);
  test::random_initializer(b, "gc", {1, 4}, 3);
  b.node("Gemm", {"a", "gw", "gc"}, {"g"}, "gemm");
  test::set_int(test::last_node(b), "transB", 1);
  test::set_float(test::last_node(b), "alpha", 0.5f);
  test::set_float(test::last_node(b), "beta", 2.0f);
  b.node("HardSigmoid", {"g"}, {"y2"});
  test::random_initializer(b, "mw", {5, 4}, 4);
  test::random_initializer(b, "mb", {4}, 5);
  b.node("MatMul", {"a4", "mw"}, {"mm"}).node("Add", {"mm", "mb"}, {"ma"});
  b.node("Tanh", {"ma"}, {"y3"});
  const std::string bytes = b.bytes();
  Model m = test::import_bytes(bytes);
  opt::optimize(*m.graph, 2);  // the fusions alone: level 3 adds the layout pass
  ASSERT_EQ(m.graph->nodes.size(), 3u);
  EXPECT_EQ(m.graph->nodes[0].op_type, "FusedConv");
  EXPECT_EQ(m.graph->nodes[0].inputs, (std::vector<std::string>{"x", "w", "", "res"}));
  EXPECT_EQ(m.graph->nodes[1].op_type, "FusedGemm");
  EXPECT_EQ(m.graph->nodes[2].op_type, "FusedMatMul");
  const auto in = test::random_inputs(bytes);
  EXPECT_LE(test::max_rel_diff(test::run_model(test::export_bytes(m), 0, in),
                               test::run_model(bytes, 0, in)),
            1e-6);
  EXPECT_LE(test::max_rel_diff(test::run_model(bytes, 3, in, "cpu"), test::run_model(bytes, 0, in)),
            1e-5);
}

}  // namespace
}  // namespace polyinfer
