#include "ops/window.h"

#include <algorithm>

#include "core/shape_util.h"

namespace polyinfer {

WindowAttrs WindowAttrs::parse(const KernelInfo& info) {
  WindowAttrs a;
  a.auto_pad = info.attr_string("auto_pad", "NOTSET");
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" &&
      a.auto_pad != "SAME_LOWER")
    info.unsupported("auto_pad=" + a.auto_pad);
  a.kernel_shape = info.attr_ints("kernel_shape");
  a.strides = info.attr_ints("strides");
  a.dilations = info.attr_ints("dilations");
  a.pads = info.attr_ints("pads");
  a.group = info.attr_int("group", 1);
  a.ceil_mode = info.attr_int("ceil_mode", 0) != 0;
  PI_CHECK(a.group >= 1, InvalidModel, info.node().label(), ": group must be positive, got ",
           a.group);
  return a;
}

int64_t WindowGeometry::in_size() const { return shape_numel(in); }
int64_t WindowGeometry::out_size() const { return shape_numel(out); }
int64_t WindowGeometry::kernel_size() const { return shape_numel(kernel); }

namespace {

std::vector<int64_t> or_fill(const std::vector<int64_t>& v, size_t n, int64_t def, const char* name,
                             const std::string& who) {
  if (v.empty()) return std::vector<int64_t>(n, def);
  PI_CHECK(v.size() == n, InvalidModel, who, ": ", name, " has ", v.size(), " values, expected ",
           n);
  return v;
}

}  // namespace

WindowGeometry window_geometry(const WindowAttrs& a, const Shape& in, const Shape& kernel,
                               const std::string& who, bool pool) {
  WindowGeometry g;
  g.rank = static_cast<int>(in.size());
  const size_t r = in.size();
  PI_CHECK(kernel.size() == r, ShapeMismatch, who, ": kernel has ", kernel.size(),
           " spatial dimensions but the input has ", r);
  g.in = in;
  g.kernel = kernel;
  g.strides = or_fill(a.strides, r, 1, "strides", who);
  g.dilations = or_fill(a.dilations, r, 1, "dilations", who);
  const std::vector<int64_t> pads = or_fill(a.pads, 2 * r, 0, "pads", who);
  g.pad_begin.assign(r, 0);
  g.pad_end.assign(r, 0);
  g.out.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    PI_CHECK(g.strides[i] >= 1 && g.dilations[i] >= 1, InvalidModel, who,
             ": strides and dilations must be positive");
    PI_CHECK(kernel[i] >= 1, InvalidModel, who, ": kernel size must be positive");
    const int64_t s = g.strides[i];
    const int64_t eff = (kernel[i] - 1) * g.dilations[i] + 1;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      g.out[i] = (in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + eff - in[i]);
      g.pad_begin[i] = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    if (a.auto_pad == "NOTSET") {
      g.pad_begin[i] = pads[i];
      g.pad_end[i] = pads[i + r];
      PI_CHECK(pads[i] >= 0 && pads[i + r] >= 0, InvalidModel, who, ": pads must be >= 0");
    }
    const int64_t span = in[i] + g.pad_begin[i] + g.pad_end[i] - eff;
    PI_CHECK(span >= 0, ShapeMismatch, who, ": window of ", eff, " does not fit input size ", in[i],
             " with its padding");
    if (pool && a.ceil_mode && a.auto_pad == "NOTSET") {
      g.out[i] = (span + s - 1) / s + 1;
      // A last window that would start in the end padding is dropped (as PyTorch and ORT do).
      if ((g.out[i] - 1) * s >= in[i] + g.pad_begin[i]) --g.out[i];
    } else {
      g.out[i] = span / s + 1;
    }
  }
  return g;
}

