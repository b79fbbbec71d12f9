// The channels-last pass (src/opt/channels_last.h): the rewrite it makes, and that the rewritten
// model computes what the original does — on the fast kernels and on the reference ones.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "infer/infer.h"
#include "model_builder.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "opt/channels_last.h"
#include "opt/optimizer.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

using test::ModelBuilder;
using test::random_values;

void add_ints(ModelBuilder& m, const std::string& name, std::vector<int64_t> v) {
  auto* g = m.proto().mutable_graph();
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
void add_int(ModelBuilder& m, const std::string& name, int64_t v) {
  auto* g = m.proto().mutable_graph();
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

// conv → BN → relu → maxpool → conv ─┬─ add(residual) → concat(channels) → GAP → Flatten
//                     └────────┘                 (with the pooled value)
std::string residual_model() {
  ModelBuilder m(17);
  m.input("x", {2, 3, 15, 13}).output("y", {2, 16});
  m.initializer("w1", {8, 3, 3, 3}, random_values(8 * 27, 1));
  m.initializer("b1", {8}, random_values(8, 2));
  m.initializer("w2", {8, 8, 3, 3}, random_values(8 * 72, 3));
  m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  add_ints(m, "pads", {1, 1, 1, 1});
  m.initializer("bn_g", {8}, random_values(8, 4));
  m.initializer("bn_b", {8}, random_values(8, 5));
  m.initializer("bn_m", {8}, random_values(8, 6));
  std::vector<float> var = random_values(8, 7);
  for (auto& v : var) v = v * v + 0.1f;
  m.initializer("bn_v", {8}, var);
  m.node("BatchNormalization", {"c1", "bn_g", "bn_b", "bn_m", "bn_v"}, {"n1"}, "bn1");
  m.node("Relu", {"n1"}, {"r1"}, "relu1");
  m.node("MaxPool", {"r1"}, {"p1"}, "pool1");
  add_ints(m, "kernel_shape", {2, 2});
  add_ints(m, "strides", {2, 2});
  add_int(m, "ceil_mode", 1);
  m.node("Conv", {"p1", "w2"}, {"c2"}, "conv2");
  add_ints(m, "pads", {1, 1, 1, 1});
  m.node("Add", {"c2", "p1"}, {"s"}, "add");
  m.node("Concat", {"s", "p1"}, {"cat"}, "concat");
  add_int(m, "axis", 1);
  m.node("GlobalAveragePool", {"cat"}, {"gap"}, "gap");
  m.node("Flatten", {"gap"}, {"y"}, "flatten");
  return m.bytes();
}

Tensor run(const std::string& bytes, const std::string& provider, const Tensor& x) {
  SessionOptions o;
  o.optimization_level = 0;
  o.providers = {provider};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  return s.run({{"x", x}})[0].tensor();
}

// The rewritten model's output on the fast and the reference kernels against the original's on
// the reference kernels, for input x.
void expect_same_results(const std::string& original, const std::string& rewritten,
                         const Tensor& x) {
  const Tensor want = run(original, "cpu-ref", x);
  for (const char* provider : {"cpu", "cpu-ref"}) {
    SCOPED_TRACE(provider);
    const Tensor got = run(rewritten, provider, x);
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i],
                  1e-5f * (1 + std::fabs(want.data<float>()[i])))
          << "at " << i;
  }
}

TEST(ChannelsLast, RewritesConvolutionsAndPoolingAndKeepsResults) {
  const std::string original = residual_model();
  Model model = import_onnx_bytes(original.data(), original.size(), "");
  infer::infer_types(model);
  ASSERT_TRUE(opt::to_channels_last(*model.graph));
  model.opsets["ai.polyinfer"] = 1;
  std::map<std::string, int> ops;
  for (const auto& n : model.graph->nodes) ops[n.op_type]++;
  EXPECT_EQ(ops["NhwcFusedConv"], 2);
  EXPECT_EQ(ops["NhwcMaxPool"], 1);
  EXPECT_EQ(ops["NhwcGlobalAveragePool"], 1);
  EXPECT_EQ(ops["Conv"], 0);
  EXPECT_EQ(ops["BatchNormalization"], 0);  // with the Relu after it: one ChannelAffine
  EXPECT_EQ(ops["ChannelAffine"], 1);
  EXPECT_EQ(ops["Relu"], 0);
  // One transpose in (x), one out (before Flatten): BN, Relu, Add and Concat stay in NHWC.
  EXPECT_EQ(ops["Transpose"], 2);
  const std::string rewritten = export_onnx_bytes(model);

  const Tensor x = Tensor::from_vector<float>({2, 3, 15, 13}, random_values(2 * 3 * 15 * 13, 9));
  expect_same_results(original, rewritten, x);
}

