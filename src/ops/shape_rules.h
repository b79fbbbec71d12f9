// Shape rules several providers share: list formatting for messages, dimension products,
// Expand's output shape and the legacy (opset < 7) broadcast of binary operators.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "polyinfer/status.h"

namespace polyinfer {

// "[1,-1,0]" for messages; shape_str would print a negative value as "?" (a dynamic dimension).
inline std::string int_list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Product of the dimensions s[from, to).
inline int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

// Expand's output shape: the broadcast of the input's shape and the requested one (so a
// requested 1 keeps the input's dimension: Expand is bidirectional, unlike numpy.broadcast_to).
inline Shape expand_shape(const Shape& x, const std::vector<int64_t>& requested,
                          const std::string& who) {
  for (int64_t d : requested)
    PI_CHECK(d >= 0, InvalidArgument, who, ": shape ", int_list_str(requested),
             " has a negative dimension");
  return broadcast_shapes(x, requested, who.c_str());
}

// Legacy (opset < 7) broadcasting: B may only be broadcast onto A, and only when broadcast=1;
// B's dimensions line up with A's starting at `axis` (default: B is a suffix of A). Returns B's
// shape padded with ones to A's rank, so that numpy broadcasting does the rest.
inline Shape legacy_b_shape(const Shape& a, const Shape& b, bool broadcast,
                            std::optional<int64_t> axis, const std::string& who) {
  if (!broadcast) {
    PI_CHECK(a == b, ShapeMismatch, who, ": shapes ", shape_str(a), " and ", shape_str(b),
             " differ and broadcast=0");
    return b;
  }
  const int64_t ra = static_cast<int64_t>(a.size());
  const int64_t rb = static_cast<int64_t>(b.size());
  PI_CHECK(rb <= ra, ShapeMismatch, who, ": B ", shape_str(b), " has a higher rank than A ",
           shape_str(a));
  const int64_t start = axis ? normalize_axis(*axis, ra, who.c_str()) : ra - rb;
  PI_CHECK(start + rb <= ra, ShapeMismatch, who, ": B ", shape_str(b), " does not fit into A ",
           shape_str(a), " at axis ", start);
  Shape out(static_cast<size_t>(ra), 1);
  for (int64_t i = 0; i < rb; ++i) {
    PI_CHECK(b[i] == 1 || b[i] == a[start + i], ShapeMismatch, who, ": B ", shape_str(b),
             " does not broadcast onto A ", shape_str(a), " at axis ", start);
    out[start + i] = b[i];
  }
  return out;
}

}  // namespace polyinfer
