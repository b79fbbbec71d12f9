// Level-1 passes (standard ONNX): each rewrites what it should, leaves alone what it must not,
// and the rewritten model computes what the original does. Reference kernels on both sides, so
// differences are float rounding of reordered arithmetic only.
#include "opt_test_util.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;

TEST(OptIdentity, RemovesIdentityAndInferenceDropoutKeepsOutputNames) {
  ModelBuilder b(13);
  b.input("x", {2, 3}).output("y", {2, 3}).output("z", {2, 3});
  b.node("Identity", {"x"}, {"a"}).node("Relu", {"a"}, {"r"}).node("Dropout", {"r"}, {"d"});
  b.node("Identity", {"d"}, {"y"});  // a graph output: the Dropout... chain writes y
  b.node("Sigmoid", {"y"}, {"s"}).node("Identity", {"s"}, {"z"});
  auto pass = opt::make_identity_elimination();
  Model m = test::run_pass_and_compare(b.bytes(), *pass, 4, 0);
  EXPECT_EQ(test::count_op(*m.graph, "Identity"), 0);
  EXPECT_EQ(test::count_op(*m.graph, "Dropout"), 0);
  ASSERT_EQ(m.graph->nodes.size(), 2u);
  EXPECT_EQ(m.graph->nodes[0].inputs[0], "x");
  EXPECT_EQ(m.graph->nodes[0].outputs[0], "y");
  EXPECT_EQ(m.graph->nodes[1].outputs[0], "z");
}

TEST(OptIdentity, KeepsInputToOutputIdentityAndTrainingDropout) {
  ModelBuilder b(13);
  b.input("x", {4}).output("y", {4}).output("z", {4});
  b.node("Identity", {"x"}, {"y"});  // input → output: nothing to rename
  b.node("Dropout", {"x", "ratio", "train"}, {"d"}).node("Relu", {"d"}, {"z"});
  b.initializer("ratio", {}, {0.0f});
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name("train");
  t->set_data_type(9);
  t->add_int32_data(1);
  Model m = test::import_bytes(b.bytes());
  EXPECT_EQ(opt::make_identity_elimination()->run(*m.graph), 0);
}

TEST(OptDeadNodes, RemovesUnreadChains) {
  ModelBuilder b(13);
  b.input("x", {3}).output("y", {3});
  b.node("Relu", {"x"}, {"y"}).node("Exp", {"x"}, {"e"}).node("Log", {"e"}, {"l"});
  auto pass = opt::make_dead_node_elimination();
  Model m = test::run_pass_and_compare(b.bytes(), *pass, 2, 0);
  EXPECT_EQ(m.graph->nodes.size(), 1u);
}

TEST(OptConstantFolding, FoldsConstantChainsButNotOutputsOrRandom) {
  ModelBuilder b(13);
  b.input("x", {2, 3}).output("y", {2, 3}).output("r", {2, 3});
  b.initializer("w", {3, 2}, {1, 2, 3, 4, 5, 6});
  b.node("Transpose", {"w"}, {"wt"});          // [2, 3], foldable
  b.node("Exp", {"wt"}, {"we"});               // foldable once wt is (same round: in order)
  b.node("Add", {"x", "we"}, {"y"});           // reads x: stays
  b.node("RandomUniformLike", {"wt"}, {"u"});  // random: stays
  b.node("Mul", {"u", "x"}, {"m"}).node("Mul", {"m", "m"}, {"r0"}).node("Sub", {"r0", "r0"}, {"r"});
  Model m = test::import_bytes(b.bytes());
  EXPECT_EQ(opt::make_constant_folding()->run(*m.graph), 2);
  EXPECT_EQ(test::count_op(*m.graph, "Transpose"), 0);
  EXPECT_EQ(test::count_op(*m.graph, "Exp"), 0);
  EXPECT_EQ(test::count_op(*m.graph, "RandomUniformLike"), 1);
  ASSERT_TRUE(m.graph->initializers.count("we"));
  const auto we = m.graph->initializers.at("we").to_vector<float>();
  ASSERT_EQ(we.size(), 6u);
  EXPECT_FLOAT_EQ(we[1], std::exp(3.0f));  // wt = [[1,3,5],[2,4,6]]
  EXPECT_TRUE(opt::is_topological(*m.graph));
  // Outputs computed by folded constants: y = x + exp(w^T).
  const auto in = test::random_inputs(b.bytes());
  const auto want = test::run_model(b.bytes(), 0, in);
  const auto got = test::run_model(test::export_bytes(m), 0, in);
  EXPECT_LE(test::max_rel_diff({got[0]}, {want[0]}), 0);
}

