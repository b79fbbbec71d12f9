// Which dimensions a Reduce* node reduces, by ONNX's rules, shared by every provider's
// reduction kernels: negative axes count from the end, an axis listed twice is an error naming
// `who`, and an empty axes list reduces everything unless noop_with_empty_axes (opset 18) says
// to reduce nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape_util.h"
#include "polyinfer/status.h"

namespace polyinfer {

inline std::vector<bool> reduced_axes(const std::vector<int64_t>& axes, int rank,
                                      bool noop_with_empty_axes, const char* who) {
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !noop_with_empty_axes);
  for (int64_t a : axes) {
    const int64_t ax = normalize_axis(a, rank, who);
    PI_CHECK(!reduced[ax], InvalidArgument, who, ": axis ", a, " is listed twice");
    reduced[ax] = true;
  }
  return reduced;
}

}  // namespace polyinfer