// A DenseNet block: each layer normalizes (BN → ReLU) the concatenation of all earlier feature
// maps and convolves it; the block's output concatenation is normalized without a ReLU, and a
// concatenation that is also a graph output must stay.
std::string dense_block_model() {
  ModelBuilder m(13);
  m.input("x", {2, 6, 7, 5}).output("y", {2, 14}).output("cat_out", {2, 10, 7, 5});
  auto bn = [&](const std::string& in, const std::string& out, int c, uint32_t seed) {
    m.initializer(out + "_g", {c}, random_values(c, seed));
    m.initializer(out + "_b", {c}, random_values(c, seed + 1));
    m.initializer(out + "_m", {c}, random_values(c, seed + 2));
    std::vector<float> var = random_values(c, seed + 3);
    for (auto& v : var) v = v * v + 0.1f;
    m.initializer(out + "_v", {c}, var);
    m.node("BatchNormalization", {in, out + "_g", out + "_b", out + "_m", out + "_v"}, {out}, out);
  };
  m.initializer("w1", {4, 6, 3, 3}, random_values(4 * 54, 21));
  m.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  add_ints(m, "pads", {1, 1, 1, 1});
  m.node("Concat", {"x", "c1"}, {"cat1"}, "concat1");
  add_int(m, "axis", 1);
  bn("cat1", "n1", 10, 30);
  m.node("Relu", {"n1"}, {"r1"}, "relu1");
  m.initializer("w2", {4, 10, 3, 3}, random_values(4 * 90, 22));
  m.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
  add_ints(m, "pads", {1, 1, 1, 1});
  m.node("Concat", {"x", "c1", "c2"}, {"cat2"}, "concat2");
  add_int(m, "axis", 1);
  bn("cat2", "n2", 14, 40);
  m.node("GlobalAveragePool", {"n2"}, {"gap"}, "gap");
  m.node("Flatten", {"gap"}, {"y"}, "flatten");
  // A concatenation read by a BN and by the graph's outputs: not fused.
  m.node("Concat", {"x", "c2"}, {"cat_out"}, "concat3");
  add_int(m, "axis", 1);
  bn("cat_out", "n3", 10, 50);
  return m.bytes();
}

TEST(ChannelsLast, ConcatenationsNormalizedAloneFuseWithTheirAffine) {
  const std::string original = dense_block_model();
  Model model = import_onnx_bytes(original.data(), original.size(), "");
  infer::infer_types(model);
  const opt::OptimizeReport report = opt::optimize(*model.graph, 3);
  model.opsets["ai.polyinfer"] = 1;
  std::map<std::string, int> ops;
  for (const auto& n : model.graph->nodes) ops[n.op_type]++;
  EXPECT_EQ(ops["ConcatChannelAffine"], 2) << report.summary();
  EXPECT_EQ(ops["Concat"], 1);  // concat3, a graph output
  bool reported = false;
  for (const auto& [pass, n] : report.rewrites) reported |= pass == "fuse-concat-affine" && n == 2;
  EXPECT_TRUE(reported) << report.summary();
  const std::string rewritten = export_onnx_bytes(model);

  const Tensor x = Tensor::from_vector<float>({2, 6, 7, 5}, random_values(2 * 6 * 7 * 5, 23));
  expect_same_results(original, rewritten, x);
}

void add_int_initializer(ModelBuilder& m, const std::string& name, std::vector<int64_t> v) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(7);  // int64
  t->add_dims(static_cast<int64_t>(v.size()));
  for (auto x : v) t->add_int64_data(x);
}

