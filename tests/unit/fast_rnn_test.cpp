// The fast RNN, GRU and LSTM kernels (src/providers/cpu/fast/rnn.cpp) against the reference ones
// (`cpu-ref`): directions, layouts, batch sizes, sequence_lens (shorter than the sequence, and
// 0), initial states, peepholes, input_forget, linear_before_reset, activations with alpha/beta,
// clip; with constant weights (packed at creation, as models ship them) and with weights given
// at run time (packed by each run); and the forms left to the reference kernel, with the reason.
//
// Tolerance: the reference sums in double, the fast kernel in float32 with another summation
// order (the packed GEMM's tiles) and fast_util.h's sigmoid/tanh (< 3e-7 relative). Over K =
// input + hidden <= 72 terms of magnitude < 1 and a few steps (the recurrence is contractive for
// these weights), the largest difference measured was 4.5e-7; 1e-5 absolute + 1e-5 relative
// (outputs are O(1)) leaves room for another order on another CPU without hiding a wrong gate.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "oracle.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;
using test::OracleOp;
using test::random_tensor;

constexpr double kAtol = 1e-5, kRtol = 1e-5;

struct RnnCase {
  std::string op = "LSTM";  // LSTM, GRU or RNN
  std::string direction = "forward";
  int layout = 0;
  int64_t seq = 5, batch = 3, input = 7, hidden = 16;
  bool bias = true, init_h = false, init_c = false, peep = false;
  std::vector<int64_t> lens;  // sequence_lens when not empty
  std::vector<std::string> acts;
  std::vector<float> alphas, betas;
  float clip = 0;
  int64_t input_forget = -1, linear_before_reset = -1;  // -1: attribute absent
  bool constant_weights = true;
  int threads = 1;
  GemmTile tile = GemmTile::Auto;

  int gates() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
};

// Builds the one-node model (weights as initializers or as inputs), runs it on `cpu` and
// `cpu-ref`, compares every output and returns the node's impl on `cpu`.
std::string check(const RnnCase& c) {
  const int64_t D = c.dirs(), GH = c.gates() * c.hidden, H = c.hidden;
  const Shape xs = c.layout ? Shape{c.batch, c.seq, c.input} : Shape{c.seq, c.batch, c.input};
  const Shape ss = c.layout ? Shape{c.batch, D, H} : Shape{D, c.batch, H};
  ModelBuilder b(14);
  std::map<std::string, Value> feeds;
  std::vector<std::string> in;
  auto add = [&](const std::string& name, const Shape& shape, uint32_t seed, float lo, float hi,
                 bool constant) {
    const Tensor t = random_tensor(shape, seed, lo, hi);
    if (constant) {
      b.raw_initializer(name, shape, t.to_vector<float>());
    } else {
      b.input(name, shape);
      feeds[name] = Value(t);
    }
    in.push_back(name);
  };
  add("X", xs, 1, -1.0f, 1.0f, false);
  add("W", {D, GH, c.input}, 2, -0.4f, 0.4f, c.constant_weights);
  add("R", {D, GH, H}, 3, -0.4f, 0.4f, c.constant_weights);
  if (c.bias) add("B", {D, 2 * GH}, 4, -0.5f, 0.5f, c.constant_weights);
  else
    in.push_back("");
  if (!c.lens.empty()) {
    b.input("L", {c.batch}, 6);  // int32
    std::vector<int32_t> l(c.lens.begin(), c.lens.end());
    feeds["L"] = Value(Tensor::from_vector<int32_t>({c.batch}, l));
    in.push_back("L");
  } else {
    in.push_back("");
  }
  if (c.init_h) add("H0", ss, 5, -1.0f, 1.0f, false);
  else
    in.push_back("");
  if (c.op == "LSTM") {
    if (c.init_c) add("C0", ss, 6, -1.0f, 1.0f, false);
    else
      in.push_back("");
    if (c.peep) add("P", {D, 3 * H}, 7, -0.5f, 0.5f, c.constant_weights);
  }
  std::vector<std::string> out = {"Y", "Y_h"};
  if (c.op == "LSTM") out.push_back("Y_c");
  for (const std::string& o : out) b.proto().mutable_graph()->add_output()->set_name(o);
  b.node(c.op, in, out, "rnn");
  onnx::NodeProto* n = test::last_node(b);
  test::set_int(n, "hidden_size", H);
  test::set_string(n, "direction", c.direction);
  if (c.layout) test::set_int(n, "layout", c.layout);
  if (c.clip > 0) test::set_float(n, "clip", c.clip);
  if (c.input_forget >= 0) test::set_int(n, "input_forget", c.input_forget);
  if (c.linear_before_reset >= 0) test::set_int(n, "linear_before_reset", c.linear_before_reset);
  auto floats = [&](const char* name, const std::vector<float>& v) {
    if (v.empty()) return;
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
  };
  if (!c.acts.empty()) {
    auto* a = n->add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const std::string& s : c.acts) a->add_strings(s);
  }
  floats("activation_alpha", c.alphas);
  floats("activation_beta", c.betas);

  const std::string bytes = b.bytes();
  SessionOptions fo, ro;
  fo.providers = {"cpu"};
  ro.providers = {"cpu-ref"};
  fo.threads = c.threads;
  ro.threads = 1;
  fo.optimization_level = ro.optimization_level = 0;
  fo.cpu.gemm_tile = c.tile;
  Session fast = Session::load_bytes(bytes.data(), bytes.size(), fo);
  Session ref = Session::load_bytes(bytes.data(), bytes.size(), ro);
  const std::vector<Value> got = fast.run(feeds);
  const std::vector<Value> want = ref.run(feeds);
  EXPECT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size() && o < want.size(); ++o) {
    const Tensor& g = got[o].tensor();
    const Tensor& w = want[o].tensor();
    EXPECT_EQ(g.shape(), w.shape()) << out[o];
    if (g.shape() != w.shape()) continue;
    const std::vector<float> gv = g.to_vector<float>(), wv = w.to_vector<float>();
    int bad = 0;
    for (size_t i = 0; i < gv.size(); ++i)
      if (!(std::fabs(gv[i] - wv[i]) <= kAtol + kRtol * std::fabs(wv[i])) && bad++ < 5)
        ADD_FAILURE() << out[o] << "[" << i << "]: fast " << gv[i] << ", ref " << wv[i];
  }
  return fast.placement().nodes.at(0).impl;
}

