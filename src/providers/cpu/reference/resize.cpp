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
#include <string>
#include <type_traits>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "ops/resize.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

using namespace resize;  // NOLINT: the shared parameter code

template <class T> T store(double v) {
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
    plans[d] =
        plan_axis(p, x.shape()[d], out_shape[d], scales[d], out_len_f[d], roi[d], roi[d + rank]);
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

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(const KernelInfo& info) : attrs_(info) {}

  void run(KernelContext& ctx) override {
    const std::string who = ctx.node().label();
    const Tensor& x = ctx.input(0);
    const ResizePlan plan = plan_resize(attrs_, ctx);
    Tensor& y = ctx.output(0, x.dtype(), plan.out_shape);
    resize_nd(attrs_.p, x, y, plan.out_shape, plan.scales, plan.out_len_f, plan.roi, who.c_str());
  }

 private:
  ResizeAttrs attrs_;
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
      PI_CHECK(scales[d] >= 1 && std::isfinite(scales[d]) && scales[d] < 1e9, InvalidArgument, who,
               ": Upsample scales must be >= 1, got ", scales[d]);
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