// ShuffleNet's unit without the shuffle: conv → split the channels in two with Slice (opset 13:
// inputs, negative axis; opset 9: attributes) → conv on one half → concat with the other → GAP.
std::string channel_split_model(int opset) {
  ModelBuilder m(opset);
  m.input("x", {2, 3, 9, 7}).output("y", {2, 8});
  m.initializer("w1", {8, 3, 3, 3}, random_values(8 * 27, 11));
  m.initializer("w2", {4, 4, 1, 1}, random_values(16, 12));
  m.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  add_ints(m, "pads", {1, 1, 1, 1});
  if (opset >= 10) {
    add_int_initializer(m, "lo_s", {0});
    add_int_initializer(m, "lo_e", {4});
    add_int_initializer(m, "hi_s", {4});
    add_int_initializer(m, "hi_e", {1000});
    add_int_initializer(m, "ax", {-3});
    m.node("Slice", {"c1", "lo_s", "lo_e", "ax"}, {"lo"}, "slice_lo");
    m.node("Slice", {"c1", "hi_s", "hi_e", "ax"}, {"hi"}, "slice_hi");
  } else {
    m.node("Slice", {"c1"}, {"lo"}, "slice_lo");
    add_ints(m, "starts", {0, 1});
    add_ints(m, "ends", {4, 1000});
    add_ints(m, "axes", {1, 2});  // also drops the first row: H changes too
    m.node("Slice", {"c1"}, {"hi"}, "slice_hi");
    add_ints(m, "starts", {4, 1});
    add_ints(m, "ends", {8, 1000});
    add_ints(m, "axes", {1, 2});
  }
  m.node("Conv", {"hi", "w2"}, {"c2"}, "conv2");
  m.node("Concat", {"lo", "c2"}, {"cat"}, "concat");
  add_int(m, "axis", 1);
  m.node("GlobalAveragePool", {"cat"}, {"gap"}, "gap");
  m.node("Flatten", {"gap"}, {"y"}, "flatten");
  return m.bytes();
}

TEST(ChannelsLast, ChannelSlicesStayChannelsLast) {
  for (int opset : {13, 9}) {
    SCOPED_TRACE(opset);
    const std::string original = channel_split_model(opset);
    Model model = import_onnx_bytes(original.data(), original.size(), "");
    infer::infer_types(model);
    ASSERT_TRUE(opt::to_channels_last(*model.graph));
    model.opsets["ai.polyinfer"] = 1;
    std::map<std::string, int> ops;
    for (const auto& n : model.graph->nodes) ops[n.op_type]++;
    EXPECT_EQ(ops["NhwcFusedConv"], 2);
    EXPECT_EQ(ops["Slice"], 2);
    EXPECT_EQ(ops["Transpose"], 2);  // x in, the pooled value out: none around the slices
    const std::string rewritten = export_onnx_bytes(model);
    const Tensor x = Tensor::from_vector<float>({2, 3, 9, 7}, random_values(2 * 3 * 9 * 7, 13));
    expect_same_results(original, rewritten, x);
  }
}

// A channel Split between convolutions (YOLO's C2f blocks), sizes as an input (opset 13) or an
// attribute (opset 11), the axis as 1 or -3: no layout Transposes around it.
TEST(ChannelsLast, ChannelSplitsStayChannelsLast) {
  for (int opset : {13, 11}) {
    SCOPED_TRACE(opset);
    ModelBuilder m(opset);
    m.input("x", {2, 3, 6, 5}).output("y", {2, 8, 6, 5});
    m.initializer("w1", {8, 3, 3, 3}, random_values(8 * 27, 81));
    m.initializer("w2", {4, 3, 1, 1}, random_values(12, 82));
    m.initializer("w3", {4, 5, 1, 1}, random_values(20, 83));
    m.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
    add_ints(m, "pads", {1, 1, 1, 1});
    if (opset >= 13) {
      add_int_initializer(m, "sizes", {3, 5});
      m.node("Split", {"c1", "sizes"}, {"s0", "s1"}, "split");
      add_int(m, "axis", 1);
    } else {
      m.node("Split", {"c1"}, {"s0", "s1"}, "split");
      add_int(m, "axis", -3);
      add_ints(m, "split", {3, 5});
    }
    m.node("Conv", {"s0", "w2"}, {"y0"}, "conv2");
    m.node("Relu", {"s1"}, {"r1"}, "relu");
    m.node("Conv", {"r1", "w3"}, {"y1"}, "conv3");
    m.node("Concat", {"y0", "y1"}, {"y"}, "concat");
    add_int(m, "axis", 1);
    const std::string original = m.bytes();
    Model model = import_onnx_bytes(original.data(), original.size(), "");
    infer::infer_types(model);
    ASSERT_TRUE(opt::to_channels_last(*model.graph));
    model.opsets["ai.polyinfer"] = 1;
    int transposes = 0;
    for (const auto& n : model.graph->nodes) transposes += n.op_type == "Transpose";
    EXPECT_EQ(transposes, 2);  // x in and y out
    const std::string rewritten = export_onnx_bytes(model);
    const Tensor x = Tensor::from_vector<float>({2, 3, 6, 5}, random_values(2 * 3 * 6 * 5, 84));
    expect_same_results(original, rewritten, x);
  }
}