TEST(OptConstantFolding, ConstantNodeWritingAGraphOutputStays) {
  ModelBuilder b(13);
  b.input("x", {1}).output("c", {2}).output("y", {1});
  b.node("Constant", {}, {"c"});
  auto* a = test::last_node(b)->add_attribute();
  a->set_name("value_floats");
  a->set_type(onnx::AttributeProto::FLOATS);
  a->add_floats(1);
  a->add_floats(2);
  b.node("Relu", {"x"}, {"y"});
  Model m = test::import_bytes(b.bytes());
  EXPECT_EQ(opt::make_constant_folding()->run(*m.graph), 0);
}

// A Constant with a tensor value becomes that initializer directly, whatever its size (its
// data is in the model already; the size limit is for computed outputs), unless it writes a
// graph output.
TEST(OptConstantFolding, TensorConstantsBecomeInitializersOfAnySize) {
  const int64_t big = (int64_t{1} << 20) + 8;  // past the limit on computed outputs
  ModelBuilder b(13);
  b.input("x", {big}).output("y", {big}).output("c", {2});
  for (const auto& [name, n] : std::vector<std::pair<std::string, int64_t>>{{"k", big}, {"c", 2}}) {
    b.node("Constant", {}, {name});
    auto* a = test::last_node(b)->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(1);
    t->add_dims(n);
    for (int64_t i = 0; i < n; ++i) t->add_float_data(static_cast<float>(i % 7));
  }
  b.node("Add", {"x", "k"}, {"y"});
  Model m = test::import_bytes(b.bytes());
  EXPECT_EQ(opt::make_constant_folding()->run(*m.graph), 1);
  EXPECT_EQ(test::count_op(*m.graph, "Constant"), 1);  // "c" is a graph output
  ASSERT_TRUE(m.graph->initializers.count("k"));
  const auto k = m.graph->initializers.at("k").to_vector<float>();
  ASSERT_EQ(static_cast<int64_t>(k.size()), big);
  EXPECT_EQ(k[13], 6.f);
  EXPECT_EQ(k[big - 1], static_cast<float>((big - 1) % 7));
  EXPECT_TRUE(opt::is_topological(*m.graph));
}

TEST(OptShapeFolding, StaticShapeChainBecomesAConstantReshapeTarget) {
  // Flatten as exporters write it: Reshape(x, Concat(Gather(Shape(x), 0), [-1])).
  ModelBuilder b(13);
  b.input("x", {2, 3, 4}).output("y", {2, 12});
  b.node("Shape", {"x"}, {"s"});
  test::int64_initializer(b, "zero", {}, {0});
  test::int64_initializer(b, "minus1", {1}, {-1});
  test::int64_initializer(b, "axes", {1}, {0});
  b.node("Gather", {"s", "zero"}, {"n"});
  b.node("Unsqueeze", {"n", "axes"}, {"n1"});
  b.node("Concat", {"n1", "minus1"}, {"target"});
  test::set_int(test::last_node(b), "axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"});
  Model m = test::import_bytes(b.bytes());
  const auto r = opt::optimize(*m.graph, 1);
  EXPECT_EQ(m.graph->nodes.size(), 1u);
  EXPECT_EQ(test::count_op(*m.graph, "Reshape"), 1);
  ASSERT_TRUE(m.graph->initializers.count("target"));
  EXPECT_EQ(m.graph->initializers.at("target").to_vector<int64_t>(), (std::vector<int64_t>{2, -1}));
  EXPECT_FALSE(r.polyinfer_only);
  const auto in = test::random_inputs(b.bytes());
  EXPECT_EQ(test::max_rel_diff(test::run_model(test::export_bytes(m), 0, in),
                               test::run_model(b.bytes(), 0, in)),
            0);
}

TEST(OptShapeFolding, SymbolicDimensionsAreLeft) {
  ModelBuilder b(15);
  b.input("x", {-1, 3}).output("s", {2}).output("t", {1});
  b.node("Shape", {"x"}, {"s"});
  b.node("Shape", {"x"}, {"s1"});
  test::set_int(test::last_node(b), "start", 1);
  b.node("Identity", {"s1"}, {"t"});
  Model m = test::import_bytes(b.bytes());
  EXPECT_EQ(opt::make_shape_folding()->run(*m.graph), 0);
}

