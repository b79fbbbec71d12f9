// Slice's parameters resolved against an input shape: the first input index, the step and the
// output length of every dimension. The reference kernel (ops/slice.cpp) and the fast one
// (fast/slice.cpp) both read them here, so they cannot disagree on clamping or on errors.
#pragma once

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {

// Where Slice's starts/ends/axes come from: attributes before opset 10, inputs from 10.
struct SliceAttrs {
  explicit SliceAttrs(const KernelInfo& info)
      : label(info.node().label()), from_attr(info.opset() < 10) {
    if (from_attr) {
      starts = info.attr_ints("starts");
      ends = info.attr_ints("ends");
      axes = info.attr_ints("axes");
      has_axes = info.has_attr("axes");
    }
  }
  std::string label;
  bool from_attr;
  bool has_axes = false;
  std::vector<int64_t> starts, ends, axes;
};

struct SlicePlan {
  std::vector<int64_t> first, step;  // per dimension of the input
  Shape out;
};

inline SlicePlan plan_slice(const SliceAttrs& a, KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int r = x.rank();
  const std::string& label = a.label;
  std::vector<int64_t> starts = a.starts, ends = a.ends, axes = a.axes, steps;
  bool has_axes = a.has_axes;
  if (!a.from_attr) {
    starts = read_int_list(ctx.input(1), label.c_str());
    ends = read_int_list(ctx.input(2), label.c_str());
    has_axes = ctx.has_input(3);
    if (has_axes) axes = read_int_list(ctx.input(3), label.c_str());
    if (ctx.has_input(4)) steps = read_int_list(ctx.input(4), label.c_str());
  }
  const size_t n = starts.size();
  PI_CHECK(ends.size() == n, InvalidArgument, label, ": starts has ", n, " entries but ends has ",
           ends.size());
  if (!has_axes) {
    axes.resize(n);
    for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  }
  if (steps.empty()) steps.assign(n, 1);
  PI_CHECK(axes.size() == n && steps.size() == n, InvalidArgument, label,
           ": starts, ends, axes and steps must have the same length");

  SlicePlan p{std::vector<int64_t>(r, 0), std::vector<int64_t>(r, 1), x.shape()};
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < n; ++i) {
    const int64_t ax = normalize_axis(axes[i], r, label.c_str());
    PI_CHECK(!seen[ax], InvalidArgument, label, ": axis ", axes[i], " is listed twice");
    seen[ax] = true;
    const int64_t dim = x.shape()[ax];
    const int64_t st = steps[i];
    PI_CHECK(st != 0, InvalidArgument, label, ": step for axis ", axes[i], " is 0");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t len;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      len = e > s ? (e - s - 1) / st + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      // -INT64_MIN overflows; any step that large takes one element anyway.
      const int64_t back = st == INT64_MIN ? INT64_MAX : -st;
      len = s > e ? (s - e - 1) / back + 1 : 0;
    }
    p.first[ax] = s;
    // A dimension with at most one element never steps; a huge step would overflow below.
    p.step[ax] = len > 1 ? st : 1;
    p.out[ax] = len;
  }
  return p;
}

}  // namespace polyinfer
