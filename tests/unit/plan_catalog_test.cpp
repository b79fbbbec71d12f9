// The target catalog: the built-in data parses and keeps its promises (every known figure has a
// source, sparse-only figures are marked derived, op-support ids resolve), and malformed
// documents fail with the origin, entry and field named.
#include <gtest/gtest.h>

#include <string>

#include "plan/catalog.h"
#include "plan/op_support.h"
#include "polyinfer/status.h"

namespace polyinfer::plan {
namespace {

std::string error_of(const std::string& json) {
  try {
    parse_catalog(json, "test.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "no error for " << json;
  return "";
}

void expect_sourced(const Target& t, const std::string& what, const Figure& f) {
  if (!f.known) return;
  EXPECT_FALSE(f.source.empty()) << t.id << " " << what << " has no source";
  if (f.derived) {
    EXPECT_FALSE(f.note.empty()) << t.id << " " << what << " is derived without a note";
  }
}

TEST(PlanCatalog, BuiltinHasEveryRequiredTarget) {
  const auto& cat = builtin_catalog();
  for (const char* id : {"h100-sxm",
                         "h200-sxm",
                         "a100-80gb-sxm",
                         "l4",
                         "rtx-4090",
                         "rtx-3060-12gb",
                         "jetson-orin-nano-8gb",
                         "jetson-agx-orin-64gb",
                         "mi300x",
                         "rx-7900-xtx",
                         "arc-a770-16gb",
                         "meteor-lake-npu",
                         "apple-m2",
                         "apple-m3-max",
                         "tpu-v4",
                         "tpu-v5e",
                         "rk3588",
                         "snapdragon-8-gen-3",
                         "raspberry-pi-5",
                         "esp32-s3"}) {
    EXPECT_NE(find_target(cat, id), nullptr) << id;
  }
  // Lookup ignores case and accepts the name.
  ASSERT_NE(find_target(cat, "H100-SXM"), nullptr);
  EXPECT_EQ(find_target(cat, "NVIDIA H100 SXM")->id, "h100-sxm");
  EXPECT_EQ(find_target(cat, "no-such-chip"), nullptr);
}

TEST(PlanCatalog, EveryKnownFigureHasASource) {
  for (const Target& t : builtin_catalog()) {
    for (const auto& [p, f] : t.peak) expect_sourced(t, precision_name(p), f);
    expect_sourced(t, "memory", t.memory);
    expect_sourced(t, "bandwidth", t.bandwidth);
    expect_sourced(t, "power", t.power);
    expect_sourced(t, "node_overhead", t.node_overhead);
  }
}

TEST(PlanCatalog, EveryOpSupportIdResolves) {
  for (const Target& t : builtin_catalog()) {
    if (t.op_support.empty()) continue;
    EXPECT_NE(find_op_support(builtin_op_support(), t.op_support), nullptr)
        << t.id << " links unknown profile '" << t.op_support << "'";
  }
  EXPECT_EQ(find_target(builtin_catalog(), "rk3588")->op_support, "rknn-toolkit2-2.3.2");
  EXPECT_EQ(find_target(builtin_catalog(), "snapdragon-8-gen-3")->op_support, "qnn-ep");
  EXPECT_EQ(find_target(builtin_catalog(), "meteor-lake-npu")->op_support, "openvino-npu");
  EXPECT_EQ(find_target(builtin_catalog(), "h100-sxm")->op_support, "tensorrt-10");
}

TEST(PlanCatalog, FiguresInBaseUnits) {
  const Target* h100 = find_target(builtin_catalog(), "h100-sxm");
  ASSERT_NE(h100, nullptr);
  ASSERT_TRUE(h100->peak.count(Precision::FP32));
  EXPECT_DOUBLE_EQ(h100->peak.at(Precision::FP32).value, 66.9e12);
  EXPECT_DOUBLE_EQ(h100->bandwidth.value, 3.35e12);
  EXPECT_FALSE(h100->peak.at(Precision::FP16).derived);  // a dense vendor figure
}

TEST(PlanCatalog, SparseOnlyFiguresAreHalvedAndMarked) {
  const Target* l4 = find_target(builtin_catalog(), "l4");
  ASSERT_NE(l4, nullptr);
  const Figure& fp16 = l4->peak.at(Precision::FP16);
  EXPECT_TRUE(fp16.derived);
  EXPECT_DOUBLE_EQ(fp16.value, 121e12);
  EXPECT_NE(fp16.note.find("sparsity"), std::string::npos) << fp16.note;
  EXPECT_TRUE(
      find_target(builtin_catalog(), "jetson-orin-nano-8gb")->peak.at(Precision::INT8).derived);
}

TEST(PlanCatalog, UnknownFiguresStayUnknown) {
  const Target* agx = find_target(builtin_catalog(), "jetson-agx-orin-64gb");
  ASSERT_NE(agx, nullptr);
  EXPECT_FALSE(agx->bandwidth.known);
  EXPECT_TRUE(find_target(builtin_catalog(), "meteor-lake-npu")->peak.empty());
}

TEST(PlanCatalog, ParsesAMinimalDocument) {
  auto cat = parse_catalog(R"({"targets": [{"id": "x", "name": "X", "kind": "cpu",
      "peak": {"int8": {"value": 4e12, "derived": true, "source": "s", "note": "8/2"}},
      "memory": {"value": 1e9, "source": "m"}, "bandwidth": {"known": false}}]})",
                           "t");
  ASSERT_EQ(cat.size(), 1u);
  EXPECT_DOUBLE_EQ(cat[0].peak.at(Precision::INT8).value, 4e12);
  EXPECT_TRUE(cat[0].memory.known);
  EXPECT_FALSE(cat[0].bandwidth.known);
  EXPECT_FALSE(cat[0].power.known);
}

