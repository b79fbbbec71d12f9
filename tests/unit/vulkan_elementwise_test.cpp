// The Vulkan element-wise kernels against the CPU reference kernels (cpu-ref), through the
// oracle harness: odd sizes, tails past a workgroup, broadcasting up to rank 6, and a size that
// needs more workgroups than one dispatch dimension allows (the shaders' grid-stride loop).
#include "oracle.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

using test::OracleOp;

OracleOp on_vulkan(const std::string& op) {
  return std::move(OracleOp(op, 14).providers({"vulkan"}));
}

void expect_on_vulkan(const test::OracleResult& r, const std::string& what) {
  EXPECT_EQ(r.provider, "vulkan") << what;
}

TEST(VulkanElementwise, BinarySameShape) {
  PI_SKIP_WITHOUT_VULKAN();
  for (const std::string op : {"Add", "Sub", "Mul", "Div"})
    for (const Shape& s : std::vector<Shape>{{1}, {7}, {255}, {256}, {257}, {3, 5, 7}, {2, 1001}}) {
      auto o = on_vulkan(op);
      if (op == "Div") o.random(s).random(s, 0.5f, 3.0f);
      else o.random(s).random(s);
      expect_on_vulkan(o.check(1e-6, 1e-6), op + shape_str(s));
    }
}

TEST(VulkanElementwise, BinaryBroadcast) {
  PI_SKIP_WITHOUT_VULKAN();
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4, 5}, {5}},       {{3, 1, 5}, {1, 4, 1}},   {{1}, {7, 9}},
      {{}, {3, 3}},              {{33, 1}, {1, 65}},       {{2, 1, 3, 1, 5, 1}, {1, 4, 1, 6, 1, 7}},
      {{4, 1, 1}, {4, 3, 257}},  {{1, 1, 1}, {1, 1, 1}}};
  for (const std::string op : {"Add", "Sub", "Mul", "Div"})
    for (const auto& [a, b] : cases) {
      auto o = on_vulkan(op);
      if (op == "Div") o.random(a).random(b, 0.5f, 3.0f);
      else o.random(a).random(b);
      expect_on_vulkan(o.check(1e-6, 1e-6), op + shape_str(a) + shape_str(b));
    }
}

TEST(VulkanElementwise, Unary) {
  PI_SKIP_WITHOUT_VULKAN();
  struct Case {
    const char* op;
    float lo, hi;
  };
  for (const Case c : {Case{"Relu", -3, 3}, Case{"Neg", -3, 3}, Case{"Abs", -3, 3},
                       Case{"Exp", -20, 20}, Case{"Sigmoid", -30, 30}, Case{"Tanh", -30, 30}})
    for (const Shape& s : std::vector<Shape>{{1}, {255}, {257}, {3, 17, 33}, {0, 4}}) {
      auto r = on_vulkan(c.op).random(s, c.lo, c.hi).check(1e-6, 1e-5);
      expect_on_vulkan(r, c.op + shape_str(s));
    }
}

TEST(VulkanElementwise, MoreElementsThanOneDispatchRow) {
  PI_SKIP_WITHOUT_VULKAN();
  // 65535 workgroups of 256 cover 16,776,960 elements; this is more.
  const Shape big{4099, 4099};
  expect_on_vulkan(on_vulkan("Add").random(big).random({4099}).check(1e-6, 1e-6), "Add big");
  expect_on_vulkan(on_vulkan("Relu").random(big).check(), "Relu big");
}

}  // namespace
}  // namespace polyinfer
