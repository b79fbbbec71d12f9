// Resize's parameters resolved against an input: the attributes (ResizeAttrs) and, per run, the
// output shape with each axis' scale, fractional output length and roi (plan_resize), and each
// axis' taps (plan_axis). The reference kernel (ops/resize.cpp) and the Vulkan one
// (providers/vulkan/ops/resize.cpp) both read them here, so they sample the same input points
// with the same weights and fail with the same errors.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"
#include "runtime/kernel_checks.h"

namespace polyinfer::resize {

enum class Mode { Nearest, Linear, Cubic };
enum class Ctm {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNN,
  TfCropAndResize
};
enum class NearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
enum class AspectPolicy { Stretch, NotLarger, NotSmaller };

struct Tap {
  int64_t index;
  double weight;
};

// How one output coordinate of one axis reads its input: weighted taps, or the extrapolation
// value when tf_crop_and_resize maps it outside the input.
struct AxisPlan {
  std::vector<std::vector<Tap>> taps;  // per output index
  std::vector<char> extrapolate;       // per output index
};

struct ResizeParams {
  Mode mode = Mode::Nearest;
  Ctm ctm = Ctm::HalfPixel;
  NearestMode nearest = NearestMode::RoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0.0;
};

inline std::vector<double> read_float_list(const Tensor& t, const char* who) {
  Tensor h = t.to(Device::cpu());
  return dispatch(FloatTypes{}, h.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = h.data<T>();
    std::vector<double> out(static_cast<size_t>(h.numel()));
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
    return out;
  });
}

inline double cubic_kernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Maps output coordinate x of an axis to the input coordinate (ONNX
// coordinate_transformation_mode). `out_len_f` is scale * in_len, the possibly fractional output
// length the reference uses.
inline double source_coordinate(Ctm ctm, double x, double scale, int64_t in_len, int64_t out_len,
                                double out_len_f, double roi_start, double roi_end) {
  switch (ctm) {
    case Ctm::HalfPixel: return (x + 0.5) / scale - 0.5;
    case Ctm::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out_len) / out_len_f;
      const double center = static_cast<double>(in_len) / 2;
      const double offset = center * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case Ctm::PytorchHalfPixel: return out_len_f > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Ctm::AlignCorners:
      return out_len_f == 1 ? 0.0 : x * static_cast<double>(in_len - 1) / (out_len_f - 1);
    case Ctm::Asymmetric: return x / scale;
    case Ctm::TfHalfPixelForNN: return (x + 0.5) / scale;
    case Ctm::TfCropAndResize: {
      const double span = static_cast<double>(in_len - 1);
      double v = out_len_f == 1 ? (roi_end - roi_start) * span / 2
                                : x * (roi_end - roi_start) * span / (out_len_f - 1);
      return v + roi_start * span;
    }
  }
  return 0.0;
}

inline AxisPlan plan_axis(const ResizeParams& p, int64_t in_len, int64_t out_len, double scale,
                          double out_len_f, double roi_start, double roi_end) {
  AxisPlan plan;
  plan.taps.resize(static_cast<size_t>(out_len));
  plan.extrapolate.assign(static_cast<size_t>(out_len), 0);
  auto clamp_index = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in_len - 1); };
  for (int64_t x = 0; x < out_len; ++x) {
    const double xo = source_coordinate(p.ctm, static_cast<double>(x), scale, in_len, out_len,
                                        out_len_f, roi_start, roi_end);
    auto& taps = plan.taps[static_cast<size_t>(x)];
    // Only a non-finite roi can make xo non-finite; treat it like any point outside the crop.
    if (!std::isfinite(xo) ||
        (p.ctm == Ctm::TfCropAndResize && (xo < 0 || xo > static_cast<double>(in_len - 1)))) {
      plan.extrapolate[static_cast<size_t>(x)] = 1;
      continue;
    }
    const double fl = std::floor(xo);
    const int64_t x0 = static_cast<int64_t>(fl);
    const double ratio = xo - fl;
    if (p.mode == Mode::Nearest) {
      int64_t i = x0;
      if (ratio > 0) {
        switch (p.nearest) {
          case NearestMode::RoundPreferFloor: i = ratio <= 0.5 ? x0 : x0 + 1; break;
          case NearestMode::RoundPreferCeil: i = ratio < 0.5 ? x0 : x0 + 1; break;
          case NearestMode::Floor: i = x0; break;
          case NearestMode::Ceil: i = x0 + 1; break;
        }
      }
      taps.push_back({clamp_index(i), 1.0});
      continue;
    }
    // Tap k reads input index x0 + first + k at distance (first + k - ratio).
    std::vector<std::pair<int64_t, double>> raw;  // (unclamped index, weight)
    if (p.mode == Mode::Linear) {
      if (p.antialias && scale < 1.0) {
        const int64_t first = static_cast<int64_t>(std::floor(-1 / scale) + 1);
        const int64_t n = 2 - 2 * first;
        for (int64_t k = 0; k < n; ++k) {
          const double d = (static_cast<double>(first + k) - ratio) * scale;
          raw.push_back({x0 + first + k, std::clamp(1 - std::fabs(d), 0.0, 1.0)});
        }
      } else {
        raw = {{x0, 1 - ratio}, {x0 + 1, ratio}};
      }
    } else {
      const double s = p.antialias ? std::min(scale, 1.0) : 1.0;
      const int64_t first = static_cast<int64_t>(std::floor(-2 / s) + 1);
      const int64_t n = 2 - 2 * first;
      for (int64_t k = 0; k < n; ++k) {
        const double d = (static_cast<double>(first + k) - ratio) * s;
        raw.push_back({x0 + first + k, cubic_kernel(d, p.cubic_a)});
      }
    }
    if (p.antialias || p.exclude_outside) {
      double sum = 0;
      for (auto& [i, w] : raw) {
        if (p.exclude_outside && (i < 0 || i >= in_len)) w = 0;
        sum += w;
      }
      if (sum != 0)
        for (auto& r : raw) r.second /= sum;
    }
    for (auto& [i, w] : raw) {
      if (w == 0) continue;
      const int64_t ci = clamp_index(i);
      auto it = std::find_if(taps.begin(), taps.end(), [&](const Tap& t) { return t.index == ci; });
      if (it != taps.end()) it->weight += w;
      else
        taps.push_back({ci, w});
    }
  }
  return plan;
}

