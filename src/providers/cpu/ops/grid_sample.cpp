// GridSample (opset 16-19): samples a 4-D image at the normalized (x, y) positions of a grid,
// with the semantics of PyTorch's grid_sample, which the ONNX test data comes from.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

enum class Interp { Bilinear, Nearest, Bicubic };
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

class GridSampleKernel final : public Kernel {
 public:
  explicit GridSampleKernel(const KernelInfo& info) {
    const std::string mode = info.attr_string("mode", "bilinear");
    if (mode == "bilinear") mode_ = Interp::Bilinear;
    else if (mode == "nearest") mode_ = Interp::Nearest;
    else if (mode == "bicubic") mode_ = Interp::Bicubic;
    else info.unsupported("mode=" + mode);
    const std::string pad = info.attr_string("padding_mode", "zeros");
    if (pad == "zeros") padding_ = Padding::Zeros;
    else if (pad == "border") padding_ = Padding::Border;
    else if (pad == "reflection") padding_ = Padding::Reflection;
    else info.unsupported("padding_mode=" + pad);
    align_corners_ = info.attr_int("align_corners", 0) != 0;
  }

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const char* who = label.c_str();
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    PI_CHECK(x.rank() == 4, ShapeMismatch, who, ": X must be 4-D [N,C,H,W], got ", x.describe());
    PI_CHECK(grid.rank() == 4 && grid.dim(3) == 2 && grid.dim(0) == x.dim(0), ShapeMismatch, who,
             ": grid must be [N,H_out,W_out,2] with N of X, got ", grid.describe());
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    const int64_t Ho = grid.dim(1), Wo = grid.dim(2);
    Tensor& y = ctx.output(0, x.dtype(), {N, C, Ho, Wo});
    if (y.numel() == 0) return;
    std::vector<double> g(static_cast<size_t>(grid.numel()));
    dispatch(FloatTypes{}, grid.dtype(), who, [&](auto tag) {
      using G = typename decltype(tag)::type;
      const G* p = grid.data<G>();
      for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<double>(static_cast<compute_t<G>>(p[i]));
    });
    dispatch(FloatTypes{}, x.dtype(), who, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < C; ++c) {
          const T* img = in + (n * C + c) * H * W;
          // A pixel, or 0 outside the image (after the padding mode moved the coordinate).
          auto pixel = [&](int64_t yy, int64_t xx) -> double {
            if (yy < 0 || yy >= H || xx < 0 || xx >= W) return 0.0;
            return static_cast<double>(static_cast<compute_t<T>>(img[yy * W + xx]));
          };
          for (int64_t oy = 0; oy < Ho; ++oy) {
            for (int64_t ox = 0; ox < Wo; ++ox) {
              const double* gp = &g[static_cast<size_t>(((n * Ho + oy) * Wo + ox) * 2)];
              double ix = unnormalize(gp[0], W), iy = unnormalize(gp[1], H);
              double v = 0.0;
              if (mode_ == Interp::Bicubic) {
                v = bicubic(pixel, ix, iy, W, H);
              } else {
                ix = apply_padding(ix, W);
                iy = apply_padding(iy, H);
                if (mode_ == Interp::Nearest) {
                  v = pixel(to_index(std::nearbyint(iy)), to_index(std::nearbyint(ix)));
                } else {
                  const double x0 = std::floor(ix), y0 = std::floor(iy);
                  const double tx = ix - x0, ty = iy - y0;
                  const int64_t xi = to_index(x0), yi = to_index(y0);
                  v = pixel(yi, xi) * (1 - tx) * (1 - ty) + pixel(yi, xi + 1) * tx * (1 - ty) +
                      pixel(yi + 1, xi) * (1 - tx) * ty + pixel(yi + 1, xi + 1) * tx * ty;
                }
              }
              out[((n * C + c) * Ho + oy) * Wo + ox] = static_cast<T>(static_cast<compute_t<T>>(v));
            }
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

  // Moves a coordinate into the image for border/reflection padding (zeros leaves it).
  double apply_padding(double v, int64_t size) const {
    const double s = static_cast<double>(size);
    if (padding_ == Padding::Border) return std::clamp(v, 0.0, s - 1);
    if (padding_ == Padding::Reflection) {
      v = align_corners_ ? reflect(v, 0, 2 * (s - 1)) : reflect(v, -1, 2 * s - 1);
      return std::clamp(v, 0.0, s - 1);
    }
    return v;
  }

  // Far-away or non-finite coordinates become an index that is simply outside the image.
  static int64_t to_index(double v) {
    if (!(v > -1e9 && v < 1e9)) return -2;
    return static_cast<int64_t>(v);
  }

  static void cubic_weights(double t, double w[4]) {
    const double a = -0.75;
    auto near = [&](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
    auto far = [&](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
    w[0] = far(t + 1);
    w[1] = near(t);
    w[2] = near(1 - t);
    w[3] = far(2 - t);
  }

  // Bicubic reads a 4x4 neighbourhood; each tap's integer position gets the padding mode.
  template <class Pixel>
  double bicubic(Pixel& pixel, double ix, double iy, int64_t W, int64_t H) const {
    const double x0 = std::floor(ix), y0 = std::floor(iy);
    double wx[4], wy[4];
    cubic_weights(ix - x0, wx);
    cubic_weights(iy - y0, wy);
    double sum = 0.0;
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 4; ++i) {
        double tx = x0 - 1 + i, ty = y0 - 1 + j;
        if (padding_ != Padding::Zeros) {
          tx = apply_padding(tx, W);
          ty = apply_padding(ty, H);
        }
        sum += wx[i] * wy[j] * pixel(to_index(ty), to_index(tx));
      }
    }
    return sum;
  }

  Interp mode_ = Interp::Bilinear;
  Padding padding_ = Padding::Zeros;
  bool align_corners_ = false;
};

}  // namespace

PI_CPU_KERNEL(GridSample, 16, 19, GridSampleKernel);

}  // namespace polyinfer
