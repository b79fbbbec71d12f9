// Resize (opsets 10-19) and its predecessor Upsample (opsets 7-9).
//
// Every mode is separable: the output is computed one axis at a time, innermost axis first, each
// pass mapping every output coordinate of that axis to a few weighted input taps. That is the
// order in which the ONNX reference interpolates, so tf_crop_and_resize extrapolation and
// exclude_outside renormalisation combine across axes exactly as it does. Arithmetic is double
// (the reference computes in float64) and is stored back in the input dtype.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

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

std::vector<double> read_float_list(const Tensor& t, const char* who) {
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

double cubic_kernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Maps output coordinate x of an axis to the input coordinate (ONNX
// coordinate_transformation_mode). `out_len_f` is scale * in_len, the possibly fractional output
// length the reference uses.
double source_coordinate(Ctm ctm, double x, double scale, int64_t in_len, int64_t out_len,
                         double out_len_f, double roi_start, double roi_end) {
  switch (ctm) {
    case Ctm::HalfPixel:
      return (x + 0.5) / scale - 0.5;
    case Ctm::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out_len) / out_len_f;
      const double center = static_cast<double>(in_len) / 2;
      const double offset = center * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case Ctm::PytorchHalfPixel:
      return out_len_f > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Ctm::AlignCorners:
      return out_len_f == 1 ? 0.0 : x * static_cast<double>(in_len - 1) / (out_len_f - 1);
    case Ctm::Asymmetric:
      return x / scale;
    case Ctm::TfHalfPixelForNN:
      return (x + 0.5) / scale;
    case Ctm::TfCropAndResize: {
      const double span = static_cast<double>(in_len - 1);
      double v = out_len_f == 1 ? (roi_end - roi_start) * span / 2
                                : x * (roi_end - roi_start) * span / (out_len_f - 1);
      return v + roi_start * span;
    }
  }
  return 0.0;
}

AxisPlan plan_axis(const ResizeParams& p, int64_t in_len, int64_t out_len, double scale,
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
      else taps.push_back({ci, w});
    }
  }
  return plan;
}

bool is_identity(const AxisPlan& plan, int64_t in_len) {
  if (static_cast<int64_t>(plan.taps.size()) != in_len) return false;
  for (size_t i = 0; i < plan.taps.size(); ++i) {
    if (plan.extrapolate[i] || plan.taps[i].size() != 1 ||
        plan.taps[i][0].index != static_cast<int64_t>(i) || plan.taps[i][0].weight != 1.0)
      return false;
  }
  return true;
}

template <class T>
T store(double v) {
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Float16> ||
                std::is_same_v<T, BFloat16>) {
    return static_cast<T>(static_cast<compute_t<T>>(v));
  } else {
    // Integer images: round to nearest and saturate rather than wrap.
    const double r = std::nearbyint(v);
    if (!(r >= static_cast<double>(std::numeric_limits<T>::lowest())))
      return std::numeric_limits<T>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  }
}

// Resizes `x` to `out_shape`; scales[d] is the per-axis scale (out/in for sizes), out_len_f[d]
// the reference's fractional output length, roi 2*rank values (starts then ends).
void resize_nd(const ResizeParams& p, const Tensor& x, Tensor& y, const Shape& out_shape,
               const std::vector<double>& scales, const std::vector<double>& out_len_f,
               const std::vector<double>& roi, const char* who) {
  const int rank = x.rank();
  std::vector<AxisPlan> plans(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) {
    PI_CHECK(out_shape[d] == 0 || x.shape()[d] > 0, InvalidArgument, who,
             ": cannot resize an empty axis ", d, " to ", out_shape[d]);
    plans[d] = plan_axis(p, x.shape()[d], out_shape[d], scales[d], out_len_f[d], roi[d],
                         roi[d + rank]);
  }
  if (shape_numel(out_shape) == 0) return;
  dispatch(NumericTypes{}, x.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data<T>();
    Shape cur = x.shape();
    std::vector<double> buf(static_cast<size_t>(x.numel()));
    for (size_t i = 0; i < buf.size(); ++i)
      buf[i] = static_cast<double>(static_cast<compute_t<T>>(src[i]));
    for (int d = rank - 1; d >= 0; --d) {
      const AxisPlan& plan = plans[d];
      if (is_identity(plan, cur[d])) continue;
      int64_t outer = 1, inner = 1;
      for (int k = 0; k < d; ++k) outer *= cur[k];
      for (int k = d + 1; k < rank; ++k) inner *= cur[k];
      const int64_t in_len = cur[d], out_len = out_shape[d];
      std::vector<double> next(static_cast<size_t>(outer * out_len * inner));
      for (int64_t o = 0; o < outer; ++o) {
        const double* in_base = buf.data() + o * in_len * inner;
        double* out_base = next.data() + o * out_len * inner;
        for (int64_t j = 0; j < out_len; ++j) {
          double* dst = out_base + j * inner;
          if (plan.extrapolate[j]) {
            std::fill(dst, dst + inner, p.extrapolation);
            continue;
          }
          std::fill(dst, dst + inner, 0.0);
          for (const Tap& t : plan.taps[j]) {
            const double* s = in_base + t.index * inner;
            for (int64_t i = 0; i < inner; ++i) dst[i] += t.weight * s[i];
          }
        }
      }
      buf.swap(next);
      cur[d] = out_len;
    }
    T* dst = y.data<T>();
    for (size_t i = 0; i < buf.size(); ++i) dst[i] = store<T>(buf[i]);
  });
}

