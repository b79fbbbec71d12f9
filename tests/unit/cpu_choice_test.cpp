// The CPU provider's kernel choice (providers/cpu/choice.h): the tables' rules for
// representative shapes on three kinds of machine, whatever machine runs the test; what the
// switches do; that registration order decides nothing; and the choice as a session reports it.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "model_builder.h"
#include "polyinfer/session.h"
#include "providers/cpu/choice.h"
#include "providers/cpu/fast/avx2_util.h"
#include "runtime/kernel.h"
#include "runtime/provider.h"

namespace polyinfer {
namespace {

using cpu::ChoiceFacts;
using cpu::ConvShape;
using cpu::CpuFeatures;

// An AVX-512 machine where oneDNN runs AVX-512 too, an AVX2 one, and one without AVX2.
const CpuFeatures kAvx512{true, true, true, true};
const CpuFeatures kAvx2{true, false, false, false};
const CpuFeatures kPlain{false, false, false, false};

// A convolution: outputs, inputs per group, window, stride, group; padded unless `unpadded`.
ConvShape conv(int64_t m, int64_t c, int64_t k, int64_t stride = 1, int64_t group = 1,
               bool unpadded = false, bool one_pixel = false) {
  ConvShape s;
  s.m = m, s.c = c, s.kh = s.kw = k, s.stride = stride, s.group = group;
  s.unpadded = unpadded || k == 1;
  s.one_pixel = one_pixel;
  return s;
}

// A k x 1 window over [H, 1], unpadded (a Keras Conv1D export): oneDNN runs it over [1, H]
// (onednn::conv_dims), as fast as a 1-D convolution.
ConvShape tall(int64_t m, int64_t c, int64_t k) {
  ConvShape s = conv(m, c, 1, 1, 1, true);
  s.kh = k;
  return s;
}

// `s` over a feature map of `pixels` (8x8 by default): small enough that oneDNN's cost a call
// decides (choice_tables.cpp: kSmallMapPixels).
ConvShape small_map(ConvShape s, int64_t pixels = 64) {
  s.pixels = pixels;
  return s;
}

std::string first(const ConvShape& s, const CpuFeatures& cpu, const CpuProviderOptions& o = {}) {
  const cpu::ChoiceTable* t = cpu::choice_table("ai.polyinfer", "NhwcFusedConv");
  EXPECT_NE(t, nullptr);
  return t ? cpu::first_choice(*t, ChoiceFacts{cpu, s}, o) : "";
}

struct Pin {
  const char* what;
  ConvShape shape;
  const char* avx512;  // the first row tried on each kind of machine
  const char* avx2;
  const char* plain;
};

TEST(CpuChoice, NhwcFusedConvTablePinsRepresentativeShapes) {
  const Pin pins[] = {
      {"ResNet-50 stem, 7x7/2 3->64", conv(64, 3, 7, 2), "onednn_conv", "onednn_conv",
       "onednn_conv"},
      {"MobileNetV2 stem, 3x3/2 3->32", conv(32, 3, 3, 2), "stem", "onednn_conv", "onednn_conv"},
      {"3x3 64->64", conv(64, 64, 3), "winograd", "winograd", "onednn_conv"},
      {"3x3 32->32", conv(32, 32, 3), "onednn_conv", "winograd", "onednn_conv"},
      {"3x3/2 128->128", conv(128, 128, 3, 2), "onednn_conv", "im2col", "onednn_conv"},
      {"7x7/2 16->16", conv(16, 16, 7, 2), "onednn_conv", "im2col", "onednn_conv"},
      {"1x1 256->64", conv(64, 256, 1), "pointwise_gemm", "onednn_conv", "onednn_conv"},
      {"1x1 16->96", conv(96, 16, 1), "pointwise_gemm", "onednn_conv", "onednn_conv"},
      {"1x1 8->64", conv(64, 8, 1), "onednn_conv", "onednn_conv", "onednn_conv"},
      {"1x1 60 outputs", conv(60, 256, 1), "onednn_conv", "onednn_conv", "onednn_conv"},
      {"1x1 32->16 (narrow)", conv(16, 32, 1), "im2col", "onednn_conv", "onednn_conv"},
      {"1x1/2 256->512", conv(512, 256, 1, 2), "onednn_conv", "onednn_conv", "onednn_conv"},
      {"SE 1x1 8->36 on a 1x1 map", conv(36, 8, 1, 1, 1, true, true), "pointwise_gemm",
       "onednn_conv", "onednn_conv"},
      {"depthwise 3x3", conv(96, 1, 3, 1, 96), "depthwise", "onednn_conv", "onednn_conv"},
      {"depthwise 5x5/2", conv(96, 1, 5, 2, 96), "depthwise", "onednn_conv", "onednn_conv"},
      {"depthwise 7x7", conv(96, 1, 7, 1, 96), "onednn_conv", "onednn_conv", "onednn_conv"},
      {"ResNeXt 32 groups of 4", conv(128, 4, 3, 1, 32), "grouped_avx512", "grouped",
       "onednn_conv"},
      {"RegNet groups of 8", conv(48, 8, 3, 2, 6), "grouped_avx512", "grouped", "onednn_conv"},
      {"2 in, 8 out per group", conv(32, 2, 3, 1, 4), "grouped", "grouped", "onednn_conv"},
      {"64 per group", conv(128, 64, 3, 1, 2), "onednn_conv", "onednn_conv", "onednn_conv"},
      {"Keras Conv1D 5x1 256->512", tall(512, 256, 5), "onednn_conv", "im2col", "onednn_conv"},
      {"digits 3x3 1->16 on 8x8", small_map(conv(16, 1, 3)), "stem", "onednn_conv", "onednn_conv"},
      {"digits 3x3 16->32 on 8x8", small_map(conv(32, 16, 3)), "winograd", "winograd",
       "onednn_conv"},
      {"3x3 16->32 on 9x9", small_map(conv(32, 16, 3), 81), "onednn_conv", "winograd",
       "onednn_conv"},
  };
  for (const Pin& p : pins) {
    SCOPED_TRACE(p.what);
    EXPECT_EQ(first(p.shape, kAvx512), p.avx512);
    EXPECT_EQ(first(p.shape, kAvx2), p.avx2);
    EXPECT_EQ(first(p.shape, kPlain), p.plain);
  }
}

TEST(CpuChoice, SwitchesTurnRowsOffAndOnButNeverReorder) {
  CpuProviderOptions o;
  // Off: the next row.
  o.kernels["winograd"] = KernelSwitch::Off;
  EXPECT_EQ(first(conv(64, 64, 3), kAvx2, o), "onednn_conv");
  EXPECT_EQ(first(conv(64, 64, 3), kAvx512, o), "onednn_conv");
  o.kernels["im2col"] = KernelSwitch::On;
  EXPECT_EQ(first(conv(64, 64, 3), kAvx2, o), "im2col");
  // On: past the row's preference (fewer than 64 inputs on AVX-512), not past its shapes or ISA.
  o = {};
  o.kernels["winograd"] = KernelSwitch::On;
  EXPECT_EQ(first(conv(32, 32, 3), kAvx512, o), "winograd");
  EXPECT_EQ(first(conv(32, 32, 3, 2), kAvx512, o), "onednn_conv");
  EXPECT_EQ(first(conv(32, 32, 3), kPlain, o), "onednn_conv");
  // Opt-in: only switched on; and an earlier row that takes the shape still comes first.
  o = {};
  EXPECT_EQ(first(conv(128, 128, 3, 2), kAvx512), "onednn_conv");
  o.kernels["direct"] = KernelSwitch::On;
  EXPECT_EQ(first(conv(128, 128, 3, 2), kAvx512, o), "direct");
  EXPECT_EQ(first(conv(128, 128, 3, 2), kAvx2, o), "im2col");
  o.kernels["im2col"] = KernelSwitch::Off;
  EXPECT_EQ(first(conv(128, 128, 3, 2), kAvx2, o), "direct");
  // The zmm tile stores any column count; on the ymm one the 1x1 GEMM needs multiples of 8.
  CpuFeatures ymm = kAvx512;
  ymm.zmm_gemm = false;
  EXPECT_EQ(first(conv(36, 8, 1, 1, 1, true, true), ymm), "onednn_conv");
}

TEST(CpuChoice, VerdictsSayWhyARowWasPassedOver) {
  const cpu::ChoiceTable* t = cpu::choice_table("ai.polyinfer", "NhwcFusedConv");
  ASSERT_NE(t, nullptr);
  CpuProviderOptions o;
  o.kernels["stem"] = KernelSwitch::Off;
  std::map<std::string, std::string> why;
  for (const cpu::RowVerdict& v : cpu::judge(*t, ChoiceFacts{kAvx512, conv(32, 32, 3)}, o))
    if (!v.try_it) why[v.row->kernel] = v.reason;
  EXPECT_EQ(why["stem"], "");  // not its shapes: nothing worth saying
  EXPECT_NE(why["winograd"].find("fewer than 64 input channels"), std::string::npos);
  EXPECT_EQ(why["direct"], "");  // opt-in: off unless switched on, not worth a word
  why.clear();
  for (const cpu::RowVerdict& v : cpu::judge(*t, ChoiceFacts{kAvx2, conv(32, 3, 3, 2)}, o))
    if (!v.try_it) why[v.row->kernel] = v.reason;
  EXPECT_EQ(why["stem"], "turned off");
  o = {};
  why.clear();
  for (const cpu::RowVerdict& v : cpu::judge(*t, ChoiceFacts{kAvx2, conv(32, 3, 3, 2)}, o))
    if (!v.try_it) why[v.row->kernel] = v.reason;
  EXPECT_EQ(why["stem"], "needs AVX-512");
}

// Every fast kernel of an operator with a table is one of its rows, every row of a table is a
// kernel registered for each of its operators, and an operator without a table has one kernel
// per tier at any opset: so the order in which static initializers registered them (the link
// order) decides nothing.
TEST(CpuChoice, LinkOrderDecidesNothing) {
  for (const std::string provider : {"cpu", "vulkan", "cuda"}) {
    std::map<std::tuple<std::string, std::string, int>, std::vector<const KernelDef*>> by_op;
    for (const KernelDef* d : kernels_of(provider))
      by_op[{d->domain, d->op_type, static_cast<int>(d->tier)}].push_back(d);
    for (const auto& [key, defs] : by_op) {
      const auto& [domain, op, tier] = key;
      const cpu::ChoiceTable* table = provider == "cpu" ? cpu::choice_table(domain, op) : nullptr;
      SCOPED_TRACE(provider + " " + domain + "." + op + " tier " + std::to_string(tier));
      if (table && tier == static_cast<int>(KernelTier::Fast)) {
        std::set<std::string> rows;
        for (const cpu::ChoiceRow& r : table->rows) rows.insert(r.kernel);
        std::set<std::string> named;
        for (const KernelDef* d : defs) {
          EXPECT_TRUE(rows.count(d->name)) << "fast kernel '" << d->name << "' has no row";
          named.insert(d->name);
        }
        for (const std::string& r : rows) EXPECT_TRUE(named.count(r)) << "row " << r;
        continue;
      }
      for (size_t i = 0; i < defs.size(); ++i)
        for (size_t j = i + 1; j < defs.size(); ++j)
          EXPECT_TRUE(defs[i]->until < defs[j]->since || defs[j]->until < defs[i]->since)
              << "two kernels for opsets " << defs[i]->since << "-" << defs[i]->until << " and "
              << defs[j]->since << "-" << defs[j]->until;
    }
  }
}

// A MatMul with constant weights, as the placement reports its kernel and why.
std::string matmul_model() {
  test::ModelBuilder m(17);
  m.input("a", {4, 32}).output("y", {});
  m.initializer("b", {32, 16}, test::random_values(32 * 16, 3));
  m.node("MatMul", {"a", "b"}, {"y"}, "mm");
  return m.bytes();
}

Placement::NodePlacement placed(const SessionOptions& o) {
  const std::string bytes = matmul_model();
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  EXPECT_EQ(s.placement().nodes.size(), 1u);
  return s.placement().nodes.at(0);
}

TEST(CpuChoice, PlacementSaysWhyAKernelWasChosen) {
  SessionOptions o;
  const Placement::NodePlacement auto_choice = placed(o);
  if (fast::avx2::supported()) {
    EXPECT_EQ(auto_choice.choice.rfind("packed_matmul: ", 0), 0u) << auto_choice.choice;
    EXPECT_NE(auto_choice.impl.find("packed"), std::string::npos) << auto_choice.impl;
  }
  o.cpu.kernels["packed_matmul"] = KernelSwitch::Off;
  const Placement::NodePlacement off = placed(o);
  EXPECT_EQ(off.choice.rfind("onednn_matmul: ", 0), 0u) << off.choice;
  EXPECT_NE(off.choice.find("passed over: packed_matmul (turned off)"), std::string::npos)
      << off.choice;
  EXPECT_EQ(off.impl.rfind("onednn:", 0), 0u) << off.impl;
  // The same switch as text in the provider list.
  SessionOptions text;
  text.providers = {"cpu:packed_matmul=off"};
  EXPECT_EQ(placed(text).impl, off.impl);
  // Operators without a choice say nothing.
  test::ModelBuilder m(17);
  m.input("x", {4}).output("y", {});
  m.node("Relu", {"x"}, {"y"}, "relu");
  const std::string bytes = m.bytes();
  EXPECT_EQ(Session::load_bytes(bytes.data(), bytes.size()).placement().nodes.at(0).choice, "");
}

void expect_invalid(const SessionOptions& o, const std::string& words) {
  const std::string bytes = matmul_model();
  try {
    Session::load_bytes(bytes.data(), bytes.size(), o);
    ADD_FAILURE() << "loaded; expected an error saying '" << words << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(CpuOptions, TextAndTypedOptionsAreCheckedAndNamed) {
  const ProviderName pn = parse_provider_name("cpu:winograd=off:gemm_tile=avx2");
  EXPECT_EQ(pn.base, "cpu");
  EXPECT_EQ(pn.index, -1);
  ASSERT_EQ(pn.options.size(), 2u);
  EXPECT_EQ(pn.options[1], (std::pair<std::string, std::string>{"gemm_tile", "avx2"}));
  EXPECT_EQ(parse_provider_name("vulkan:1:x=y").index, 1);
  EXPECT_THROW(parse_provider_name("cpu:=off"), Error);

  SessionOptions o;
  o.providers = {"cpu:winogard=off"};
  expect_invalid(o, "cpu has no option 'winogard'");
  o.providers = {"cpu:winograd=maybe"};
  expect_invalid(o, "auto, on, off");
  o.providers = {"cpu:gemm_tile=avx3"};
  expect_invalid(o, "avx512_pairs");
  o.providers = {"cpu-ref:winograd=off"};
  expect_invalid(o, "takes no options");
  o.providers = {"cpu"};
  o.cpu.kernels["winogard"] = KernelSwitch::Off;
  expect_invalid(o, "no choice table has");

  ProviderOptions po;
  set_provider_option(po, "cpu", "im2col", "on");
  set_provider_option(po, "cpu", "gemm_tile", "avx2");
  EXPECT_EQ(po.cpu.kernels.at("im2col"), KernelSwitch::On);
  EXPECT_EQ(po.cpu.gemm_tile, GemmTile::Avx2);
  EXPECT_THROW(set_provider_option(po, "vulkan", "memory", "device"), Error);
  bool listed = false;
  for (const ProviderOptionInfo& i : provider_option_list("cpu"))
    listed = listed || (i.key == "winograd" && i.values == "auto|on|off");
  EXPECT_TRUE(listed);
}

TEST(CpuOptions, AGemmTileThisCpuLacksIsAnError) {
  const CpuFeatures here = CpuFeatures::of_this_cpu({});
  SessionOptions o;
  o.cpu.gemm_tile = GemmTile::Avx512;
  if (here.avx512) {
    EXPECT_NO_THROW(placed(o));
  } else {
    expect_invalid(o, "this CPU has no AVX-512");
  }
}

}  // namespace
}  // namespace polyinfer
