// The fast ai.polyinfer ChannelAffine kernel (src/providers/cpu/fast/channel_affine.cpp) against
// the reference one (ops/channel_affine.cpp): activations, odd channel counts, threading, errors.
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

}  // namespace
}  // namespace polyinfer