Mode parse_mode(const KernelInfo& info, const std::string& m, bool allow_cubic) {
  if (m == "nearest") return Mode::Nearest;
  if (m == "linear" || m == "bilinear" || m == "trilinear") return Mode::Linear;
  if (m == "cubic" && allow_cubic) return Mode::Cubic;
  info.unsupported("mode=" + m);
}

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(const KernelInfo& info) : opset_(info.opset()) {
    p_.mode = parse_mode(info, info.attr_string("mode", "nearest"), opset_ >= 11);
    if (opset_ < 11) {
      // Resize-10 has no transformation attributes: it samples at x / scale like Upsample.
      p_.ctm = Ctm::Asymmetric;
      p_.nearest = NearestMode::Floor;
      return;
    }
    const std::string ctm = info.attr_string("coordinate_transformation_mode", "half_pixel");
    if (ctm == "half_pixel") p_.ctm = Ctm::HalfPixel;
    else if (ctm == "half_pixel_symmetric" && opset_ >= 19) p_.ctm = Ctm::HalfPixelSymmetric;
    else if (ctm == "pytorch_half_pixel") p_.ctm = Ctm::PytorchHalfPixel;
    else if (ctm == "align_corners") p_.ctm = Ctm::AlignCorners;
    else if (ctm == "asymmetric") p_.ctm = Ctm::Asymmetric;
    else if (ctm == "tf_half_pixel_for_nn" && opset_ < 13) p_.ctm = Ctm::TfHalfPixelForNN;
    else if (ctm == "tf_crop_and_resize") p_.ctm = Ctm::TfCropAndResize;
    else info.unsupported("coordinate_transformation_mode=" + ctm);
    const std::string nm = info.attr_string("nearest_mode", "round_prefer_floor");
    if (nm == "round_prefer_floor") p_.nearest = NearestMode::RoundPreferFloor;
    else if (nm == "round_prefer_ceil") p_.nearest = NearestMode::RoundPreferCeil;
    else if (nm == "floor") p_.nearest = NearestMode::Floor;
    else if (nm == "ceil") p_.nearest = NearestMode::Ceil;
    else info.unsupported("nearest_mode=" + nm);
    p_.cubic_a = info.attr_float("cubic_coeff_a", -0.75f);
    p_.exclude_outside = info.attr_int("exclude_outside", 0) != 0;
    p_.extrapolation = info.attr_float("extrapolation_value", 0.0f);
    if (opset_ >= 18) {
      p_.antialias = info.attr_int("antialias", 0) != 0 && p_.mode != Mode::Nearest;
      axes_ = info.attr_ints("axes");
      const std::string kp = info.attr_string("keep_aspect_ratio_policy", "stretch");
      if (kp == "stretch") policy_ = AspectPolicy::Stretch;
      else if (kp == "not_larger") policy_ = AspectPolicy::NotLarger;
      else if (kp == "not_smaller") policy_ = AspectPolicy::NotSmaller;
      else info.unsupported("keep_aspect_ratio_policy=" + kp);
    }
  }

  void run(KernelContext& ctx) override {
    const std::string who = ctx.node().label();
    const Tensor& x = ctx.input(0);
    const int rank = x.rank();
    // Axes the scales/sizes/roi inputs refer to (opset 18); all axes before.
    std::vector<int64_t> axes;
    if (axes_.empty()) {
      for (int d = 0; d < rank; ++d) axes.push_back(d);
    } else {
      for (int64_t a : axes_) axes.push_back(normalize_axis(a, rank, who.c_str()));
      auto sorted = axes;
      std::sort(sorted.begin(), sorted.end());
      PI_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), InvalidArgument,
               who, ": axes repeat an axis");
    }
    const size_t na = axes.size();

    const size_t scales_idx = opset_ < 11 ? 1 : 2;
    std::vector<double> scales_in, roi_in;
    std::vector<int64_t> sizes_in;
    if (ctx.has_input(scales_idx)) scales_in = read_float_list(ctx.input(scales_idx), who.c_str());
    if (opset_ >= 11 && ctx.has_input(3)) sizes_in = read_int_list(ctx.input(3), who.c_str());
    if (opset_ >= 11 && ctx.has_input(1) && p_.ctm == Ctm::TfCropAndResize)
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
        PI_CHECK(sizes_in[i] >= 0, InvalidArgument, who, ": sizes must be >= 0, got ",
                 sizes_in[i]);
        PI_CHECK(x.shape()[axes[i]] > 0, InvalidArgument, who, ": cannot resize empty axis ",
                 axes[i]);
      }
      if (policy_ == AspectPolicy::Stretch) {
        for (size_t i = 0; i < na; ++i) {
          const int64_t d = axes[i];
          out_shape[d] = sizes_in[i];
          scales[d] = static_cast<double>(sizes_in[i]) / static_cast<double>(x.shape()[d]);
          out_len_f[d] = static_cast<double>(sizes_in[i]);
        }
      } else {
        // One scale for all axes, the largest (not_smaller) or smallest (not_larger) ratio.
        double s = policy_ == AspectPolicy::NotLarger ? INFINITY : 0.0;
        for (size_t i = 0; i < na; ++i) {
          const double r =
              static_cast<double>(sizes_in[i]) / static_cast<double>(x.shape()[axes[i]]);
          s = policy_ == AspectPolicy::NotLarger ? std::min(s, r) : std::max(s, r);
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
    if (p_.ctm == Ctm::TfCropAndResize) {
      PI_CHECK(roi_in.size() == 2 * na, InvalidArgument, who, ": 'roi' has ", roi_in.size(),
               " values, tf_crop_and_resize needs ", 2 * na);
      for (size_t i = 0; i < na; ++i) {
        roi[axes[i]] = roi_in[i];
        roi[axes[i] + rank] = roi_in[i + na];
      }
    }
    Tensor& y = ctx.output(0, x.dtype(), out_shape);
    resize_nd(p_, x, y, out_shape, scales, out_len_f, roi, who.c_str());
  }

 private:
  int opset_;
  ResizeParams p_;
  std::vector<int64_t> axes_;
  AspectPolicy policy_ = AspectPolicy::Stretch;
};

