// End to end on the committed example: the digits CNN must classify the held-out split exactly
// as well as torch did when the training script exported it (examples/digits/expected.json).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "polyinfer/io.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

const std::string kDir = std::string(POLYINFER_SOURCE_DIR) + "/examples/digits/";

double expected_accuracy() {
  std::ifstream in(kDir + "expected.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const auto key = text.find("\"test_accuracy\"");
  const auto colon = text.find(':', key);
  if (key == std::string::npos || colon == std::string::npos) return -1;
  return std::stod(text.substr(colon + 1));
}

TEST(Digits, AccuracyMatchesTheTrainingScript) {
  Session s = Session::load(kDir + "digits_cnn.onnx");
  const Tensor x = read_npy(kDir + "test_x.npy");
  const auto y = read_npy(kDir + "test_y.npy").to_vector<int64_t>();
  const Tensor logits = s.run({{"pixels", x}}).at(0).tensor();
  ASSERT_EQ(logits.shape(), (Shape{x.dim(0), 10}));
  const auto v = logits.to_vector<float>();
  int64_t correct = 0;
  for (int64_t i = 0; i < x.dim(0); ++i)
    correct += (std::max_element(&v[i * 10], &v[i * 10] + 10) - &v[i * 10]) == y[i];
  const double acc = static_cast<double>(correct) / static_cast<double>(x.dim(0));
  // expected.json rounds to 6 decimals; one image is 1/450 ≈ 0.0022.
  EXPECT_NEAR(acc, expected_accuracy(), 5e-6);
  EXPECT_EQ(s.placement().providers.at(0).provider, "cpu");
  EXPECT_EQ(s.placement().providers.at(0).nodes, s.placement().total_nodes);
}

TEST(Digits, BatchOfOneGivesTheSameLogitsAsTheFullBatch) {
  Session s = Session::load(kDir + "digits_cnn.onnx");
  const Tensor x = read_npy(kDir + "test_x.npy");
  const auto all = s.run({{"pixels", x}}).at(0).tensor().to_vector<float>();
  const auto px = x.to_vector<float>();
  for (int64_t i : {0, 17, 449}) {
    auto one = Tensor::from_vector<float>({1, 1, 8, 8}, std::vector<float>(px.begin() + i * 64, px.begin() + (i + 1) * 64));
    const auto got = s.run({{"pixels", one}}).at(0).tensor().to_vector<float>();
    for (int c = 0; c < 10; ++c) EXPECT_NEAR(got[c], all[i * 10 + c], 1e-4f) << i << "," << c;
  }
}

}  // namespace
}  // namespace polyinfer
