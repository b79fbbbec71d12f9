// Pad's pads resolved against an input: how much each dimension gains before and after (negative
// crops) and the output shape. The reference kernel (ops/pad.cpp) and the fast one (fast/pad.cpp)
// both read them here, so their checks and errors are one.
#pragma once

#include <string>
#include <vector>

#include "core/shape_util.h"
#include "ops/shape_rules.h"
#include "runtime/kernel.h"

namespace polyinfer {

// Where Pad's pads come from: attributes 'paddings' (opset 1) or 'pads' (2..10) with a float
// 'value'; inputs pads, constant_value and (18+) axes from opset 11.
struct PadAttrs {
  explicit PadAttrs(const KernelInfo& info)
      : label(info.node().label()),
        from_attr(info.opset() < 11),
        mode(info.attr_string("mode", "constant")) {
    if (from_attr) {
      pads = info.attr_ints(info.opset() == 1 ? "paddings" : "pads");
      value = info.attr_float("value", 0.0f);
    }
  }
  std::string label;
  bool from_attr;
  std::string mode;
  std::vector<int64_t> pads;
  float value = 0;
};

// Pad's modes; wrap exists from opset 19. Anything else is refused at creation (unsupported).
enum class PadMode { Constant, Reflect, Edge, Wrap };

inline PadMode pad_mode(const KernelInfo& info, const std::string& mode) {
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "edge") return PadMode::Edge;
  if (mode == "wrap" && info.opset() >= 19) return PadMode::Wrap;
  info.unsupported("mode=" + mode);
}

// The input coordinate for coordinate i (relative to the input's start) on an axis of size dim;
// -1 for the constant. Reflect/edge/wrap read relative to the whole input, so a crop on one side
// does not change what the other side's padding copies. (shaders/pad.comp does the same.)
inline int64_t pad_source(PadMode mode, int64_t i, int64_t dim) {
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::Constant: return -1;
    case PadMode::Edge: return i < 0 ? 0 : dim - 1;
    case PadMode::Wrap: return ((i % dim) + dim) % dim;
    case PadMode::Reflect: {
      if (dim == 1) return 0;
      // Reflection without repeating the edge has period 2*(dim-1).
      const int64_t period = 2 * (dim - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

struct PadPlan {
  std::vector<int64_t> before, after;  // per dimension
  Shape out;
};

inline PadPlan plan_pad(const PadAttrs& a, KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int r = x.rank();
  const std::string& label = a.label;
  std::vector<int64_t> pads = a.pads;
  std::vector<int64_t> axes;
  if (!a.from_attr) {
    pads = read_int_list(ctx.input(1), label.c_str());
    if (ctx.has_input(3)) axes = read_int_list(ctx.input(3), label.c_str());
  }
  if (axes.empty())
    for (int d = 0; d < r; ++d) axes.push_back(d);
  const size_t n = axes.size();
  PI_CHECK(pads.size() == 2 * n, InvalidArgument, label, ": pads ", int_list_str(pads),
           " must have 2 entries per padded axis (", n, ")");
  // No real pad is near 2^40 (the element limit); the bound keeps the sums below exact.
  for (int64_t p : pads)
    PI_CHECK(p >= -(int64_t{1} << 40) && p <= (int64_t{1} << 40), InvalidArgument, label, ": pad ",
             p, " is out of range");
  PadPlan p{std::vector<int64_t>(r, 0), std::vector<int64_t>(r, 0), Shape(r)};
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < n; ++i) {
    const int64_t ax = normalize_axis(axes[i], r, label.c_str());
    PI_CHECK(!seen[ax], InvalidArgument, label, ": axis ", axes[i], " is listed twice");
    seen[ax] = true;
    p.before[ax] = pads[i];
    p.after[ax] = pads[i + n];
  }
  for (int d = 0; d < r; ++d) {
    const int64_t dim = x.shape()[d];
    p.out[d] = dim + p.before[d] + p.after[d];
    PI_CHECK(p.out[d] >= 0, InvalidArgument, label, ": pads ", int_list_str(pads),
             " crop more than dimension ", d, " of ", x.describe(), " holds");
    PI_CHECK(a.mode == "constant" || dim > 0 || p.out[d] == 0, InvalidArgument, label,
             ": cannot pad an empty dimension in this mode (", x.describe(), ")");
  }
  return p;
}

// The constant a float Pad of `dtype` fills with: the attribute before opset 11, else input 2
// (read on the host; 0 when absent). The device kernels' rule and error.
inline float pad_float_value(const PadAttrs& a, KernelContext& ctx, DType dtype) {
  if (a.from_attr || !ctx.has_input(2)) return a.value;
  const Tensor v = ctx.input(2).to(Device::cpu());
  PI_CHECK(v.dtype() == dtype && v.numel() == 1, InvalidArgument, a.label, ": constant_value ",
           v.describe(), " must be one ", dtype_name(dtype));
  switch (dtype) {
    case DType::Float16: return float(v.data<Float16>()[0]);
    case DType::BFloat16: return float(v.data<BFloat16>()[0]);
    default: return v.data<float>()[0];
  }
}

}  // namespace polyinfer