TEST(OptShapeFolding, Opset15StartEndSlicesTheShape) {
  ModelBuilder b(15);
  b.input("x", {2, 3, 4, 5}).output("y", {2});
  b.node("Shape", {"x"}, {"s"});
  test::set_int(test::last_node(b), "start", 1);
  test::set_int(test::last_node(b), "end", -1);
  b.node("Identity", {"s"}, {"y"});
  Model m = test::import_bytes(b.bytes());
  EXPECT_EQ(opt::make_shape_folding()->run(*m.graph), 1);
  EXPECT_EQ(m.graph->initializers.at("s").to_vector<int64_t>(), (std::vector<int64_t>{3, 4}));
}

ModelBuilder conv_bn_model(bool conv_bias, bool extra_reader) {
  ModelBuilder b(13);
  b.input("x", {2, 3, 7, 6}).output("y", {2, 4, 7, 6});
  test::random_initializer(b, "w", {4, 3, 3, 3}, 1);
  test::random_initializer(b, "b", {4}, 2);
  test::random_initializer(b, "scale", {4}, 3, 0.5f, 2.0f);
  test::random_initializer(b, "bias", {4}, 4);
  test::random_initializer(b, "mean", {4}, 5);
  test::random_initializer(b, "var", {4}, 6, 0.1f, 3.0f);
  b.node("Conv",
         conv_bias ? std::vector<std::string>{"x", "w", "b"} : std::vector<std::string>{"x", "w"},
         {"c"}, "conv");
  test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
  b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"bn"});
  test::set_float(test::last_node(b), "epsilon", 1e-3f);
  if (extra_reader) {
    b.output("c2", {2, 4, 7, 6});
    b.node("Relu", {"c"}, {"c2"});
  }
  b.node("Relu", {"bn"}, {"y"});
  return b;
}

TEST(OptConvBn, FoldsIntoWeightsWithAndWithoutConvBias) {
  for (bool bias : {false, true}) {
    auto pass = opt::make_conv_bn_folding();
    // Folded weights change the order of rounding: about 1e-6 relative to the output scale.
    Model m = test::run_pass_and_compare(conv_bn_model(bias, false).bytes(), *pass, 1, 2e-6);
    EXPECT_EQ(test::count_op(*m.graph, "BatchNormalization"), 0);
    ASSERT_EQ(test::count_op(*m.graph, "Conv"), 1);
    EXPECT_EQ(m.graph->nodes[0].name, "conv");
    EXPECT_EQ(m.graph->nodes[0].outputs[0], "bn");
  }
}

TEST(OptConvBn, ConvOutputWithAnotherReaderIsLeft) {
  Model m = test::import_bytes(conv_bn_model(true, true).bytes());
  EXPECT_EQ(opt::make_conv_bn_folding()->run(*m.graph), 0);
}

TEST(OptConvBn, AnEpsilonOfTheWrongTypeIsAnErrorNotTheDefault) {
  ModelBuilder b = conv_bn_model(true, false);
  auto* bn = b.proto().mutable_graph()->mutable_node(1);
  ASSERT_EQ(bn->op_type(), "BatchNormalization");
  bn->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);  // epsilon stored as an int
  bn->mutable_attribute(0)->set_i(1);
  Model m = test::import_bytes(b.bytes());
  try {
    opt::make_conv_bn_folding()->run(*m.graph);
    FAIL() << "folding used a default epsilon";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel);
    EXPECT_NE(std::string(e.what()).find("'epsilon' must be a float"), std::string::npos)
        << e.what();
  }
}

TEST(OptGemm, TwoDimensionalMatMulPlusBiasBecomesGemm) {
  ModelBuilder b(13);
  b.input("x", {3, 5}).output("y", {3, 4}).output("z", {2, 3, 4});
  b.input("x3", {2, 3, 5});
  test::random_initializer(b, "w", {5, 4}, 1);
  test::random_initializer(b, "bias", {4}, 2);
  b.node("MatMul", {"x", "w"}, {"mm"}, "fc").node("Add", {"bias", "mm"}, {"y"});
  b.node("MatMul", {"x3", "w"}, {"mm3"}).node("Add", {"mm3", "bias"}, {"z"});  // 3-D A: stays
  auto pass = opt::make_matmul_add_to_gemm();
  Model m = test::run_pass_and_compare(b.bytes(), *pass, 1, 1e-6);
  EXPECT_EQ(test::count_op(*m.graph, "Gemm"), 1);
  EXPECT_EQ(test::count_op(*m.graph, "MatMul"), 1);
}