// A feature pyramid's top-down step, as Paddle's detectors have it: a coarse map upsampled by
// Resize and added to the lateral branch, then convolved. One Resize has constant scales
// (nearest), the other sizes computed from the lateral map's Shape (linear). Resize and Shape run
// on the NHWC values: the only layout Transposes left are x's and y's.
TEST(ChannelsLast, ResizeAndShapeStayChannelsLast) {
  ModelBuilder m(13);
  m.input("x", {1, 3, 8, 10}).output("y", {1, 8, 8, 10});
  m.initializer("w0", {8, 3, 1, 1}, random_values(24, 91));
  m.initializer("w1", {8, 3, 3, 3}, random_values(8 * 27, 92));
  m.initializer("w2", {4, 8, 3, 3}, random_values(4 * 72, 93));
  m.initializer("w3", {4, 8, 3, 3}, random_values(4 * 72, 94));
  m.initializer("scales", {4}, {1, 1, 2, 2});
  m.initializer("no_roi", {0}, {});
  m.initializer("no_scales", {0}, {});
  m.node("Conv", {"x", "w0"}, {"lat"}, "lateral");
  m.node("Conv", {"x", "w1"}, {"coarse"}, "coarse");
  add_ints(m, "pads", {1, 1, 1, 1});
  add_ints(m, "strides", {2, 2});
  m.node("Resize", {"coarse", "no_roi", "scales"}, {"up"}, "up_nearest");
  test::set_string(test::last_node(m), "coordinate_transformation_mode", "asymmetric");
  test::set_string(test::last_node(m), "nearest_mode", "floor");
  m.node("Add", {"lat", "up"}, {"s0"}, "merge0");
  m.node("Conv", {"s0", "w2"}, {"y0"}, "smooth0");
  add_ints(m, "pads", {1, 1, 1, 1});
  m.node("Shape", {"lat"}, {"lat_shape"}, "lat_shape");
  m.node("Resize", {"coarse", "no_roi", "no_scales", "lat_shape"}, {"up2"}, "up_linear");
  test::set_string(test::last_node(m), "mode", "linear");
  m.node("Add", {"lat", "up2"}, {"s1"}, "merge1");
  m.node("Conv", {"s1", "w3"}, {"y1"}, "smooth1");
  add_ints(m, "pads", {1, 1, 1, 1});
  m.node("Concat", {"y0", "y1"}, {"y"}, "concat");
  add_int(m, "axis", 1);
  const std::string original = m.bytes();
  Model model = import_onnx_bytes(original.data(), original.size(), "");
  infer::infer_types(model);
  ASSERT_TRUE(opt::to_channels_last(*model.graph));
  model.opsets["ai.polyinfer"] = 1;
  std::map<std::string, int> ops;
  for (const auto& n : model.graph->nodes) ops[n.op_type]++;
  EXPECT_EQ(ops["Transpose"], 2);  // x in and y out
  EXPECT_EQ(ops["Resize"], 2);
  EXPECT_EQ(ops["Shape"], 1);
  EXPECT_EQ(ops["Gather"], 2);  // the Shape's entries back to NCHW, the sizes on to NHWC
  for (const auto& n : model.graph->nodes)
    if (n.op_type == "Resize" && n.name == "up_nearest") {
      const Tensor& sc = model.graph->initializers.at(n.inputs[2]);
      EXPECT_EQ(sc.to_vector<float>(), (std::vector<float>{1, 2, 2, 1}));
    }
  const std::string rewritten = export_onnx_bytes(model);
  const Tensor x = Tensor::from_vector<float>({1, 3, 8, 10}, random_values(240, 95));
  expect_same_results(original, rewritten, x);
}

