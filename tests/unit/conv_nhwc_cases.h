// What the NHWC convolution tests share (conv_nhwc_test.cpp, conv_nhwc_grouped_test.cpp,
// conv_nhwc_more_test.cpp): a case (one ai.polyinfer NhwcFusedConv node with constant weights),
// its model, the kernel the CPU provider picks for it, and a check against `cpu-ref`.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <random>
#include <utility>

#include "gemm_tiles.h"
#include "model_builder.h"
#include "polyinfer/session.h"
#include "providers/cpu/fast/activation_pass.h"
#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/avx512_math.h"
#include "providers/cpu/onednn/onednn.h"

namespace polyinfer::conv_test {

using test::ModelBuilder;
using test::random_values;

struct Case {
  const char* name;
  Shape x;  // [N, H, W, C]
  int64_t m, kh, kw;
  std::vector<int64_t> strides, pads, dilations;
  bool bias, z;
  const char* activation;
  std::vector<float> params;
  int64_t group = 1;
};

// gtest names a failing case by this instead of dumping the struct's bytes.
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

inline bool have_avx2() { return fast::avx2::supported(); }

// CPU options with these kernels switched, on GEMM tile `tile`.
inline CpuProviderOptions switches(
    std::initializer_list<std::pair<const char*, KernelSwitch>> kernels,
    GemmTile tile = GemmTile::Auto) {
  CpuProviderOptions o;
  for (const auto& [name, sw] : kernels) o.kernels[name] = sw;
  o.gemm_tile = tile;
  return o;
}
constexpr KernelSwitch kOn = KernelSwitch::On;
constexpr KernelSwitch kOff = KernelSwitch::Off;

// The model: Z (when used) comes from a Relu of an input, so it is an intermediate that dies at
// the convolution and the executor lends its memory to Y (the in-place residual path).
inline std::string model_bytes(const Case& c, Shape* y_shape) {
  const int64_t C = c.x[3];
  ModelBuilder m(17);
  auto* op = m.proto().add_opset_import();
  op->set_domain("ai.polyinfer");
  op->set_version(1);
  m.input("x", c.x).output("y", {});
  const int64_t ci = C / c.group;  // input channels per group
  m.initializer("w", {c.m, ci, c.kh, c.kw}, random_values(c.m * ci * c.kh * c.kw, 7));
  std::vector<std::string> ins = {"x", "w"};
  if (c.bias || c.z) ins.push_back(c.bias ? "b" : "");
  if (c.bias) m.initializer("b", {c.m}, random_values(c.m, 8));
  // Y's shape, for Z: the usual window arithmetic over explicit pads.
  const std::vector<int64_t> s = c.strides.empty() ? std::vector<int64_t>{1, 1} : c.strides;
  const std::vector<int64_t> d = c.dilations.empty() ? std::vector<int64_t>{1, 1} : c.dilations;
  const std::vector<int64_t> p = c.pads.empty() ? std::vector<int64_t>{0, 0, 0, 0} : c.pads;
  const int64_t oh = (c.x[1] + p[0] + p[2] - d[0] * (c.kh - 1) - 1) / s[0] + 1;
  const int64_t ow = (c.x[2] + p[1] + p[3] - d[1] * (c.kw - 1) - 1) / s[1] + 1;
  *y_shape = {c.x[0], oh, ow, c.m};
  if (c.z) {
    m.input("zin", *y_shape);
    m.node("Relu", {"zin"}, {"z"}, "relu");
    ins.push_back("z");
  }
  m.node("NhwcFusedConv", ins, {"y"}, "conv");
  auto* n = test::last_node(m);
  n->set_domain("ai.polyinfer");
  test::set_ints(n, "kernel_shape", {c.kh, c.kw});
  // Empty: left to the operator's default.
  for (const auto& [name, v] : {std::pair{"strides", c.strides}, std::pair{"pads", c.pads},
                                std::pair{"dilations", c.dilations}})
    if (!v.empty()) test::set_ints(n, name, v);
  test::set_activation(n, "activation", c.activation, c.params);
  if (c.group > 1) {
    auto* g = n->add_attribute();
    g->set_name("group");
    g->set_type(onnx::AttributeProto::INT);
    g->set_i(c.group);
  }
  return m.bytes();
}

// The implementation the CPU provider picks for the case's convolution at level 0 ("" when
// the node is missing from the placement report), with `threads` (0: the session's default) and
// CPU options `cpu`.
inline std::string conv_impl(const Case& c, int threads = 0, const CpuProviderOptions& cpu = {}) {
  Shape y_shape;
  const std::string bytes = model_bytes(c, &y_shape);
  SessionOptions o;
  o.cpu = cpu;
  o.optimization_level = 0;
  o.threads = threads;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  for (const auto& n : s.placement().nodes)
    if (n.node == "conv") return n.impl;
  return "";
}

// Runs the case's model on the CPU provider and on `cpu-ref` at each of `thread_counts`; checks
// that the node ran on `impl` and that the outputs agree. `cpu`: the CPU provider's options.
inline void expect_matches_reference(const Case& c, const std::string& impl,
                                     const std::vector<int>& thread_counts = {1, 2},
                                     const CpuProviderOptions& cpu = {}) {
  Shape y_shape;
  const std::string bytes = model_bytes(c, &y_shape);
  for (int threads : thread_counts) {
    SessionOptions fast, ref;
    fast.cpu = cpu;
    fast.optimization_level = ref.optimization_level = 0;
    fast.threads = ref.threads = threads;
    ref.providers = {"cpu-ref"};
    Session a = Session::load_bytes(bytes.data(), bytes.size(), fast);
    Session b = Session::load_bytes(bytes.data(), bytes.size(), ref);
    std::map<std::string, Value> feed;
    feed["x"] = Tensor::from_vector<float>(c.x, random_values(shape_numel(c.x), 1));
    if (c.z)
      feed["zin"] = Tensor::from_vector<float>(y_shape, random_values(shape_numel(y_shape), 2));
    const Tensor ya = a.run(feed)[0].tensor(), yb = b.run(feed)[0].tensor();
    std::string ran;
    for (const auto& n : a.placement().nodes)
      if (n.node == "conv") ran = n.impl;
    EXPECT_EQ(ran, impl) << "the convolution ran elsewhere";
    ASSERT_EQ(ya.shape(), y_shape);
    ASSERT_EQ(yb.shape(), y_shape);
    const float* pa = ya.data<float>();
    const float* pb = yb.data<float>();
    // Sums of up to ~1000 products of values in [-1, 1] in another order (and, for Winograd,
    // through transforms that only add and halve): errors near 1e-6 relative to the sum's
    // magnitude.
    for (int64_t i = 0; i < ya.numel(); ++i)
      ASSERT_NEAR(pa[i], pb[i], 1e-4f * (1.f + std::fabs(pb[i])))
          << "at flat index " << i << ", " << threads << " threads";
  }
}

}  // namespace polyinfer::conv_test
