// Op-support profiles: the built-in lists parse, and check_graph applies them to small graphs:
// unsupported ops, attribute values, constant-input bounds, zero points, static shapes, and
// operators a list does not mention (reported as uncertain, never as supported).
#include <gtest/gtest.h>

#include <string>

#include "ir/graph.h"
#include "plan/op_support.h"
#include "polyinfer/status.h"

namespace polyinfer::plan {
namespace {

const OpSupportProfile& profile(const std::string& id) {
  const OpSupportProfile* p = find_op_support(builtin_op_support(), id);
  if (p == nullptr) throw std::runtime_error("no profile " + id);
  return *p;
}

ir::Node node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  ir::Node n;
  n.name = op + "_0";
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

ir::Attribute str_attr(const std::string& s) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::String;
  a.s = s;
  return a;
}

void declare(ir::Graph& g, const std::string& name, Shape dims) {
  ir::TypeInfo t;
  t.elem = DType::Float32;
  t.has_shape = true;
  t.dims = dims;
  t.dim_params.assign(dims.size(), "");
  g.value_types[name] = t;
}

// TopK(x, k) with K an initializer.
ir::Graph topk_graph(int64_t k) {
  ir::Graph g;
  g.initializers["k"] = Tensor::from_vector<int64_t>({1}, {k});
  g.nodes.push_back(node("TopK", {"x", "k"}, {"v", "i"}));
  return g;
}

TEST(PlanOpSupport, BuiltinProfilesParse) {
  const auto& all = builtin_op_support();
  ASSERT_EQ(all.size(), 5u);
  for (const char* id : {"rknn-toolkit2-2.3.2", "tensorrt-10", "openvino-onnx", "qnn-ep"}) {
    const OpSupportProfile& p = profile(id);
    EXPECT_FALSE(p.source.empty()) << id;
    EXPECT_FALSE(p.version.empty()) << id;
    EXPECT_GT(p.ops.size(), 50u) << id;
  }
  // The RKNN list's own counts: 185 rows, 96 of them "Not Supported".
  const OpSupportProfile& rk = profile("rknn-toolkit2-2.3.2");
  EXPECT_EQ(rk.ops.size(), 185u);
  int unsupported = 0;
  for (const auto& [op, rule] : rk.ops) unsupported += rule.supported ? 0 : 1;
  EXPECT_EQ(unsupported, 96);
  EXPECT_EQ(rk.max_opset, 19);
  EXPECT_TRUE(profile("qnn-ep").static_shapes_only);
}

// The NPU plugin's profile is the ONNX frontend's list under the NPU's rule: static shapes only.
TEST(PlanOpSupport, OpenVinoNpuInheritsTheFrontendsListAndWantsStaticShapes) {
  const OpSupportProfile& npu = profile("openvino-npu");
  EXPECT_EQ(npu.inherits, "openvino-onnx");
  EXPECT_EQ(npu.ops.size(), profile("openvino-onnx").ops.size());
  EXPECT_TRUE(npu.static_shapes_only);
  EXPECT_FALSE(profile("openvino-onnx").static_shapes_only);
  ir::Graph g;
  g.nodes.push_back(node("Relu", {"x"}, {"y"}));
  declare(g, "x", {-1, 8});
  g.value_types["x"].dim_params[0] = "N";
  declare(g, "y", {-1, 8});
  EXPECT_TRUE(check_graph(profile("openvino-onnx"), g).empty());
  const auto r = check_graph(npu, g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].reason.find("dynamic shape"), std::string::npos) << r[0].reason;
}

TEST(PlanOpSupport, RknnRejectsTopKAndNms) {
  ir::Graph g = topk_graph(5);
  g.nodes.push_back(node("NonMaxSuppression", {"boxes", "scores"}, {"sel"}));
  g.nodes.push_back(node("Relu", {"v"}, {"r"}));
  auto r = check_graph(profile("rknn-toolkit2-2.3.2"), g);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].op, "TopK");
  EXPECT_EQ(r[0].node, "TopK 'TopK_0'");
  EXPECT_TRUE(r[0].certain);
  EXPECT_EQ(r[0].reason, "not supported by RKNN-Toolkit2 2.3.2");
  EXPECT_EQ(r[1].op, "NonMaxSuppression");
}

TEST(PlanOpSupport, RknnResizeModes) {
  ir::Graph g;
  g.nodes.push_back(node("Resize", {"x", "", "scales"}, {"y"}));
  g.nodes[0].attrs["mode"] = str_attr("cubic");
  auto r = check_graph(profile("rknn-toolkit2-2.3.2"), g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].certain);
  EXPECT_NE(r[0].reason.find("mode=cubic not in {nearest, linear}"), std::string::npos)
      << r[0].reason;
  EXPECT_NE(r[0].reason.find("nearest2d/bilinear"), std::string::npos) << r[0].reason;

  g.nodes[0].attrs["mode"] = str_attr("linear");
  EXPECT_TRUE(check_graph(profile("rknn-toolkit2-2.3.2"), g).empty());
  g.nodes[0].attrs.erase("mode");  // the ONNX default, nearest
  EXPECT_TRUE(check_graph(profile("rknn-toolkit2-2.3.2"), g).empty());
}

TEST(PlanOpSupport, TensorRtRejectsQLinearConv) {
  ir::Graph g;
  g.nodes.push_back(node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"y"}));
  auto r = check_graph(profile("tensorrt-10"), g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].certain);
  EXPECT_NE(r[0].reason.find("not supported by TensorRT"), std::string::npos);
}

