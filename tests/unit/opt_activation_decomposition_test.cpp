// fuse-activation-decomposition (src/opt/activation_decomposition_fusion.cpp): each spelling of
// HardSwish, HardSigmoid, SiLU and Mish becomes one node, and the rewritten model computes what
// the chain did (both on cpu-ref). Tolerance 1e-6 of the output's scale: the single operators
// compute the same function with the constants folded differently (x · clamp(x / 6 + 1/2, 0, 1)
// against x · clamp(x + 3, 0, 6) / 6; tanh(log1p(e^x)) against tanh(log(1 + e^x))), a few float
// ulps apart. Patterns with an extra reader, a wrong constant or a broadcasting one stay.
#include <functional>

#include "opt_test_util.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;

const std::string kPoly = "ai.polyinfer";
const std::vector<int64_t> kShape = {1, 4, 5, 5};

// A model y = f(x) with x = 4 · in (so x spans [-8, 8] and every Clip bound is crossed);
// `body` adds the nodes from "x" to "y".
template <class F> std::string model(int opset, F body, bool extra_output = false) {
  ModelBuilder b(opset);
  b.input("in", kShape).output("y", kShape);
  if (extra_output) b.output("extra", kShape);
  b.initializer("four", {}, {4.f});
  b.node("Mul", {"in", "four"}, {"x"});
  body(b);
  return b.bytes();
}

// Clip(v, lo, hi) at the builder's opset: bounds as inputs (11+) or attributes.
void clip(ModelBuilder& b, int opset, const std::string& v, float lo, float hi,
          const std::string& out) {
  if (opset >= 11) {
    const std::string l = out + "_lo", h = out + "_hi";
    b.initializer(l, {}, {lo}).initializer(h, {}, {hi});
    b.node("Clip", {v, l, h}, {out});
  } else {
    b.node("Clip", {v}, {out});
    test::set_float(test::last_node(b), "min", lo);
    test::set_float(test::last_node(b), "max", hi);
  }
}

// Runs the pass alone; checks it made `rewrites` rewrites, left `nodes` nodes (the x = 4 · in
// Mul included) and kept the outputs.
Model fuse(const std::string& bytes, int rewrites, size_t nodes) {
  auto pass = opt::make_activation_decomposition_fusion();
  Model m = test::run_pass_and_compare(bytes, *pass, rewrites, 1e-6);
  EXPECT_EQ(m.graph->nodes.size(), nodes);
  return m;
}

