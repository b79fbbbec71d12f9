// What the inference rules of several families share: axes, products of dimensions, and the
// common forms (same type as an input, numpy broadcast of the inputs).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "infer/infer.h"

namespace polyinfer::infer {

// `axis` in [-rank, rank) as an index, or nullopt.
inline std::optional<int64_t> axis_index(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

// The axes of `values` (each in [-rank, rank)) as sorted distinct indices, or nullopt.
std::optional<std::vector<int64_t>> axes_index(const std::vector<int64_t>& values, int64_t rank);

// The product of `dims`, where every one is a number.
std::optional<int64_t> known_product(const Dims& dims);

// Output 0 as input 0's type: elementwise unary operators.
void same_as_input(Context& ctx);
// Output 0 of `elem` (Undefined: input 0's) with the numpy broadcast of the given inputs'
// shapes; unknown shape where a rank is not known.
void broadcast_inputs(Context& ctx, const std::vector<size_t>& inputs, DType elem);

// The axes an operator takes either as an attribute (before `input_since`) or as input `input`
// (from that opset on): nullopt when given but not known; an empty vector when not given.
std::optional<std::vector<int64_t>> axes_attr_or_input(const Context& ctx, const char* attr,
                                                       size_t input, int input_since);

}  // namespace polyinfer::infer