// ReduceMean over H and W (torch's x.mean([2, 3])) becomes GlobalAveragePool, with a Flatten
// where keepdims=0; other reductions stay, as do those of other ranks. Axes as an attribute
// (opset 13) and as a constant input (opset 18), negative ones included.
TEST(OptReduceMeanToPool, SpatialMeansBecomePoolsOtherReductionsStay) {
  for (int opset : {13, 18}) {
    SCOPED_TRACE(opset);
    ModelBuilder b(opset);
    b.input("x", {2, 5, 3, 4}).input("v", {2, 3, 4, 6, 5});
    b.output("kept", {2, 5, 1, 1}).output("flat", {2, 5}).output("v_mean", {2, 3});
    b.output("channel_mean", {2, 1, 3, 4}).output("h_mean", {2, 5, 4});
    auto reduce = [&](const std::string& in, std::vector<int64_t> axes, int64_t keep,
                      const std::string& out) {
      std::vector<std::string> ins = {in};
      if (opset >= 18) {
        test::int64_initializer(b, out + "_axes", {static_cast<int64_t>(axes.size())}, axes);
        ins.push_back(out + "_axes");
      }
      b.node("ReduceMean", ins, {out}, out);
      if (opset < 18) test::set_ints(test::last_node(b), "axes", axes);
      test::set_int(test::last_node(b), "keepdims", keep);
    };
    reduce("x", {2, 3}, 1, "kept");
    reduce("x", {-1, -2}, 0, "flat");
    reduce("v", {2, 3, 4}, 0, "v_mean");  // rank 5: stays
    reduce("x", {1}, 1, "channel_mean");
    reduce("x", {2}, 0, "h_mean");
    auto pass = opt::make_reduce_mean_to_pool();
    Model m = test::run_pass_and_compare(b.bytes(), *pass, 2, 1e-6);
    EXPECT_EQ(test::count_op(*m.graph, "GlobalAveragePool"), 2);
    EXPECT_EQ(test::count_op(*m.graph, "Flatten"), 1);
    EXPECT_EQ(test::count_op(*m.graph, "ReduceMean"), 3);
  }
}

TEST(OptLevels, LevelZeroChangesNothingAndLevelOneStaysStandard) {
  Model m0 = test::import_bytes(conv_bn_model(true, false).bytes());
  const size_t before = m0.graph->nodes.size();
  EXPECT_EQ(opt::optimize(*m0.graph, 0).nodes_after, static_cast<int>(before));
  EXPECT_EQ(m0.graph->nodes.size(), before);
  Model m1 = test::import_bytes(conv_bn_model(true, false).bytes());
  const auto r = opt::optimize(*m1.graph, 1);
  EXPECT_FALSE(r.polyinfer_only);
  for (const auto& n : m1.graph->nodes) EXPECT_EQ(n.domain, "");
  EXPECT_FALSE(m1.graph->initializers.count("scale"));  // folded BN parameters are dropped
  EXPECT_THROW(opt::optimize(*m1.graph, 4), Error);
}

}  // namespace
}  // namespace polyinfer