// Shape with start and end (opset 15) of an NHWC value picks the same NCHW entries.
TEST(ChannelsLast, ShapeWithBoundsOfAChannelsLastValue) {
  for (const auto& [start, end] :
       std::vector<std::pair<int64_t, int64_t>>{{-2, 4}, {1, 3}, {3, 1}}) {
    ModelBuilder m(15);
    m.input("x", {1, 3, 6, 5}).output("y", {1, 4, 6, 5}).output("dims", {-1}, 7);
    m.initializer("w", {4, 3, 3, 3}, random_values(108, 96));
    m.node("Conv", {"x", "w"}, {"c"}, "conv");
    add_ints(m, "pads", {1, 1, 1, 1});
    m.node("Relu", {"c"}, {"y"}, "relu");
    m.node("Shape", {"c"}, {"dims"}, "dims");
    add_int(m, "start", start);
    add_int(m, "end", end);
    const std::string original = m.bytes();
    Model model = import_onnx_bytes(original.data(), original.size(), "");
    infer::infer_types(model);
    ASSERT_TRUE(opt::to_channels_last(*model.graph));
    model.opsets["ai.polyinfer"] = 1;
    int transposes = 0;
    for (const auto& n : model.graph->nodes) transposes += n.op_type == "Transpose";
    EXPECT_EQ(transposes, 2) << "x in and y out; none for the Shape";
    const std::string rewritten = export_onnx_bytes(model);
    const Tensor x = Tensor::from_vector<float>({1, 3, 6, 5}, random_values(90, 97));
    for (const std::string& bytes : {original, rewritten}) {
      SessionOptions o;
      o.providers = {"cpu-ref"};
      o.optimization_level = 0;
      Session sess = Session::load_bytes(bytes.data(), bytes.size(), o);
      const auto out = sess.run({{"x", Value(x)}});
      std::vector<int64_t> want;
      const std::vector<int64_t> full = {1, 4, 6, 5};
      for (int64_t i = start < 0 ? start + 4 : start; i < end; ++i) want.push_back(full[i]);
      EXPECT_EQ(out[1].tensor().to_vector<int64_t>(), want) << start << ".." << end;
    }
  }
}

// ShuffleNet's channel shuffle between two convolutions: Reshape to [N, g, C/g, H, W],
// Transpose [0,2,1,3,4], Reshape back (with a -1, as torch exports it).
std::string channel_shuffle_model(int64_t groups) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 5, 7}).output("y", {2, 6, 5, 7});
  m.initializer("w1", {12, 3, 1, 1}, random_values(36, 21));
  m.initializer("w2", {6, 12, 1, 1}, random_values(72, 22));
  m.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  add_int_initializer(m, "split", {2, groups, 12 / groups, 5, 7});
  add_int_initializer(m, "merge", {2, -1, 5, 7});
  m.node("Reshape", {"c1", "split"}, {"r1"}, "reshape1");
  m.node("Transpose", {"r1"}, {"t"}, "transpose");
  add_ints(m, "perm", {0, 2, 1, 3, 4});
  m.node("Reshape", {"t", "merge"}, {"r2"}, "reshape2");
  m.node("Conv", {"r2", "w2"}, {"y"}, "conv2");
  return m.bytes();
}

TEST(ChannelsLast, ChannelShuffleStaysChannelsLast) {
  for (int64_t groups : {2, 3}) {
    SCOPED_TRACE(groups);
    const std::string original = channel_shuffle_model(groups);
    Model model = import_onnx_bytes(original.data(), original.size(), "");
    infer::infer_types(model);
    ASSERT_TRUE(opt::to_channels_last(*model.graph));
    model.opsets["ai.polyinfer"] = 1;
    int layout_transposes = 0, reshapes = 0;
    for (const auto& n : model.graph->nodes) {
      if (n.op_type == "Reshape") ++reshapes;
      if (n.op_type == "Transpose" && n.attr("perm")->ints.size() == 4) ++layout_transposes;
    }
    EXPECT_EQ(reshapes, 2);
    EXPECT_EQ(layout_transposes, 2);  // x in, y out: none around the shuffle
    const std::string rewritten = export_onnx_bytes(model);
    const Tensor x = Tensor::from_vector<float>({2, 3, 5, 7}, random_values(2 * 3 * 5 * 7, 23));
    expect_same_results(original, rewritten, x);
  }
}