inline bool is_identity(const AxisPlan& plan, int64_t in_len) {
  if (static_cast<int64_t>(plan.taps.size()) != in_len) return false;
  for (size_t i = 0; i < plan.taps.size(); ++i) {
    if (plan.extrapolate[i] || plan.taps[i].size() != 1 ||
        plan.taps[i][0].index != static_cast<int64_t>(i) || plan.taps[i][0].weight != 1.0)
      return false;
  }
  return true;
}

inline Mode parse_mode(const KernelInfo& info, const std::string& m, bool allow_cubic) {
  if (m == "nearest") return Mode::Nearest;
  if (m == "linear" || m == "bilinear" || m == "trilinear") return Mode::Linear;
  if (m == "cubic" && allow_cubic) return Mode::Cubic;
  info.unsupported("mode=" + m);
}

// Resize's attributes (opsets 10-19).
struct ResizeAttrs {
  explicit ResizeAttrs(const KernelInfo& info) : opset(info.opset()) {
    p.mode = parse_mode(info, info.attr_string("mode", "nearest"), opset >= 11);
    if (opset < 11) {
      // Resize-10 has no transformation attributes: it samples at x / scale like Upsample.
      p.ctm = Ctm::Asymmetric;
      p.nearest = NearestMode::Floor;
      return;
    }
    const std::string ctm = info.attr_string("coordinate_transformation_mode", "half_pixel");
    if (ctm == "half_pixel") p.ctm = Ctm::HalfPixel;
    else if (ctm == "half_pixel_symmetric" && opset >= 19)
      p.ctm = Ctm::HalfPixelSymmetric;
    else if (ctm == "pytorch_half_pixel")
      p.ctm = Ctm::PytorchHalfPixel;
    else if (ctm == "align_corners")
      p.ctm = Ctm::AlignCorners;
    else if (ctm == "asymmetric")
      p.ctm = Ctm::Asymmetric;
    else if (ctm == "tf_half_pixel_for_nn" && opset < 13)
      p.ctm = Ctm::TfHalfPixelForNN;
    else if (ctm == "tf_crop_and_resize")
      p.ctm = Ctm::TfCropAndResize;
    else
      info.unsupported("coordinate_transformation_mode=" + ctm);
    const std::string nm = info.attr_string("nearest_mode", "round_prefer_floor");
    if (nm == "round_prefer_floor") p.nearest = NearestMode::RoundPreferFloor;
    else if (nm == "round_prefer_ceil")
      p.nearest = NearestMode::RoundPreferCeil;
    else if (nm == "floor")
      p.nearest = NearestMode::Floor;
    else if (nm == "ceil")
      p.nearest = NearestMode::Ceil;
    else
      info.unsupported("nearest_mode=" + nm);
    p.cubic_a = info.attr_float("cubic_coeff_a", -0.75f);
    p.exclude_outside = info.attr_int("exclude_outside", 0) != 0;
    p.extrapolation = info.attr_float("extrapolation_value", 0.0f);
    if (opset >= 18) {
      p.antialias = info.attr_int("antialias", 0) != 0 && p.mode != Mode::Nearest;
      axes = info.attr_ints("axes");
      const std::string kp = info.attr_string("keep_aspect_ratio_policy", "stretch");
      if (kp == "stretch") policy = AspectPolicy::Stretch;
      else if (kp == "not_larger")
        policy = AspectPolicy::NotLarger;
      else if (kp == "not_smaller")
        policy = AspectPolicy::NotSmaller;
      else
        info.unsupported("keep_aspect_ratio_policy=" + kp);
    }
  }

