// Gather's index rules, shared by the reference kernels (ops/gather.cpp: Gather,
// GatherElements, GatherND) and the Vulkan Gather (providers/vulkan/ops/gather.cpp), so they
// agree on the range check and its error: indices may be negative (counting from the end of the
// indexed dimension); anything outside [-dim, dim) is an InvalidArgument naming the node.
#pragma once

#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {

// All indices (int32 or int64, on the host) as int64, each checked against `dim` and made
// non-negative.
inline std::vector<int64_t> read_indices(const Tensor& t, int64_t dim, const std::string& who) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  dispatch(TypeList<int32_t, int64_t>{}, t.dtype(), who.c_str(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      int64_t v = p[i];
      PI_CHECK(v >= -dim && v < dim, InvalidArgument, who, ": index ", v,
               " is out of range for a dimension of size ", dim);
      out[i] = v < 0 ? v + dim : v;
    }
  });
  return out;
}

// Gather's normalized axis; data must not be a scalar.
inline int64_t gather_axis(const Tensor& x, int64_t axis, const std::string& who) {
  PI_CHECK(x.rank() > 0, InvalidArgument, who, ": cannot gather from a scalar");
  return normalize_axis(axis, x.rank(), who.c_str());
}

// Gather's output shape: data's with dimension `axis` replaced by the indices' shape.
inline Shape gather_shape(const Shape& x, const Shape& indices, int64_t axis) {
  Shape out(x.begin(), x.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  return out;
}

}  // namespace polyinfer