TEST(ChannelsLast, ShuffleWithASecondReaderIsLeftAsItIs) {
  // The transposed value also leaves the graph: the NCHW pattern must stay.
  ModelBuilder m(13);
  m.input("x", {1, 3, 2, 2}).output("y", {1, 4, 2, 2}).output("t", {1, 2, 2, 2, 2});
  m.initializer("w1", {4, 3, 1, 1}, random_values(12, 31));
  m.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  add_int_initializer(m, "split", {1, 2, 2, 2, 2});
  add_int_initializer(m, "merge", {1, 4, 2, 2});
  m.node("Reshape", {"c1", "split"}, {"r1"}, "reshape1");
  m.node("Transpose", {"r1"}, {"t"}, "transpose");
  add_ints(m, "perm", {0, 2, 1, 3, 4});
  m.node("Reshape", {"t", "merge"}, {"y"}, "reshape2");
  const std::string bytes = m.bytes();
  Model model = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(model);
  ASSERT_TRUE(opt::to_channels_last(*model.graph));  // the conv still converts
  int shuffles = 0;
  for (const auto& n : model.graph->nodes) {
    if (n.op_type == "Transpose" && n.attr("perm")->ints.size() == 5) {
      EXPECT_EQ(n.attr("perm")->ints, (std::vector<int64_t>{0, 2, 1, 3, 4}));
      ++shuffles;
    }
  }
  EXPECT_EQ(shuffles, 1);
}

TEST(ChannelsLast, ConvolutionOfAValueOfUnknownShape) {
  // The Slice's end is a graph input: its output's shape is unknown until run time, and the
  // convolution after it still goes channels-last (its 4-D weights say it is a 2-D conv).
  ModelBuilder m(13);
  m.input("x", {1, 4, 5, 5}).input("end", {1}, 7).output("y", {1, 2, 5, 5});
  m.initializer("w", {2, 2, 3, 3}, random_values(36, 41));
  add_int_initializer(m, "start", {1});
  add_int_initializer(m, "axis", {1});
  m.node("Slice", {"x", "start", "end", "axis"}, {"s"}, "slice");
  m.node("Conv", {"s", "w"}, {"y"}, "conv");
  add_ints(m, "pads", {1, 1, 1, 1});
  const std::string original = m.bytes();
  Model model = import_onnx_bytes(original.data(), original.size(), "");
  infer::infer_types(model);
  ASSERT_TRUE(opt::to_channels_last(*model.graph));
  model.opsets["ai.polyinfer"] = 1;
  const std::string rewritten = export_onnx_bytes(model);
  SessionOptions o;
  o.optimization_level = 0;
  const Tensor x = Tensor::from_vector<float>({1, 4, 5, 5}, random_values(100, 42));
  const Tensor end = Tensor::from_vector<int64_t>({1}, {3});
  Session want_s = Session::load_bytes(original.data(), original.size(), o);
  Session got_s = Session::load_bytes(rewritten.data(), rewritten.size(), o);
  const Tensor want = want_s.run({{"x", x}, {"end", end}})[0].tensor();
  const Tensor got = got_s.run({{"x", x}, {"end", end}})[0].tensor();
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i],
                1e-5f * (1 + std::fabs(want.data<float>()[i])));
}

// A squeeze-and-excitation block (EfficientNet, MobileNetV3, RegNet-Y): conv → GAP → 1x1 conv
// → Sigmoid → Mul with the feature map, the scale [N, C, 1, 1] broadcast over H and W; and a
// Mul by a rank-3 [C, 1, 1] constant, which broadcasts from the right and must stay NCHW.
std::string squeeze_excite_model(bool rank3_scale) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 6, 5}).output("y", {2, 8, 6, 5});
  m.initializer("w1", {8, 3, 3, 3}, random_values(8 * 27, 61));
  m.initializer("w2", {8, 8, 1, 1}, random_values(64, 62));
  m.initializer("w3", {8, 8, 1, 1}, random_values(64, 63));
  m.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  add_ints(m, "pads", {1, 1, 1, 1});
  if (rank3_scale) {
    m.initializer("k", {8, 1, 1}, random_values(8, 64));
    m.node("Mul", {"c1", "k"}, {"se"}, "scale");
  } else {
    m.node("GlobalAveragePool", {"c1"}, {"g"}, "gap");
    m.node("Conv", {"g", "w2"}, {"c2"}, "squeeze");
    m.node("Sigmoid", {"c2"}, {"s"}, "gate");
    m.node("Mul", {"c1", "s"}, {"se"}, "excite");
  }
  m.node("Conv", {"se", "w3"}, {"y"}, "conv3");
  return m.bytes();
}