  int opset;
  ResizeParams p;
  std::vector<int64_t> axes;
  AspectPolicy policy = AspectPolicy::Stretch;
};

// For GPU kernels that resize only the last two axes with nearest or linear taps (Vulkan, CUDA):
// refuses at creation, naming `provider`, a node that needs more — cubic, antialias,
// tf_half_pixel_for_nn, an input of unknown rank or a scalar, scales/sizes/roi computed at run
// time (the kernel could not fall back once it meets them), or constant ones that change or crop
// an axis before the last two. The rules themselves stay in plan_resize.
inline void require_last_two_axes(const ResizeAttrs& a, const KernelInfo& info,
                                  const std::string& provider) {
  const std::string who = info.node().label();
  const std::string last_two = " (the " + provider + " Resize resizes the last two axes)";
  if (a.p.mode == Mode::Cubic)
    info.unsupported("mode=cubic (the " + provider + " Resize is nearest or linear)");
  if (a.p.antialias) info.unsupported("antialias=1");
  if (a.p.ctm == Ctm::TfHalfPixelForNN)
    info.unsupported("coordinate_transformation_mode=tf_half_pixel_for_nn");
  const int rank = known_rank(info, 0);
  if (rank < 1) info.unsupported(rank < 0 ? "an input of unknown rank" : "a scalar input");
  // Which axes the scales/sizes/roi refer to.
  std::vector<int64_t> axes;
  if (a.axes.empty()) {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  } else {
    for (int64_t ax : a.axes) axes.push_back(ax < 0 ? ax + rank : ax);
  }
  const size_t scales_idx = a.opset < 11 ? 1 : 2;
  // Opsets 11-12 pass an empty scales tensor next to sizes.
  const Tensor* cs = info.constant_input(scales_idx);
  const bool has_scales = info.has_input(scales_idx) && !(cs && cs->numel() == 0);
  const bool has_sizes = a.opset >= 11 && info.has_input(3);
  const size_t used = has_scales ? scales_idx : 3;
  if (has_scales || has_sizes) {
    const Tensor* c = info.constant_input(used);
    if (!c)
      info.unsupported(std::string(has_scales ? "scales" : "sizes") +
                       " computed at run time (the " + provider +
                       " Resize checks at load time that only the last two axes "
                       "change)");
    Shape x;
    const bool shape_known = known_shape(info, 0, &x);
    if (has_scales) {
      const std::vector<double> s = read_float_list(*c, who.c_str());
      for (size_t i = 0; i < s.size() && i < axes.size(); ++i)
        if (axes[i] < rank - 2 && s[i] != 1.0)
          info.unsupported("a scale of " + std::to_string(s[i]) + " on axis " +
                           std::to_string(axes[i]) + last_two);
    } else {
      const std::vector<int64_t> s = read_int_list(*c, who.c_str());
      for (size_t i = 0; i < s.size() && i < axes.size(); ++i)
        if (axes[i] < rank - 2 && (!shape_known || s[i] != x[static_cast<size_t>(axes[i])]))
          info.unsupported(std::string(shape_known ? "sizes changing" : "sizes that may change") +
                           " axis " + std::to_string(axes[i]) + last_two);
    }
  }
  if (a.p.ctm == Ctm::TfCropAndResize && a.opset >= 11 && info.has_input(1)) {
    const Tensor* roi = info.constant_input(1);
    if (!roi) info.unsupported("a roi computed at run time");
    const std::vector<double> r = read_float_list(*roi, who.c_str());
    const size_t na = r.size() / 2;
    for (size_t i = 0; i < na && i < axes.size(); ++i)
      if (axes[i] < rank - 2 && (r[i] != 0.0 || r[i + na] != 1.0))
        info.unsupported("a roi cropping axis " + std::to_string(axes[i]) + last_two);
  }
}

// The output shape; scales[d] is the per-axis scale (out/in for sizes), out_len_f[d] the
// reference's fractional output length, roi 2*rank values (starts then ends).
struct ResizePlan {
  Shape out_shape;
  std::vector<double> scales, out_len_f, roi;
};