namespace polyinfer {
namespace {

using test::ModelBuilder;

// An If whose branches read `a` from the outer graph: the Identity producing `a` must stay
// (renaming would mean rewriting the bodies). The bodies are optimized too: each branch's
// Identity goes, its first node writing the branch's output (whose name stays).
TEST(OptSubgraphs, OuterScopeReadsKeepTheirNames) {
  ModelBuilder b(13);
  b.input("x", {2}).input("c", {}, 9).output("y", {2});
  b.node("Identity", {"x"}, {"a"});
  b.node("If", {"c"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* attr = test::last_node(b)->add_attribute();
    attr->set_name(branch);
    attr->set_type(onnx::AttributeProto::GRAPH);
    auto* g = attr->mutable_g();
    g->set_name(branch);
    auto* n = g->add_node();
    n->set_op_type(std::string(branch) == "then_branch" ? "Relu" : "Neg");
    n->add_input("a");
    n->add_output("r");
    auto* n2 = g->add_node();
    n2->set_op_type("Identity");
    n2->add_input("r");
    n2->add_output("out");
    auto* o = g->add_output();
    o->set_name("out");
    auto* tt = o->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(1);
    tt->mutable_shape()->add_dim()->set_dim_value(2);
  }
  Model m = test::import_bytes(b.bytes());
  opt::optimize(*m.graph, 3);
  EXPECT_EQ(test::count_op(*m.graph, "Identity"), 1);
  ASSERT_EQ(m.graph->nodes.size(), 2u);
  const ir::Graph& then_g = *m.graph->nodes[1].attr("then_branch")->g;
  ASSERT_EQ(then_g.nodes.size(), 1u);
  EXPECT_EQ(then_g.nodes[0].inputs[0], "a");
  EXPECT_EQ(then_g.nodes[0].outputs[0], "out");
  // And the session at the default level runs it.
  SessionOptions o;
  const std::string bytes = b.bytes();
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  const auto out =
      s.run({{"x", Tensor::from_vector<float>({2}, {-1, 2})}, {"c", Tensor::scalar<bool>(false)}});
  EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{1, -2}));
}

TEST(OptIdentity, DropoutWithConstantFalseTrainingModeGoes) {
  ModelBuilder b(13);
  b.input("x", {4}).output("y", {4});
  b.node("Dropout", {"x", "ratio", "train"}, {"d", "mask"}).node("Relu", {"d"}, {"y"});
  b.initializer("ratio", {}, {0.3f});
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name("train");
  t->set_data_type(9);
  t->add_int32_data(0);
  auto pass = opt::make_identity_elimination();
  Model m = test::run_pass_and_compare(b.bytes(), *pass, 1, 0);
  EXPECT_EQ(m.graph->nodes.size(), 1u);
}

// torch's AvgPool2d export: a Pad of all-zero pads (a constant input from opset 11, an attribute
// before) before the pool passes its input through; non-zero or run-time pads stay.
TEST(OptIdentity, ZeroPadGoesOtherPadsStay) {
  ModelBuilder b(13);
  b.input("x", {1, 2, 4, 4}).input("p", {8}, 7).output("y", {1, 2, 2, 2}).output("z", {1, 2, 6, 6});
  b.output("w", {1, 2, 4, 4});
  test::int64_initializer(b, "zeros", {8}, {0, 0, 0, 0, 0, 0, 0, 0});
  test::int64_initializer(b, "ones", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  b.node("Pad", {"x", "zeros"}, {"a"}).node("AveragePool", {"a"}, {"y"});
  test::set_ints(test::last_node(b), "kernel_shape", {2, 2});
  test::set_ints(test::last_node(b), "strides", {2, 2});
  b.node("Pad", {"x", "ones"}, {"z"});
  b.node("Pad", {"x", "p"}, {"w"});  // pads known only at run time
  Model m = test::import_bytes(b.bytes());
  EXPECT_EQ(opt::make_identity_elimination()->run(*m.graph), 1);
  EXPECT_EQ(test::count_op(*m.graph, "Pad"), 2);
  EXPECT_EQ(m.graph->nodes[0].op_type, "AveragePool");
  EXPECT_EQ(m.graph->nodes[0].inputs[0], "x");

  // The rewritten graph computes the same: opset 13 (pads input) and opset 10 (attribute).
  ModelBuilder b13(13);
  b13.input("x", {1, 2, 4, 4}).output("y", {1, 2, 2, 2});
  test::int64_initializer(b13, "zeros", {8}, {0, 0, 0, 0, 0, 0, 0, 0});
  b13.node("Pad", {"x", "zeros"}, {"a"}).node("AveragePool", {"a"}, {"y"});
  test::set_ints(test::last_node(b13), "kernel_shape", {2, 2});
  test::set_ints(test::last_node(b13), "strides", {2, 2});
  auto pass = opt::make_identity_elimination();
  test::run_pass_and_compare(b13.bytes(), *pass, 1, 0);

  ModelBuilder b10(10);
  b10.input("x", {1, 2, 4, 4}).output("y", {1, 2, 4, 4});
  b10.node("Pad", {"x"}, {"a"});
  test::set_ints(test::last_node(b10), "pads", {0, 0, 0, 0, 0, 0, 0, 0});
  test::set_string(test::last_node(b10), "mode", "reflect");
  b10.node("Relu", {"a"}, {"y"});
  Model m10 = test::run_pass_and_compare(b10.bytes(), *pass, 1, 0);
  EXPECT_EQ(test::count_op(*m10.graph, "Pad"), 0);
}

TEST(OptConstantFolding, HugeOutputsStayNodes) {
  ModelBuilder b(13);
  b.input("x", {1}).output("y", {1});
  test::int64_initializer(b, "shape", {2}, {4096, 4096});
  b.node("ConstantOfShape", {"shape"}, {"big"});
  b.node("ReduceSum", {"big"}, {"s"});
  test::set_int(test::last_node(b), "keepdims", 0);
  b.node("Add", {"x", "s"}, {"y"});
  Model m = test::import_bytes(b.bytes());
  opt::make_constant_folding()->run(*m.graph);
  EXPECT_EQ(test::count_op(*m.graph, "ConstantOfShape"), 1);
  EXPECT_FALSE(m.graph->initializers.count("big"));
}

}  // namespace
}  // namespace polyinfer