// Upsample: scales as an attribute (opset 7) or an input (opset 9); samples at x / scale.
class UpsampleKernel final : public Kernel {
 public:
  explicit UpsampleKernel(const KernelInfo& info) : opset_(info.opset()) {
    p_.mode = parse_mode(info, info.attr_string("mode", "nearest"), false);
    p_.ctm = Ctm::Asymmetric;
    p_.nearest = NearestMode::Floor;
    if (opset_ < 9) {
      for (float s : info.attr_floats("scales")) scales_attr_.push_back(s);
    }
  }

  void run(KernelContext& ctx) override {
    const std::string who = ctx.node().label();
    const Tensor& x = ctx.input(0);
    const int rank = x.rank();
    std::vector<double> scales =
        opset_ < 9 ? scales_attr_ : read_float_list(ctx.input(1), who.c_str());
    PI_CHECK(static_cast<int>(scales.size()) == rank, InvalidArgument, who, ": 'scales' has ",
             scales.size(), " values for rank ", rank);
    Shape out_shape(rank);
    std::vector<double> out_len_f(rank), roi(2 * rank, 0.0);
    for (int d = 0; d < rank; ++d) {
      PI_CHECK(scales[d] >= 1 && std::isfinite(scales[d]) && scales[d] < 1e9, InvalidArgument,
               who, ": Upsample scales must be >= 1, got ", scales[d]);
      out_len_f[d] = scales[d] * static_cast<double>(x.shape()[d]);
      out_shape[d] = static_cast<int64_t>(std::floor(out_len_f[d]));
    }
    Tensor& y = ctx.output(0, x.dtype(), out_shape);
    resize_nd(p_, x, y, out_shape, scales, out_len_f, roi, who.c_str());
  }

 private:
  int opset_;
  ResizeParams p_;
  std::vector<double> scales_attr_;
};

}  // namespace

PI_CPU_KERNEL(Resize, 10, 19, ResizeKernel);
PI_CPU_KERNEL(Upsample, 7, 9, UpsampleKernel);

}  // namespace polyinfer
