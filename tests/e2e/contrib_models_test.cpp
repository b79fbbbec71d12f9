// End to end on models in ONNX Runtime's com.microsoft operators (tests/data/contrib/, written by
// tools/make_contrib_models.py): a tiny BERT and a GPT-2-like decoder as ONNX Runtime's
// transformer optimizer fuses them, the BERT again with 4-bit MatMulNBits, a Llama-like decoder
// in onnxruntime-genai's builder form (prompt and decode steps), and one case per operator
// variant. Each case's outputs must match those ONNX Runtime 1.32 computed, on the `cpu` provider
// (fast kernels, full optimization) and on `cpu-ref` (reference kernels alone).
//
// The bound: |polyinfer - ORT| <= 1e-4 * (1 + |ORT|) unless the case's tolerance.txt says
// otherwise. Both compute in float32 and differ by summation order only; the 4-bit cases too,
// since polyinfer dequantizes the weights to float32 exactly as ONNX Runtime's accuracy-level-0
// path does ((q - zero_point) * scale, then a float product).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "polyinfer/io.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(POLYINFER_SOURCE_DIR) / "tests/data/contrib";

std::vector<std::string> cases() {
  std::vector<std::string> names;
  if (fs::is_directory(kDir))
    for (const auto& e : fs::directory_iterator(kDir))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx"))
        names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Files `prefix`<name>.npy of a case folder, by name.
std::map<std::string, Tensor> arrays(const fs::path& dir, const std::string& prefix) {
  std::map<std::string, Tensor> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (f.rfind(prefix, 0) == 0 && e.path().extension() == ".npy")
      out[f.substr(prefix.size(), f.size() - prefix.size() - 4)] = read_npy(e.path().string());
  }
  return out;
}

double tolerance(const fs::path& dir) {
  std::ifstream in(dir / "tolerance.txt");
  double t = 1e-4;
  if (in) in >> t;
  return t;
}

void compare(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  if (want.dtype() == DType::Float32) {
    const auto g = got.to_vector<float>(), w = want.to_vector<float>();
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      const double err = std::fabs(double(g[i]) - double(w[i])) / (1 + std::fabs(double(w[i])));
      if (!(err <= worst)) worst = std::isnan(err) ? INFINITY : err, at = i;
    }
    EXPECT_LE(worst, tol) << what << "[" << at << "]: polyinfer " << g[at] << ", ORT " << w[at];
  } else if (want.dtype() == DType::Int32) {
    EXPECT_EQ(got.to_vector<int32_t>(), want.to_vector<int32_t>()) << what;
  } else if (want.dtype() == DType::Int64) {
    EXPECT_EQ(got.to_vector<int64_t>(), want.to_vector<int64_t>()) << what;
  } else {
    ADD_FAILURE() << what << ": add dtype " << dtype_name(want.dtype()) << " to the comparison";
  }
}

class ContribModels : public ::testing::TestWithParam<std::string> {};

TEST_P(ContribModels, MatchOnnxRuntime) {
  const fs::path dir = kDir / GetParam();
  const auto inputs = arrays(dir, "in_");
  const auto want = arrays(dir, "out_");
  ASSERT_FALSE(want.empty());
  std::map<std::string, Value> feeds(inputs.begin(), inputs.end());
  for (const std::string provider : {"cpu", "cpu-ref"}) {
    SCOPED_TRACE(provider);
    SessionOptions o;
    o.providers = {provider};
    Session s = Session::load((dir / "model.onnx").string(), o);
    const std::vector<Value> got = s.run(feeds);
    ASSERT_EQ(got.size(), s.outputs().size());
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string& name = s.outputs()[i].name;
      ASSERT_TRUE(want.count(name)) << "no ORT output for " << name;
      compare(got[i].tensor(), want.at(name), tolerance(dir), provider + " " + name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Contrib, ContribModels, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The cases are committed: an empty folder would pass the suite by running nothing.
TEST(ContribModelsData, EveryKindOfCaseIsThere) {
  const std::vector<std::string> names = cases();
  for (const char* want : {"bert_fused", "bert_int4", "gpt2_fused", "llama_prompt", "llama_decode",
                           "op_gqa_prompt", "op_matmul_nbits_4bit_b32"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}

}  // namespace
}  // namespace polyinfer