inline ResizePlan plan_resize(const ResizeAttrs& a, KernelContext& ctx) {
  const std::string who = ctx.node().label();
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  // Axes the scales/sizes/roi inputs refer to (opset 18); all axes before.
  std::vector<int64_t> axes;
  if (a.axes.empty()) {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  } else {
    for (int64_t ax : a.axes) axes.push_back(normalize_axis(ax, rank, who.c_str()));
    auto sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    PI_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), InvalidArgument, who,
             ": axes repeat an axis");
  }
  const size_t na = axes.size();

  const size_t scales_idx = a.opset < 11 ? 1 : 2;
  std::vector<double> scales_in, roi_in;
  std::vector<int64_t> sizes_in;
  if (ctx.has_input(scales_idx)) scales_in = read_float_list(ctx.input(scales_idx), who.c_str());
  if (a.opset >= 11 && ctx.has_input(3)) sizes_in = read_int_list(ctx.input(3), who.c_str());
  if (a.opset >= 11 && ctx.has_input(1) && a.p.ctm == Ctm::TfCropAndResize)
    roi_in = read_float_list(ctx.input(1), who.c_str());
  PI_CHECK(scales_in.empty() != sizes_in.empty(), InvalidArgument, who,
           ": exactly one of 'scales' and 'sizes' must be given (non-empty)");

  std::vector<double> scales(rank, 1.0), out_len_f(rank);
  Shape out_shape = x.shape();
  for (int d = 0; d < rank; ++d) out_len_f[d] = static_cast<double>(x.shape()[d]);
  if (!scales_in.empty()) {
    PI_CHECK(scales_in.size() == na, InvalidArgument, who, ": 'scales' has ", scales_in.size(),
             " values for ", na, " axes");
    for (size_t i = 0; i < na; ++i) {
      const int64_t d = axes[i];
      PI_CHECK(scales_in[i] > 0 && std::isfinite(scales_in[i]), InvalidArgument, who,
               ": scales must be positive, got ", scales_in[i]);
      scales[d] = scales_in[i];
      out_len_f[d] = scales_in[i] * static_cast<double>(x.shape()[d]);
      PI_CHECK(out_len_f[d] < 1e12, InvalidArgument, who, ": scale ", scales_in[i], " too large");
      out_shape[d] = static_cast<int64_t>(std::floor(out_len_f[d]));
    }
  } else {
    PI_CHECK(sizes_in.size() == na, InvalidArgument, who, ": 'sizes' has ", sizes_in.size(),
             " values for ", na, " axes");
    for (size_t i = 0; i < na; ++i) {
      PI_CHECK(sizes_in[i] >= 0, InvalidArgument, who, ": sizes must be >= 0, got ", sizes_in[i]);
      PI_CHECK(x.shape()[axes[i]] > 0, InvalidArgument, who, ": cannot resize empty axis ",
               axes[i]);
    }
    if (a.policy == AspectPolicy::Stretch) {
      for (size_t i = 0; i < na; ++i) {
        const int64_t d = axes[i];
        out_shape[d] = sizes_in[i];
        scales[d] = static_cast<double>(sizes_in[i]) / static_cast<double>(x.shape()[d]);
        out_len_f[d] = static_cast<double>(sizes_in[i]);
      }
    } else {
      // One scale for all axes, the largest (not_smaller) or smallest (not_larger) ratio.
      double s = a.policy == AspectPolicy::NotLarger ? INFINITY : 0.0;
      for (size_t i = 0; i < na; ++i) {
        const double r = static_cast<double>(sizes_in[i]) / static_cast<double>(x.shape()[axes[i]]);
        s = a.policy == AspectPolicy::NotLarger ? std::min(s, r) : std::max(s, r);
      }
      for (size_t i = 0; i < na; ++i) {
        const int64_t d = axes[i];
        scales[d] = s;
        out_len_f[d] = s * static_cast<double>(x.shape()[d]);
        PI_CHECK(out_len_f[d] < 1e12, InvalidArgument, who, ": output size too large");
        out_shape[d] = static_cast<int64_t>(std::nearbyint(out_len_f[d]));
      }
    }
    for (size_t i = 0; i < na; ++i) {
      PI_CHECK(scales[axes[i]] > 0, InvalidArgument, who, ": output size 0 for axis ", axes[i]);
    }
  }

  // Starts then ends; the whole axis unless tf_crop_and_resize crops it.
  std::vector<double> roi(2 * rank, 0.0);
  std::fill(roi.begin() + rank, roi.end(), 1.0);
  if (a.p.ctm == Ctm::TfCropAndResize) {
    PI_CHECK(roi_in.size() == 2 * na, InvalidArgument, who, ": 'roi' has ", roi_in.size(),
             " values, tf_crop_and_resize needs ", 2 * na);
    for (size_t i = 0; i < na; ++i) {
      roi[axes[i]] = roi_in[i];
      roi[axes[i] + rank] = roi_in[i + na];
    }
  }
  // An empty axis stays empty: scales give 0 * scale = 0, and sizes were refused above.
  return {out_shape, scales, out_len_f, roi};
}

}  // namespace polyinfer::resize