void window_taps(const WindowGeometry& g, int64_t o, std::vector<int64_t>& taps) {
  const int64_t ksz = g.kernel_size();
  taps.resize(static_cast<size_t>(ksz));
  std::vector<int64_t> oi(g.rank), k(g.rank);
  unflatten(o, g.out, oi);
  for (int64_t ki = 0; ki < ksz; ++ki) {
    unflatten(ki, g.kernel, k);
    int64_t off = 0;
    for (int d = 0; d < g.rank; ++d) {
      const int64_t p = oi[d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
      if (p < 0 || p >= g.in[d]) {
        off = -1;
        break;
      }
      off = off * g.in[d] + p;
    }
    taps[ki] = off;
  }
}

WindowGeometry conv_geometry(const WindowAttrs& a, const Shape& x, const Shape& w,
                             const std::string& who) {
  PI_CHECK(x.size() >= 3, ShapeMismatch, who, ": input must be [N, C, D...], got ", shape_str(x));
  PI_CHECK(w.size() == x.size(), ShapeMismatch, who, ": weight ", shape_str(w),
           " must have the input's rank ", x.size());
  PI_CHECK(x[1] % a.group == 0 && w[0] % a.group == 0 && w[1] * a.group == x[1], ShapeMismatch, who,
           ": input ", shape_str(x), " and weight ", shape_str(w),
           " do not agree with group=", a.group);
  const Shape in(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
  if (!a.kernel_shape.empty())
    PI_CHECK(a.kernel_shape == kernel, ShapeMismatch, who, ": kernel_shape ",
             shape_str(a.kernel_shape), " does not match weight ", shape_str(w));
  return window_geometry(a, in, kernel, who);
}

ConvTransposeAttrs ConvTransposeAttrs::parse(const KernelInfo& info) {
  return {WindowAttrs::parse(info), info.attr_ints("output_padding"),
          info.attr_ints("output_shape")};
}

ConvTransposeGeometry conv_transpose_geometry(const ConvTransposeAttrs& a, const Shape& x,
                                              const Shape& w, const std::string& who) {
  PI_CHECK(x.size() >= 3 && w.size() == x.size(), ShapeMismatch, who, ": input ", shape_str(x),
           " and weight ", shape_str(w), " must be [N, C, D...] and [C, M/group, k...]");
  ConvTransposeGeometry g;
  g.group = a.window.group;
  g.N = x[0];
  g.C = x[1];
  g.M = w[1] * g.group;
  PI_CHECK(w[0] == g.C && g.C % g.group == 0, ShapeMismatch, who, ": weight ", shape_str(w),
           " does not match input channels ", g.C, " with group=", g.group);
  const size_t r = x.size() - 2;
  g.in.assign(x.begin() + 2, x.end());
  g.kernel.assign(w.begin() + 2, w.end());
  if (!a.window.kernel_shape.empty())
    PI_CHECK(a.window.kernel_shape == g.kernel, ShapeMismatch, who, ": kernel_shape ",
             shape_str(a.window.kernel_shape), " does not match weight ", shape_str(w));
  const auto fill = [&](const std::vector<int64_t>& v, size_t n, int64_t def, const char* name) {
    if (v.empty()) return std::vector<int64_t>(n, def);
    PI_CHECK(v.size() == n, InvalidModel, who, ": ", name, " has ", v.size(), " values, expected ",
             n);
    return v;
  };
  g.strides = fill(a.window.strides, r, 1, "strides");
  g.dilations = fill(a.window.dilations, r, 1, "dilations");
  const auto pads = fill(a.window.pads, 2 * r, 0, "pads");
  const auto outpad = fill(a.output_padding, r, 0, "output_padding");
  // output_shape may list only the spatial sizes or the whole output shape.
  std::vector<int64_t> oshape = a.output_shape;
  if (oshape.size() == r + 2) oshape.erase(oshape.begin(), oshape.begin() + 2);
  if (!oshape.empty())
    PI_CHECK(oshape.size() == r, InvalidModel, who, ": output_shape has ", oshape.size(),
             " values, expected ", r);
  const std::string& auto_pad = a.window.auto_pad;
  g.out.assign(r, 0);
  g.pad_begin.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    PI_CHECK(g.strides[i] >= 1 && g.dilations[i] >= 1 && g.kernel[i] >= 1, InvalidModel, who,
             ": strides, dilations and kernel sizes must be positive");
    const int64_t eff = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t full = g.strides[i] * (g.in[i] - 1) + outpad[i] + eff;
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (!oshape.empty() || same) {
      g.out[i] = !oshape.empty() ? oshape[i] : g.in[i] * g.strides[i];
      // An output larger than the full result is zero-extended at the end.
      const int64_t total = std::max<int64_t>(0, full - g.out[i]);
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad == "VALID") {
      g.out[i] = full;
    } else {
      PI_CHECK(pads[i] >= 0 && pads[i + r] >= 0, InvalidModel, who, ": pads must be >= 0");
      g.out[i] = full - pads[i] - pads[i + r];
      g.pad_begin[i] = pads[i];
    }
    PI_CHECK(g.out[i] >= 0, ShapeMismatch, who, ": padding leaves a negative output size");
  }
  return g;
}

}  // namespace polyinfer
