// The lazy schema registry (onnx/schemas.h) against libonnx's full registry: the same schema for
// every operator, domain and opset, each built from libonnx's own definition rather than taken
// from the full registry.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include <onnx/checker.h>

#include "model_builder.h"
#include "onnx/schemas.h"

namespace polyinfer {
namespace {

TEST(LazySchemas, EveryOperatorAtEveryOpsetIsTheFullRegistrysSchema) {
  const onnx::ISchemaRegistry* lazy = onnx_io::lazy_schemas();
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  std::set<std::pair<std::string, std::string>> ops;  // (domain, name)
  for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history())
    ops.insert({s.domain(), s.Name()});
  ASSERT_GT(ops.size(), 150u);
  int compared = 0;
  for (const auto& [domain, name] : ops) {
    ASSERT_TRUE(ranges.count(domain)) << domain;
    for (int v = ranges.at(domain).first; v <= ranges.at(domain).second + 1; ++v) {
      const onnx::OpSchema* want = onnx::OpSchemaRegistry::Schema(name, v, domain);
      const onnx::OpSchema* got = lazy->GetSchema(name, v, domain);
      const std::string what = domain + "." + name + " at opset " + std::to_string(v);
      ASSERT_EQ(got == nullptr, want == nullptr) << what;
      if (!want) continue;
      // Built from GetOpSchema<>, not handed over from the full registry.
      EXPECT_NE(got, want) << what << " came from the full registry";
      EXPECT_EQ(got->Name(), want->Name()) << what;
      EXPECT_EQ(got->domain(), want->domain()) << what;
      EXPECT_EQ(got->SinceVersion(), want->SinceVersion()) << what;
      EXPECT_EQ(got->Deprecated(), want->Deprecated()) << what;
      EXPECT_EQ(got->min_input(), want->min_input()) << what;
      EXPECT_EQ(got->max_input(), want->max_input()) << what;
      EXPECT_EQ(got->min_output(), want->min_output()) << what;
      EXPECT_EQ(got->max_output(), want->max_output()) << what;
      EXPECT_EQ(got->has_type_and_shape_inference_function(),
                want->has_type_and_shape_inference_function())
          << what;
      ++compared;
    }
  }
  EXPECT_GT(compared, 1000);
}

TEST(LazySchemas, UnknownOperatorsAndDomainsHaveNone) {
  const onnx::ISchemaRegistry* lazy = onnx_io::lazy_schemas();
  EXPECT_EQ(lazy->GetSchema("NoSuchOp", 13, ""), nullptr);
  EXPECT_EQ(lazy->GetSchema("Conv", 13, "com.example"), nullptr);
  EXPECT_EQ(lazy->GetSchema("Conv", 0, ""), nullptr);  // before Conv-1
  ASSERT_NE(lazy->GetSchema("Conv", 13, ""), nullptr);
  EXPECT_EQ(lazy->GetSchema("Conv", 13, "")->SinceVersion(), 11);
}

}  // namespace
}  // namespace polyinfer
