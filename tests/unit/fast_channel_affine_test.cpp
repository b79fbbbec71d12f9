// The fast ai.polyinfer ChannelAffine kernel (src/providers/cpu/fast/channel_affine.cpp) against
// the reference one (ops/channel_affine.cpp): activations, odd channel counts, threading, errors;
// and ConcatChannelAffine, the same over a concatenation of inputs along their last axis.
#include <gtest/gtest.h>

#include "oracle.h"

namespace polyinfer {
namespace {

using test::OracleOp;

OracleOp affine(const Shape& x, const std::string& act = "") {
  OracleOp op("ChannelAffine", 1, "ai.polyinfer");
  if (!act.empty()) op.attr("activation", act);
  op.random(x).random({x.back()}).random({x.back()});
  return op;
}

TEST(FastChannelAffine, ActivationsAndShapes) {
  for (const char* act : {"", "Relu"}) {
    SCOPED_TRACE(act);
    for (const Shape& s : std::vector<Shape>{{1, 7, 5, 33}, {2, 3, 3, 1}, {17}, {4, 56, 56, 64}}) {
      SCOPED_TRACE(shape_str(s));
      EXPECT_EQ(affine(s, act).check(1e-6, 1e-6).impl.rfind("fast:", 0), 0u);
    }
  }
  auto leaky = affine({2, 5, 5, 19}, "LeakyRelu");
  leaky.attr("activation_params", std::vector<float>{0.2f});
  EXPECT_EQ(leaky.check(1e-6, 1e-6).impl.rfind("fast:", 0), 0u);
  // Activations the fast kernel leaves to the reference one.
  EXPECT_EQ(affine({2, 3, 4}, "Sigmoid").check().impl, "reference");
}

TEST(FastChannelAffine, WrongParameterShapeIsTheReferenceKernelsError) {
  OracleOp op("ChannelAffine", 1, "ai.polyinfer");
  op.random({2, 3, 4}).random({3}).random({3});
  EXPECT_THROW(op.check(), Error);
}

OracleOp concat_affine(const std::vector<Shape>& xs, const std::string& act = "") {
  OracleOp op("ConcatChannelAffine", 1, "ai.polyinfer");
  if (!act.empty()) op.attr("activation", act);
  int64_t c = 0;
  for (const Shape& x : xs) c += x.back();
  op.random({c}).random({c});
  for (const Shape& x : xs) op.random(x);
  return op;
}

TEST(FastConcatChannelAffine, ActivationsShapesAndThreads) {
  const std::vector<std::vector<Shape>> cases = {
      {{1, 7, 5, 33}},                                      // one input: ChannelAffine itself
      {{2, 3, 4, 5}, {2, 3, 4, 7}, {2, 3, 4, 1}},           // odd channel counts
      {{1, 56, 56, 64}, {1, 56, 56, 32}, {1, 56, 56, 32}},  // a DenseNet block's start
      {{9, 3}, {9, 16}},                                    // rank 2
  };
  for (const char* act : {"", "Relu"})
    for (const auto& xs : cases)
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(std::string(act) + " " + shape_str(xs[0]) + " threads " +
                     std::to_string(threads));
        auto r = concat_affine(xs, act).threads(threads).check(1e-6, 1e-6);
        EXPECT_EQ(r.impl.rfind("fast:", 0), 0u) << r.impl;
      }
  auto leaky = concat_affine({{2, 5, 5, 19}, {2, 5, 5, 4}}, "LeakyRelu");
  leaky.attr("activation_params", std::vector<float>{0.2f});
  EXPECT_EQ(leaky.check(1e-6, 1e-6).impl.rfind("fast:", 0), 0u);
  EXPECT_EQ(concat_affine({{2, 3, 4}, {2, 3, 2}}, "Sigmoid").check().impl, "reference");
}

TEST(FastConcatChannelAffine, MismatchedInputsAreTheReferenceKernelsError) {
  EXPECT_THROW(concat_affine({{2, 3, 4}, {2, 4, 4}}).check(), Error);  // outside the last axis
  OracleOp op("ConcatChannelAffine", 1, "ai.polyinfer");
  op.random({5}).random({5}).random({2, 3}).random({2, 3});  // 6 channels, parameters of 5
  EXPECT_THROW(op.check(), Error);
}

}  // namespace
}  // namespace polyinfer