bool is_fast(const std::string& impl) { return impl.rfind("fast:", 0) == 0; }

TEST(FastRnn, GridOfDirectionsLayoutsBatchesAndLengths) {
  for (const char* op : {"LSTM", "GRU", "RNN"})
    for (const char* dir : {"forward", "reverse", "bidirectional"})
      for (int layout : {0, 1})
        for (int64_t batch : {1, 3}) {
          for (bool ragged : {false, true}) {
            RnnCase c;
            c.op = op, c.direction = dir, c.layout = layout, c.batch = batch;
            c.init_h = c.init_c = ragged;
            if (ragged)
              c.lens = batch == 1 ? std::vector<int64_t>{3} : std::vector<int64_t>{5, 0, 2};
            SCOPED_TRACE(std::string(op) + " " + dir + " layout " + std::to_string(layout) +
                         " batch " + std::to_string(batch) + (ragged ? " ragged" : ""));
            EXPECT_TRUE(is_fast(check(c)));
          }
        }
}

TEST(FastRnn, LstmPeepholesInputForgetClipAndNoBias) {
  for (int64_t input_forget : {0, 1}) {
    RnnCase c;
    c.direction = "bidirectional", c.peep = true, c.input_forget = input_forget, c.clip = 0.7f;
    c.bias = false, c.init_h = c.init_c = true, c.lens = {4, 5, 1};
    SCOPED_TRACE(input_forget);
    EXPECT_TRUE(is_fast(check(c)));
  }
}

TEST(FastRnn, GruLinearBeforeResetAndClip) {
  for (int64_t lbr : {0, 1})
    for (float clip : {0.0f, 0.5f}) {
      RnnCase c;
      c.op = "GRU", c.direction = "bidirectional", c.linear_before_reset = lbr, c.clip = clip;
      c.init_h = true, c.layout = 1, c.lens = {2, 5, 3};
      SCOPED_TRACE(std::to_string(lbr) + " " + std::to_string(clip));
      EXPECT_TRUE(is_fast(check(c)));
    }
}

TEST(FastRnn, ActivationsWithAlphaAndBeta) {
  // Every activation the reference takes, with alpha/beta where it uses them, in each position.
  RnnCase l;
  l.acts = {"HardSigmoid", "Affine", "LeakyRelu"}, l.alphas = {0.3f, 0.8f, 0.05f};
  l.betas = {0.45f, 0.1f}, l.peep = true;
  EXPECT_TRUE(is_fast(check(l)));
  l.acts = {"Sigmoid", "ScaledTanh", "Elu", "HardSigmoid", "Softsign", "ThresholdedRelu"};
  l.alphas = {0.9f, 1.1f, 0.25f, 0.1f}, l.betas = {0.7f, 0.5f}, l.direction = "bidirectional";
  EXPECT_TRUE(is_fast(check(l)));
  RnnCase g;
  g.op = "GRU", g.acts = {"Softplus", "Relu"}, g.lens = {5, 3, 1};
  EXPECT_TRUE(is_fast(check(g)));
  RnnCase r;
  r.op = "RNN", r.acts = {"Relu"}, r.clip = 2.0f;
  EXPECT_TRUE(is_fast(check(r)));
  r.acts = {"ScaledTanh"}, r.alphas = {1.5f}, r.betas = {0.6f};
  EXPECT_TRUE(is_fast(check(r)));
}

