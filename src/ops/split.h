// Split's part sizes resolved against an input: the reference kernel (ops/concat_split.cpp) and
// the Vulkan one (providers/vulkan/ops/split.cpp) both read them here, so they cannot disagree on
// the rules or the errors.
//
// The sizes come from: the optional second input (opset 1 and 13+), the 'split' attribute
// (opset 1..12), or else equal parts — one per output, or `num_outputs` (opset 18+), where the
// last part may be smaller when the axis does not divide evenly.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "ops/shape_rules.h"
#include "runtime/kernel.h"

namespace polyinfer {

struct SplitAttrs {
  explicit SplitAttrs(const KernelInfo& info)
      : label(info.node().label()), opset(info.opset()), axis(info.attr_int("axis", 0)) {
    if (opset < 13) split_attr = info.attr_ints("split");
    if (opset >= 18 && info.has_attr("num_outputs")) {
      num_outputs = info.attr_int("num_outputs");
      PI_CHECK(num_outputs == static_cast<int64_t>(info.num_outputs()), InvalidModel, label,
               ": num_outputs=", num_outputs, " but the node has ", info.num_outputs(), " outputs");
    }
  }
  // Whether the sizes may come from input 1.
  bool sizes_from_input() const { return opset == 1 || opset >= 13; }

  std::string label;
  int opset;
  int64_t axis;
  int64_t num_outputs = 0;
  std::vector<int64_t> split_attr;
};

struct SplitPlan {
  int64_t axis = 0;            // normalized
  std::vector<int64_t> sizes;  // one per output, summing to the axis' length
};

inline SplitPlan plan_split(const SplitAttrs& a, KernelContext& ctx) {
  const std::string& label = a.label;
  const Tensor& x = ctx.input(0);
  SplitPlan p;
  p.axis = normalize_axis(a.axis, x.rank(), label.c_str());
  const int64_t axis = p.axis;
  const int64_t dim = x.shape()[axis];
  const int64_t nout = static_cast<int64_t>(ctx.num_outputs());
  std::vector<int64_t>& sizes = p.sizes;
  sizes = a.split_attr;
  if (a.sizes_from_input() && ctx.has_input(1)) sizes = read_int_list(ctx.input(1), label.c_str());
  if (sizes.empty()) {
    PI_CHECK(nout > 0, InvalidModel, label, ": has no outputs");
    if (a.num_outputs > 0) {
      const int64_t part = (dim + nout - 1) / nout;
      for (int64_t i = 0; i < nout; ++i)
        sizes.push_back(std::max<int64_t>(0, std::min(part, dim - i * part)));
    } else {
      PI_CHECK(dim % nout == 0, ShapeMismatch, label, ": axis ", axis, " of ", x.describe(),
               " does not split into ", nout, " equal parts");
      sizes.assign(nout, dim / nout);
    }
  }
  PI_CHECK(static_cast<int64_t>(sizes.size()) == nout, InvalidArgument, label, ": split ",
           int_list_str(sizes), " has ", sizes.size(), " entries for ", nout, " outputs");
  int64_t sum = 0;
  for (int64_t s : sizes) {
    PI_CHECK(s >= 0 && s <= dim, InvalidArgument, label, ": split ", int_list_str(sizes),
             " has a size outside [0, ", dim, "]");
    sum += s;
  }
  PI_CHECK(sum == dim, ShapeMismatch, label, ": split ", int_list_str(sizes), " sums to ", sum,
           " but axis ", axis, " of ", x.describe(), " has ", dim);
  return p;
}

}  // namespace polyinfer