TEST(OptActivationDecomposition, HardSwishSpellings) {
  struct Case {
    const char* name;
    int opset;
    std::function<void(ModelBuilder&, int)> body;
  };
  const std::vector<Case> cases = {
      // Paddle: x · Clip(x + 3, 0, 6) / 6.
      {"paddle", 13,
       [](ModelBuilder& b, int o) {
         b.initializer("three", {1}, {3.f}).initializer("six", {1}, {6.f});
         b.node("Add", {"x", "three"}, {"a"});
         clip(b, o, "a", 0, 6, "c");
         b.node("Mul", {"x", "c"}, {"m"});
         b.node("Div", {"m", "six"}, {"y"});
       }},
      // Operands swapped, Mul by 1/6 (as an exporter rounds it), Clip attributes (opset 6).
      {"swapped-attr", 10,
       [](ModelBuilder& b, int o) {
         b.initializer("three", {}, {3.f}).initializer("sixth", {}, {0.16666667f});
         b.node("Add", {"three", "x"}, {"a"});
         clip(b, o, "a", 0, 6, "c");
         b.node("Mul", {"c", "x"}, {"m"});
         b.node("Mul", {"sixth", "m"}, {"y"});
       }},
      // x · (Clip(x + 3, 0, 6) / 6)
      {"scaled-gate", 14,
       [](ModelBuilder& b, int o) {
         b.initializer("three", {}, {3.f}).initializer("six", {}, {6.f});
         b.node("Add", {"x", "three"}, {"a"});
         clip(b, o, "a", 0, 6, "c");
         b.node("Div", {"c", "six"}, {"g"});
         b.node("Mul", {"x", "g"}, {"y"});
       }},
      // (x / 6) · Clip(x + 3, 0, 6)
      {"scaled-x", 13,
       [](ModelBuilder& b, int o) {
         b.initializer("three", {}, {3.f}).initializer("six", {}, {6.f});
         b.node("Add", {"x", "three"}, {"a"});
         clip(b, o, "a", 0, 6, "c");
         b.node("Div", {"x", "six"}, {"d"});
         b.node("Mul", {"d", "c"}, {"y"});
       }},
      // x · HardSigmoid(x, 1/6, 0.5) (torch below opset 14; Paddle's alpha 0.1666667)
      {"hardsigmoid", 13,
       [](ModelBuilder& b, int) {
         b.node("HardSigmoid", {"x"}, {"g"});
         test::set_float(test::last_node(b), "alpha", 0.1666667f);
         test::set_float(test::last_node(b), "beta", 0.5f);
         b.node("Mul", {"g", "x"}, {"y"});
       }},
      // x · Clip(x · 1/6 + 0.5, 0, 1)
      {"unit-clip", 17,
       [](ModelBuilder& b, int o) {
         b.initializer("sixth", {}, {1.f / 6}).initializer("half", {}, {0.5f});
         b.node("Mul", {"x", "sixth"}, {"s"});
         b.node("Add", {"s", "half"}, {"a"});
         clip(b, o, "a", 0, 1, "c");
         b.node("Mul", {"x", "c"}, {"y"});
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Model m = fuse(model(c.opset, [&](ModelBuilder& b) { c.body(b, c.opset); }), 1, 2);
    const ir::Node& n = m.graph->nodes.back();
    EXPECT_EQ(n.op_type, "HardSwish");
    EXPECT_EQ(n.domain, c.opset >= 14 ? "" : kPoly);
    EXPECT_EQ(n.inputs, std::vector<std::string>{"x"});
  }
}

TEST(OptActivationDecomposition, HardSigmoidSpellings) {
  // Clip(x + 3, 0, 6) / 6 → HardSigmoid(1/6, 1/2); here x = 4 · in is read by the Add alone, so
  // the affine part takes it too: HardSigmoid(in, 4/6, 1/2).
  Model a = fuse(model(13,
                       [](ModelBuilder& b) {
                         b.initializer("three", {}, {3.f}).initializer("six", {}, {6.f});
                         b.node("Add", {"x", "three"}, {"a"});
                         clip(b, 13, "a", 0, 6, "c");
                         b.node("Div", {"c", "six"}, {"y"});
                       }),
                 1, 1);
  EXPECT_EQ(a.graph->nodes.back().op_type, "HardSigmoid");
  EXPECT_EQ(a.graph->nodes.back().inputs, std::vector<std::string>{"in"});
  EXPECT_NEAR(opt::attr_float(a.graph->nodes.back(), "alpha", 0), 4.0 / 6, 1e-7);
  EXPECT_NEAR(opt::attr_float(a.graph->nodes.back(), "beta", 0), 0.5, 1e-7);
  // Clip(0.2 · x + 0.5, 0, 1) (Keras' hard_sigmoid), attributes at opset 10.
  Model k = fuse(model(10,
                       [](ModelBuilder& b) {
                         b.initializer("a", {}, {0.2f}).initializer("b", {}, {0.5f});
                         b.node("Mul", {"a", "x"}, {"s"});
                         b.node("Add", {"s", "b"}, {"t"});
                         clip(b, 10, "t", 0, 1, "y");
                       }),
                 1, 2);
  EXPECT_EQ(k.graph->nodes.back().op_type, "HardSigmoid");
  EXPECT_FLOAT_EQ(opt::attr_float(k.graph->nodes.back(), "alpha", 0), 0.2f);
}

TEST(OptActivationDecomposition, SiluAndMish) {
  // x · Sigmoid(x · 1) → x · Sigmoid(x) (ppocrv4_rec's Swish with beta 1)
  Model s = fuse(model(12,
                       [](ModelBuilder& b) {
                         b.initializer("one", {}, {1.f});
                         b.node("Mul", {"x", "one"}, {"t"});
                         b.node("Sigmoid", {"t"}, {"g"});
                         b.node("Mul", {"x", "g"}, {"y"});
                       }),
                 1, 3);
  EXPECT_EQ(s.graph->nodes[1].op_type, "Sigmoid");
  EXPECT_EQ(s.graph->nodes[1].inputs[0], "x");
  for (int opset : {17, 18}) {
    SCOPED_TRACE(opset);
    for (bool log_form : {false, true}) {
      Model m = fuse(model(opset,
                           [&](ModelBuilder& b) {
                             if (log_form) {
                               b.initializer("one", {}, {1.f});
                               b.node("Exp", {"x"}, {"e"});
                               b.node("Add", {"e", "one"}, {"p"});
                               b.node("Log", {"p"}, {"sp"});
                             } else {
                               b.node("Softplus", {"x"}, {"sp"});
                             }
                             b.node("Tanh", {"sp"}, {"t"});
                             b.node("Mul", {"t", "x"}, {"y"});
                           }),
                     1, 2);
      EXPECT_EQ(m.graph->nodes.back().op_type, "Mish");
      EXPECT_EQ(m.graph->nodes.back().domain, opset >= 18 ? "" : kPoly);
    }
  }
}

TEST(OptActivationDecomposition, NotFused) {
  auto paddle = [](float three, float six, float clip_hi, bool gate_output, Shape c3 = {}) {
    return model(
        13,
        [=](ModelBuilder& b) {
          b.initializer("three", c3, {three}).initializer("six", {}, {six});
          b.node("Add", {"x", "three"}, {"a"});
          clip(b, 13, "a", 0, clip_hi, "c");
          b.node("Mul", {"x", "c"}, {"m"});
          b.node("Div", {"m", "six"}, {"y"});
          if (gate_output) b.node("Neg", {"c"}, {"extra"});
        },
        gate_output);
  };
  auto pass = opt::make_activation_decomposition_fusion();
  auto rewrites = [&](const std::string& bytes) {
    Model m = test::import_bytes(bytes);
    return pass->run(*m.graph);
  };
  EXPECT_EQ(rewrites(paddle(3, 6, 6, false)), 1);  // the control
  EXPECT_EQ(rewrites(paddle(3, 6, 6, true)), 0);   // the Clip has another reader
  EXPECT_EQ(rewrites(paddle(3, 5, 6, false)), 0);  // Div by 5
  EXPECT_EQ(rewrites(paddle(3, 6.001f, 6, false)), 0);
  EXPECT_EQ(rewrites(paddle(2.5f, 6, 6, false)), 0);  // x + 2.5
  EXPECT_EQ(rewrites(paddle(3, 6, 5, false)), 0);     // Clip to 5, Div by 6: HardSwish it isn't
  // A one-element constant of rank 5 broadcasts the rank-4 x up: not an activation.
  EXPECT_EQ(rewrites(paddle(3, 6, 6, false, {1, 1, 1, 1, 1})), 0);
  // The intermediate is a graph output.
  EXPECT_EQ(rewrites(model(
                13,
                [](ModelBuilder& b) {
                  b.initializer("three", {}, {3.f}).initializer("six", {}, {6.f});
                  b.node("Add", {"x", "three"}, {"a"});
                  clip(b, 13, "a", 0, 6, "c");
                  b.node("Mul", {"x", "c"}, {"extra"});
                  b.node("Div", {"extra", "six"}, {"y"});
                },
                true)),
            0);
  // Gate of another tensor (squeeze-and-excitation's x · HardSigmoid(s)): no HardSwish.
  EXPECT_EQ(rewrites(model(13,
                           [](ModelBuilder& b) {
                             b.node("Neg", {"x"}, {"s"});
                             b.node("HardSigmoid", {"s"}, {"g"});
                             test::set_float(test::last_node(b), "alpha", 1.f / 6);
                             b.node("Mul", {"x", "g"}, {"y"});
                           })),
            0);
  // Mish with log(e^x + 2), SiLU with x · 2 inside.
  EXPECT_EQ(rewrites(model(18,
                           [](ModelBuilder& b) {
                             b.initializer("two", {}, {2.f});
                             b.node("Exp", {"x"}, {"e"});
                             b.node("Add", {"e", "two"}, {"p"});
                             b.node("Log", {"p"}, {"sp"});
                             b.node("Tanh", {"sp"}, {"t"});
                             b.node("Mul", {"t", "x"}, {"y"});
                           })),
            0);
  EXPECT_EQ(rewrites(model(12,
                           [](ModelBuilder& b) {
                             b.initializer("two", {}, {2.f});
                             b.node("Mul", {"x", "two"}, {"t"});
                             b.node("Sigmoid", {"t"}, {"g"});
                             b.node("Mul", {"x", "g"}, {"y"});
                           })),
            0);
}

// The whole optimizer: Conv → x · Clip(x + 3, 0, 6) / 6 becomes one FusedConv with HardSwish
// (below opset 14 through ai.polyinfer.HardSwish), and the fast kernels agree with the unfused
// reference run.
TEST(OptActivationDecomposition, ConvHardSwishFusesIntoTheConv) {
  for (int opset : {12, 14}) {
    SCOPED_TRACE(opset);
    ModelBuilder b(opset);
    b.input("in", {1, 3, 8, 8}).output("y", {1, 4, 8, 8});
    test::random_initializer(b, "w", {4, 3, 3, 3}, 1);
    test::random_initializer(b, "wb", {4}, 2);
    b.initializer("three", {1}, {3.f}).initializer("six", {1}, {6.f});
    b.node("Conv", {"in", "w", "wb"}, {"x"});
    test::set_ints(test::last_node(b), "pads", {1, 1, 1, 1});
    b.node("Add", {"x", "three"}, {"a"});
    clip(b, opset, "a", 0, 6, "c");
    b.node("Mul", {"x", "c"}, {"m"});
    b.node("Div", {"m", "six"}, {"y"});
    const std::string bytes = b.bytes();
    Model m = test::import_bytes(bytes);
    opt::optimize(*m.graph, 2);
    ASSERT_EQ(m.graph->nodes.size(), 1u);
    EXPECT_EQ(m.graph->nodes[0].op_type, "FusedConv");
    EXPECT_EQ(opt::attr_string(m.graph->nodes[0], "activation", ""), "HardSwish");
    const auto in = test::random_inputs(bytes);
    const auto want = test::run_model(bytes, 0, in);
    EXPECT_LE(test::max_rel_diff(test::run_model(bytes, 3, in, "cpu"), want), 1e-5);
  }
}

}  // namespace
}  // namespace polyinfer
