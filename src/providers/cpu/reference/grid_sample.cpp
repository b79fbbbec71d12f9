// GridSample: samples X (N, C, D1..Dr) at the normalized positions of a grid (N, O1..Or, r),
// with the semantics of PyTorch's grid_sample, which the ONNX test data comes from. The grid's
// last axis lists coordinates innermost-first: (x, y) index (W, H), (x, y, z) index (W, H, D).
// Opsets 16-19 are 4-D with modes bilinear/nearest/bicubic; opset 20 renames them
// linear/nearest/cubic and allows any spatial rank (cubic works for any rank here too).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

enum class Interp { Linear, Nearest, Cubic };
enum class Padding { Zeros, Border, Reflection };

// Reflects `x` into [twice_low/2, twice_high/2], folding as many times as needed.
double reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0.0;
  const double lo = twice_low / 2;
  const double span = (twice_high - twice_low) / 2;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  const double flips = std::floor(x / span);
  return std::fmod(flips, 2.0) == 0 ? extra + lo : span - extra + lo;
}

void cubic_weights(double t, double w[4]) {
  const double a = -0.75;
  auto near = [&](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  auto far = [&](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

class GridSampleKernel final : public Kernel {
 public:
  explicit GridSampleKernel(const KernelInfo& info) : opset_(info.opset()) {
    const bool v20 = opset_ >= 20;
    const std::string mode = info.attr_string("mode", v20 ? "linear" : "bilinear");
    if (mode == (v20 ? "linear" : "bilinear")) mode_ = Interp::Linear;
    else if (mode == "nearest")
      mode_ = Interp::Nearest;
    else if (mode == (v20 ? "cubic" : "bicubic"))
      mode_ = Interp::Cubic;
    else
      info.unsupported("mode=" + mode);
    const std::string pad = info.attr_string("padding_mode", "zeros");
    if (pad == "zeros") padding_ = Padding::Zeros;
    else if (pad == "border")
      padding_ = Padding::Border;
    else if (pad == "reflection")
      padding_ = Padding::Reflection;
    else
      info.unsupported("padding_mode=" + pad);
    align_corners_ = info.attr_int("align_corners", 0) != 0;
  }

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const char* who = label.c_str();
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    const int r = x.rank() - 2;
    PI_CHECK(opset_ >= 20 ? r >= 1 : r == 2, ShapeMismatch, who, ": X must be ",
             opset_ >= 20 ? "[N,C,D1,...]" : "4-D [N,C,H,W]", ", got ", x.describe());
    PI_CHECK(grid.rank() == r + 2 && grid.dim(-1) == r && grid.dim(0) == x.dim(0), ShapeMismatch,
             who, ": grid must be [N, out dims..., ", r, "] with N of X, got ", grid.describe());
    const int64_t N = x.dim(0), C = x.dim(1);
    Shape in_sp(x.shape().begin() + 2, x.shape().end());
    Shape out_shape = {N, C};
    int64_t npts = 1;
    for (int k = 1; k <= r; ++k) {
      out_shape.push_back(grid.dim(k));
      npts *= grid.dim(k);
    }
    const int64_t plane = shape_numel(in_sp);
    Tensor& y = ctx.output(0, x.dtype(), out_shape);
    if (y.numel() == 0) return;
    PI_CHECK(plane > 0, InvalidArgument, who, ": cannot sample from empty input ", x.describe());
    std::vector<double> g(static_cast<size_t>(grid.numel()));
    dispatch(FloatTypes{}, grid.dtype(), who, [&](auto tag) {
      using G = typename decltype(tag)::type;
      const G* p = grid.data<G>();
      for (size_t i = 0; i < g.size(); ++i)
        g[i] = static_cast<double>(static_cast<compute_t<G>>(p[i]));
    });
    const std::vector<int64_t> in_strides = strides_of(in_sp);
    const int taps_per_axis = mode_ == Interp::Nearest ? 1 : mode_ == Interp::Linear ? 2 : 4;
    int64_t ntaps = 1;
    for (int k = 0; k < r; ++k) ntaps *= taps_per_axis;
    PI_CHECK(ntaps <= (1 << 16), InvalidArgument, who, ": too many spatial dimensions (", r, ")");

    dispatch(FloatTypes{}, x.dtype(), who, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      // Per axis: the tap positions (flat offsets, or -1 outside) and weights of one point.
      std::vector<int64_t> off(static_cast<size_t>(r * taps_per_axis));
      std::vector<double> wt(static_cast<size_t>(r * taps_per_axis));
      std::vector<int> digit(static_cast<size_t>(r));
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t p = 0; p < npts; ++p) {
          const double* gp = &g[static_cast<size_t>((n * npts + p) * r)];
          for (int k = 0; k < r; ++k) {
            const int64_t size = in_sp[k];
            double c = unnormalize(gp[r - 1 - k], size);
            int64_t* o = &off[static_cast<size_t>(k * taps_per_axis)];
            double* w = &wt[static_cast<size_t>(k * taps_per_axis)];
            if (mode_ == Interp::Nearest) {
              o[0] = tap(std::nearbyint(apply_padding(c, size)), size);
              w[0] = 1.0;
            } else if (mode_ == Interp::Linear) {
              c = apply_padding(c, size);
              const double c0 = std::floor(c);
              o[0] = tap(c0, size);
              o[1] = tap(c0 + 1, size);
              w[0] = 1 - (c - c0);
              w[1] = c - c0;
            } else {
              // Cubic pads each integer tap position rather than the sample point.
              const double c0 = std::floor(c);
              cubic_weights(c - c0, w);
              for (int i = 0; i < 4; ++i) {
                double t = c0 - 1 + i;
                if (padding_ != Padding::Zeros) t = apply_padding(t, size);
                o[i] = tap(t, size);
              }
            }
          }
          for (int64_t ch = 0; ch < C; ++ch) {
            const T* img = in + (n * C + ch) * plane;
            double sum = 0.0;
            std::fill(digit.begin(), digit.end(), 0);
            for (int64_t t = 0; t < ntaps; ++t) {
              double w = 1.0;
              int64_t at = 0;
              for (int k = 0; k < r && at >= 0; ++k) {
                const size_t j = static_cast<size_t>(k * taps_per_axis + digit[k]);
                w *= wt[j];
                at = off[j] < 0 ? -1 : at + off[j] * in_strides[k];
              }
              if (at >= 0 && w != 0)
                sum += w * static_cast<double>(static_cast<compute_t<T>>(img[at]));
              for (int k = r - 1; k >= 0; --k) {
                if (++digit[k] < taps_per_axis) break;
                digit[k] = 0;
              }
            }
            out[(n * C + ch) * npts + p] = static_cast<T>(static_cast<compute_t<T>>(sum));
          }
        }
      }
    });
  }

 private:
  double unnormalize(double v, int64_t size) const {
    const double s = static_cast<double>(size);
    return align_corners_ ? (v + 1) / 2 * (s - 1) : ((v + 1) * s - 1) / 2;
  }

  // Moves a coordinate into the input for border/reflection padding (zeros leaves it).
  double apply_padding(double v, int64_t size) const {
    const double s = static_cast<double>(size);
    if (padding_ == Padding::Border) return std::clamp(v, 0.0, s - 1);
    if (padding_ == Padding::Reflection) {
      v = align_corners_ ? reflect(v, 0, 2 * (s - 1)) : reflect(v, -1, 2 * s - 1);
      return std::clamp(v, 0.0, s - 1);
    }
    return v;
  }

  // The index of integral coordinate v, or -1 when it lies outside (zeros padding reads 0).
  static int64_t tap(double v, int64_t size) {
    if (!(v >= 0 && v < static_cast<double>(size))) return -1;
    return static_cast<int64_t>(v);
  }

  int opset_;
  Interp mode_ = Interp::Linear;
  Padding padding_ = Padding::Zeros;
  bool align_corners_ = false;
};

}  // namespace

PI_CPU_KERNEL(GridSample, 16, 28, GridSampleKernel);

}  // namespace polyinfer
