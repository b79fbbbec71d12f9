// Shape arithmetic shared by kernels and shape inference: axes, strides, broadcasting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "polyinfer/tensor.h"

namespace polyinfer {

// Row-major strides in elements.
std::vector<int64_t> strides_of(const Shape& shape);

// Maps a possibly negative axis into [0, rank); throws InvalidArgument naming `who` when out of
// range. With `inclusive` the range is [0, rank] and a negative axis counts from rank + 1: right
// for Unsqueeze-style insert positions, wrong for Flatten-style axes (there -1 means rank - 1:
// check the range yourself and add rank).
int64_t normalize_axis(int64_t axis, int64_t rank, const char* who, bool inclusive = false);

// Numpy-style multidirectional broadcast of shapes; throws ShapeMismatch naming `who`.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* who);
Shape broadcast_shapes(const std::vector<Shape>& shapes, const char* who);

// Strides (in elements) to read `in` as if it had `out`'s shape under numpy broadcasting:
// broadcast dimensions get stride 0. `in` must broadcast to `out`.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Calls f(out_index, in_offsets...) for every element of `out` in row-major order, where each
// in_offset is the element offset into the corresponding broadcast input. Walks dimension by
// dimension without divisions, so it is fine for plain kernels.
template <size_t N, class F>
void for_each_broadcast(const Shape& out, const std::vector<int64_t> (&in_strides)[N], F&& f) {
  static_assert(N >= 1 && N <= 3, "for_each_broadcast takes 1 to 3 inputs");
  const int rank = static_cast<int>(out.size());
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  if (total == 0) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t off[N] = {};
  for (int64_t i = 0; i < total; ++i) {
    if constexpr (N == 1) f(i, off[0]);
    if constexpr (N == 2) f(i, off[0], off[1]);
    if constexpr (N == 3) f(i, off[0], off[1], off[2]);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) {
        for (size_t k = 0; k < N; ++k) off[k] += in_strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= in_strides[k][d] * (out[d] - 1);
      idx[d] = 0;
    }
  }
}

// Reads a 1-D (or scalar) integer tensor (int32 or int64) as int64 values; throws
// InvalidArgument naming `who` for another dtype.
std::vector<int64_t> read_int_list(const Tensor& t, const char* who);
// Reads a scalar or one-element tensor of any numeric dtype as double.
double read_scalar(const Tensor& t, const char* who);

}  // namespace polyinfer
