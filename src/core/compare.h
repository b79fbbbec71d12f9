// Element-wise comparison of values against a reference, for conformance tests and `compare`.
#pragma once

#include <string>

#include "polyinfer/tensor.h"

namespace polyinfer {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// "" when `got` matches `expected`; otherwise one line saying where and by how much they differ.
// Floats match when |got - expected| <= atol + rtol * |expected| (NaN matches NaN, infinities
// must agree); every other dtype, shapes and sequence lengths must match exactly. Maps match
// when they hold the same keys (in any order) with matching values.
std::string compare_values(const Value& got, const Value& expected, const Tolerance& tol);

}  // namespace polyinfer