TEST(FastRnn, WeightsGivenAtRunTimeAndThreads) {
  // Run-time weights are packed by each run; the oracle harness gives every input at run time.
  const auto r = OracleOp("LSTM", 14)
                     .attr("hidden_size", int64_t{24})
                     .attr("direction", std::string("bidirectional"))
                     .random({6, 2, 10}, -1.0f, 1.0f)
                     .random({2, 96, 10}, -0.4f, 0.4f)
                     .random({2, 96, 24}, -0.4f, 0.4f)
                     .random({2, 192}, -0.5f, 0.5f)
                     .outputs(3)
                     .threads(2)
                     .check(kAtol, kRtol);
  EXPECT_TRUE(is_fast(r.impl)) << r.impl;
  for (const char* op : {"LSTM", "GRU", "RNN"})
    for (int threads : {1, 2}) {
      RnnCase c;
      c.op = op, c.constant_weights = false, c.threads = threads, c.direction = "bidirectional";
      c.init_h = c.init_c = c.peep = true, c.lens = {5, 2, 4};
      SCOPED_TRACE(std::string(op) + " threads " + std::to_string(threads));
      EXPECT_TRUE(is_fast(check(c)));
    }
}

TEST(FastRnn, LargeHiddenThreadedStepAndTails) {
  // A step large enough to fork (batch x 4H x H past 256k), and hidden sizes off the panel width.
  RnnCase big;
  big.hidden = 160, big.batch = 4, big.input = 33, big.threads = 2, big.seq = 4;
  EXPECT_TRUE(is_fast(check(big)));
  for (int64_t h : {1, 5, 40}) {
    RnnCase c;
    c.op = "GRU", c.hidden = h, c.direction = "bidirectional", c.threads = 2;
    SCOPED_TRACE(h);
    EXPECT_TRUE(is_fast(check(c)));
  }
}

TEST(FastRnn, AvxTwoTileTakesHiddenMultiplesOfEight) {
  RnnCase c;
  c.tile = GemmTile::Avx2;
  c.hidden = 16;
  EXPECT_TRUE(is_fast(check(c)));
  c.hidden = 12;  // 16-wide panels want N a multiple of 8: the reference kernel runs it
  EXPECT_EQ(check(c), "reference");
}

// A KernelInfo for one node with chosen constants and static types, to read a refusal's reason.
class NodeInfo final : public KernelInfo {
 public:
  explicit NodeInfo(ir::Node node) : node_(std::move(node)) {}
  const ir::Node& node() const override { return node_; }
  const Tensor* constant_input(size_t i) const override {
    auto it = constants_.find(i);
    return it == constants_.end() ? nullptr : &it->second;
  }
  const ir::TypeInfo* input_type(size_t i) const override {
    auto it = types_.find(i);
    return it == types_.end() ? nullptr : &it->second;
  }
  const ir::TypeInfo* output_type(size_t) const override { return nullptr; }
  std::unique_ptr<SubgraphRunner> subgraph(const std::string&) const override { return nullptr; }
  int threads() const override { return 1; }
  const ProviderOptions& options() const override { return options_; }

  std::map<size_t, Tensor> constants_;
  std::map<size_t, ir::TypeInfo> types_;
  ProviderOptions options_;

 private:
  ir::Node node_;
};

std::string fast_refusal(NodeInfo& info) {
  for (const KernelDef* d : find_kernels("cpu", "", info.node().op_type, info.node().opset))
    if (d->tier == KernelTier::Fast) {
      try {
        d->make(info);
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp);
        return e.what();
      }
      return "";
    }
  ADD_FAILURE() << "no fast kernel for " << info.node().op_type;
  return "";
}

TEST(FastRnn, RefusalsGoToTheReferenceWithTheReason) {
  ir::Node n;
  n.name = "rnn", n.op_type = "LSTM", n.opset = 14, n.inputs = {"X", "W", "R"}, n.outputs = {"Y"};
  ir::Attribute hidden;
  hidden.type = ir::Attribute::Type::Int, hidden.i = 12;
  n.attrs["hidden_size"] = hidden;
  {
    NodeInfo info(n);
    ir::TypeInfo half;
    half.elem = DType::Float16;
    info.types_[0] = half;
    EXPECT_NE(fast_refusal(info).find("non-float32"), std::string::npos);
  }
  {
    NodeInfo info(n);
    info.options_.cpu.gemm_tile = GemmTile::Avx2;
    info.constants_[1] = random_tensor({1, 48, 5});
    info.constants_[2] = random_tensor({1, 48, 12});
    EXPECT_NE(fast_refusal(info).find("hidden_size a multiple of 8"), std::string::npos);
  }
  {
    NodeInfo info(n);
    info.constants_[1] = random_tensor({1, 48, 5});
    info.constants_[2] = random_tensor({1, 40, 12});  // R does not match hidden_size
    EXPECT_NE(fast_refusal(info).find("unexpected shape"), std::string::npos);
  }
  // The same float16 node in a session: the reference kernel runs it.
  const auto r = OracleOp("GRU", 14)
                     .attr("hidden_size", int64_t{8})
                     .random_half({3, 2, 4}, -1.0f, 1.0f)
                     .random_half({1, 24, 4}, -0.4f, 0.4f)
                     .random_half({1, 24, 8}, -0.4f, 0.4f)
                     .check(1e-3, 1e-3);
  EXPECT_EQ(r.impl, "reference");
}

}  // namespace
}  // namespace polyinfer