TEST(PlanCatalog, ErrorsNameOriginEntryAndField) {
  std::string e = error_of(R"({"targets": [{"id": "x", "kind": "gpu"}]})");
  EXPECT_NE(e.find("test.json: target 'x': field 'name' is missing"), std::string::npos) << e;

  e = error_of(R"({"targets": [{"id": "x", "name": "X", "kind": "gpu", )"
               R"("memory": {"value": "8GB", "source": "s"}}]})");
  EXPECT_NE(e.find("target 'x': field 'memory.value' must be a number"), std::string::npos) << e;

  e = error_of(R"({"targets": [{"id": "x", "name": "X", "kind": "gpu", )"
               R"("peak": {"fp12": {"value": 1, "source": "s"}}}]})");
  EXPECT_NE(e.find("field 'peak' has unknown precision 'fp12'"), std::string::npos) << e;

  e = error_of(
      R"({"targets": [{"id": "x", "name": "X", "kind": "gpu", "power": {"value": 700}}]})");
  EXPECT_NE(e.find("field 'power' has a value but no \"source\""), std::string::npos) << e;

  e = error_of(R"({"targets": [{"id": "x", "name": "X", "kind": "gpu", )"
               R"("peak": {"fp16": {"value": 1, "source": "s", "derived": true}}}]})");
  EXPECT_NE(e.find("field 'peak.fp16' is derived but has no \"note\""), std::string::npos) << e;

  e = error_of(R"({"targets": [{"id": 7}]})");
  EXPECT_NE(e.find("targets[0]: field 'id' must be a string"), std::string::npos) << e;

  e = error_of(
      R"({"targets": [{"id": "x", "name": "X", "kind": "gpu", "bandwith": {"known": false}}]})");
  EXPECT_NE(e.find("field 'bandwith' is not a known field"), std::string::npos) << e;

  EXPECT_NE(error_of("{").find("test.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[]").find("\"targets\" array"), std::string::npos);
}

TEST(PlanCatalog, PrecisionHelpers) {
  Precision p;
  ASSERT_TRUE(parse_precision("bf16", &p));
  EXPECT_EQ(p, Precision::BF16);
  EXPECT_STREQ(precision_name(Precision::INT4), "int4");
  EXPECT_FALSE(parse_precision("FP16", &p));  // names are lower case, as in the files
  EXPECT_DOUBLE_EQ(precision_bytes(Precision::INT4), 0.5);
  EXPECT_DOUBLE_EQ(precision_bytes(Precision::FP16), 2);
  EXPECT_DOUBLE_EQ(precision_bytes(Precision::FP32), 4);
}

}  // namespace
}  // namespace polyinfer::plan