TEST(ChannelsLast, BroadcastBinaryOpsOfTwoRank4ValuesStayChannelsLast) {
  for (bool rank3 : {false, true}) {
    SCOPED_TRACE(rank3 ? "rank-3 scale" : "squeeze-excitation");
    const std::string original = squeeze_excite_model(rank3);
    Model model = import_onnx_bytes(original.data(), original.size(), "");
    infer::infer_types(model);
    ASSERT_TRUE(opt::to_channels_last(*model.graph));
    model.opsets["ai.polyinfer"] = 1;
    int transposes = 0;
    for (const auto& n : model.graph->nodes) transposes += n.op_type == "Transpose";
    // x in and y out: the rank-3 constant is aligned to rank 4 and permuted like the value.
    EXPECT_EQ(transposes, 2);
    const std::string rewritten = export_onnx_bytes(model);
    const Tensor x = Tensor::from_vector<float>({2, 3, 6, 5}, random_values(2 * 3 * 6 * 5, 65));
    expect_same_results(original, rewritten, x);
  }
}

// Constant operands of every rank up to 4, on either side: a one-element one (Paddle's scale and
// shift after an activation), [1, C, 1, 1], a rank-2 [H, 1] that varies along H; each binary
// node stays channels-last, and the results are the original's.
TEST(ChannelsLast, BinaryOpsWithConstantOperandsStayChannelsLast) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 6, 5}).output("y", {2, 8, 6, 5});
  m.initializer("w1", {8, 3, 3, 3}, random_values(8 * 27, 71));
  m.initializer("w2", {8, 8, 1, 1}, random_values(64, 72));
  m.initializer("scale", {1}, {1.5f});
  m.initializer("shift", {}, {-0.25f});
  m.initializer("per_channel", {1, 8, 1, 1}, random_values(8, 73));
  m.initializer("per_row", {6, 1}, random_values(6, 74));
  m.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  add_ints(m, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r"}, "relu");
  m.node("Mul", {"scale", "r"}, {"a"}, "scale_left");
  m.node("Add", {"a", "shift"}, {"b"}, "shift");
  m.node("Sub", {"b", "per_channel"}, {"c"}, "per_channel");
  m.node("Max", {"per_row", "c"}, {"d"}, "per_row");
  m.node("Conv", {"d", "w2"}, {"y"}, "conv2");
  const std::string original = m.bytes();
  Model model = import_onnx_bytes(original.data(), original.size(), "");
  infer::infer_types(model);
  ASSERT_TRUE(opt::to_channels_last(*model.graph));
  model.opsets["ai.polyinfer"] = 1;
  int transposes = 0;
  for (const auto& n : model.graph->nodes) transposes += n.op_type == "Transpose";
  EXPECT_EQ(transposes, 2);  // x in and y out
  const std::string rewritten = export_onnx_bytes(model);
  const Tensor x = Tensor::from_vector<float>({2, 3, 6, 5}, random_values(2 * 3 * 6 * 5, 75));
  expect_same_results(original, rewritten, x);
}

TEST(ChannelsLast, LeavesGraphsWithoutConvolutionsAlone) {
  ModelBuilder m(17);
  m.input("x", {1, 3, 4, 4}).output("y", {1, 3, 4, 4});
  m.node("Relu", {"x"}, {"y"}, "relu");
  const std::string bytes = m.bytes();
  Model model = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(model);
  EXPECT_FALSE(opt::to_channels_last(*model.graph));
  EXPECT_EQ(model.graph->nodes.size(), 1u);
}

}  // namespace
}  // namespace polyinfer