TEST(PlanOpSupport, TensorRtTopKBound) {
  auto big = check_graph(profile("tensorrt-10"), topk_graph(5000));
  ASSERT_EQ(big.size(), 1u);
  EXPECT_TRUE(big[0].certain);
  EXPECT_NE(big[0].reason.find("= 5000 > 3839"), std::string::npos) << big[0].reason;
  EXPECT_NE(big[0].reason.find("less than 3840"), std::string::npos) << big[0].reason;
  EXPECT_TRUE(check_graph(profile("tensorrt-10"), topk_graph(5)).empty());

  // K from a Constant node counts as a constant too.
  ir::Graph g;
  ir::Node c = node("Constant", {}, {"k"});
  ir::Attribute v;
  v.type = ir::Attribute::Type::Tensor;
  v.t = Tensor::from_vector<int64_t>({1}, {4000});
  c.attrs["value"] = v;
  g.nodes.push_back(c);
  g.nodes.push_back(node("TopK", {"x", "k"}, {"v", "i"}));
  auto r = check_graph(profile("tensorrt-10"), g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].certain);

  // A computed K cannot be checked: uncertain, not accepted.
  ir::Graph d;
  d.nodes.push_back(node("TopK", {"x", "computed_k"}, {"v", "i"}));
  r = check_graph(profile("tensorrt-10"), d);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].certain);
}

TEST(PlanOpSupport, TensorRtZeroPoint) {
  ir::Graph g;
  g.initializers["zp"] = Tensor::from_vector<int8_t>({1}, {3});
  g.initializers["scale"] = Tensor::from_vector<float>({1}, {0.1f});
  g.nodes.push_back(node("QuantizeLinear", {"x", "scale", "zp"}, {"q"}));
  auto r = check_graph(profile("tensorrt-10"), g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].reason.find("zero point"), std::string::npos) << r[0].reason;
  g.initializers["zp"] = Tensor::from_vector<int8_t>({1}, {0});
  EXPECT_TRUE(check_graph(profile("tensorrt-10"), g).empty());
}

TEST(PlanOpSupport, UnlistedOpIsUncertain) {
  ir::Graph g;
  g.nodes.push_back(node("Gelu", {"x"}, {"y"}));
  g.nodes[0].domain = "com.example";
  auto r = check_graph(profile("rknn-toolkit2-2.3.2"), g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].certain);
  EXPECT_EQ(r[0].op, "com.example:Gelu");
  EXPECT_EQ(r[0].reason, "not in RKNN-Toolkit2 2.3.2's list");
}

TEST(PlanOpSupport, TextConstraintsAskForAHandCheck) {
  ir::Graph g;
  g.nodes.push_back(node("Slice", {"x", "s", "e"}, {"y"}));
  auto r = check_graph(profile("rknn-toolkit2-2.3.2"), g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].certain);
  EXPECT_EQ(r[0].reason, "check by hand: batchsize: 1");
}

TEST(PlanOpSupport, StaticShapes) {
  // QNN EP takes static shapes only.
  ir::Graph g;
  g.nodes.push_back(node("Relu", {"x"}, {"y"}));
  declare(g, "x", {1, 8});
  declare(g, "y", {1, 8});
  EXPECT_TRUE(check_graph(profile("qnn-ep"), g).empty());
  declare(g, "x", {-1, 8});
  g.value_types["x"].dim_params[0] = "N";
  auto r = check_graph(profile("qnn-ep"), g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].certain);
  EXPECT_NE(r[0].reason.find("dynamic shape"), std::string::npos) << r[0].reason;

  // A static_shape constraint on one op (TensorRT EyeLike).
  ir::Graph e;
  e.nodes.push_back(node("EyeLike", {"x"}, {"y"}));
  declare(e, "x", {-1, 4});
  declare(e, "y", {-1, 4});
  r = check_graph(profile("tensorrt-10"), e);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].reason.find("static dimensions"), std::string::npos) << r[0].reason;
}

TEST(PlanOpSupport, QnnGatherPositiveIndices) {
  ir::Graph g;
  g.initializers["idx"] = Tensor::from_vector<int64_t>({2}, {0, -1});
  g.nodes.push_back(node("Gather", {"x", "idx"}, {"y"}));
  declare(g, "x", {4, 4});
  declare(g, "y", {2, 4});
  auto r = check_graph(profile("qnn-ep"), g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].reason.find("negative value -1"), std::string::npos) << r[0].reason;
}

TEST(PlanOpSupport, MalformedProfilesNameTheField) {
  auto err = [](const std::string& json) {
    try {
      parse_op_support(json, "p.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string base =
      R"({"profiles": [{"id": "p", "toolchain": "T", "version": "1", "source": "s", "ops": )";
  EXPECT_NE(err(base + R"({"TopK": {"constraints": [{"kind": "bigger"}]}}}]})")
                .find("p.json: profile 'p': field 'ops.TopK.constraints[0].kind' has unknown kind "
                      "'bigger'"),
            std::string::npos);
  EXPECT_NE(err(base + R"({"TopK": {"constraints": [{"kind": "const_input_max", "index": 1}]}}}]})")
                .find("needs \"index\" and \"max\""),
            std::string::npos);
  EXPECT_NE(err(base + R"({"TopK": 3}}]})").find("field 'ops.TopK' must be true, false"),
            std::string::npos);
  EXPECT_NE(err(R"({"profiles": [{"id": "p", "ops": {}}]})")
                .find("profile 'p': field 'toolchain' is missing"),
            std::string::npos);
}

}  // namespace
}  // namespace polyinfer::plan
