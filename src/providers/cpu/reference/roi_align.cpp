// RoiAlign (opsets 10 and 16): pools each region of interest into a fixed output_height x
// output_width grid by averaging (or taking the max of) bilinear samples, as Mask R-CNN does.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// The four bilinear taps of one sample point (offsets into the H*W plane) and their weights.
struct Sample {
  int64_t off[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample bilinear_sample(double y, double x, int64_t H, int64_t W) {
  Sample s;
  // A point more than one pixel outside the map contributes nothing.
  if (y < -1.0 || y > static_cast<double>(H) || x < -1.0 || x > static_cast<double>(W)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= H - 1) {
    y0 = y1 = H - 1;
    y = static_cast<double>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= W - 1) {
    x0 = x1 = W - 1;
    x = static_cast<double>(x0);
  } else {
    x1 = x0 + 1;
  }
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0);
  const double hy = 1 - ly, hx = 1 - lx;
  s.off[0] = y0 * W + x0;
  s.off[1] = y0 * W + x1;
  s.off[2] = y1 * W + x0;
  s.off[3] = y1 * W + x1;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

class RoiAlignKernel final : public Kernel {
 public:
  explicit RoiAlignKernel(const KernelInfo& info) {
    const std::string mode = info.attr_string("mode", "avg");
    if (mode == "avg") max_mode_ = false;
    else if (mode == "max")
      max_mode_ = true;
    else
      info.unsupported("mode=" + mode);
    out_h_ = info.attr_int("output_height", 1);
    out_w_ = info.attr_int("output_width", 1);
    sampling_ratio_ = info.attr_int("sampling_ratio", 0);
    spatial_scale_ = info.attr_float("spatial_scale", 1.0f);
    const std::string ctm = info.attr_string(
        "coordinate_transformation_mode", info.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    if (ctm == "half_pixel" && info.opset() >= 16) half_pixel_ = true;
    else if (ctm == "output_half_pixel")
      half_pixel_ = false;
    else
      info.unsupported("coordinate_transformation_mode=" + ctm);
    if (out_h_ <= 0 || out_w_ <= 0 || sampling_ratio_ < 0)
      info.unsupported("non-positive output size or negative sampling_ratio");
  }

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const char* who = label.c_str();
    const Tensor& x = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    const Tensor& bidx_t = ctx.input(2);
    PI_CHECK(x.rank() == 4, ShapeMismatch, who, ": X must be [N,C,H,W], got ", x.describe());
    PI_CHECK(rois.rank() == 2 && rois.dim(1) == 4, ShapeMismatch, who,
             ": rois must be [num_rois, 4], got ", rois.describe());
    const int64_t R = rois.dim(0);
    const std::vector<int64_t> bidx = read_int_list(bidx_t, who);
    PI_CHECK(static_cast<int64_t>(bidx.size()) == R, ShapeMismatch, who, ": batch_indices has ",
             bidx.size(), " entries for ", R, " rois");
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    for (int64_t b : bidx)
      PI_CHECK(b >= 0 && b < N, InvalidArgument, who, ": batch index ", b, " out of range [0, ", N,
               ")");
    Tensor& y = ctx.output(0, x.dtype(), {R, C, out_h_, out_w_});
    if (y.numel() == 0) return;
    PI_CHECK(H > 0 && W > 0, InvalidArgument, who, ": empty feature map ", x.describe());

    std::vector<double> rv(static_cast<size_t>(rois.numel()));
    dispatch(FloatTypes{}, rois.dtype(), who, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = rois.data<T>();
      for (size_t i = 0; i < rv.size(); ++i)
        rv[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
    });

    dispatch(FloatTypes{}, x.dtype(), who, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const double offset = half_pixel_ ? 0.5 : 0.0;
      std::vector<Sample> samples;
      for (int64_t r = 0; r < R; ++r) {
        const double* roi = &rv[static_cast<size_t>(r * 4)];
        const double x1 = roi[0] * spatial_scale_ - offset, y1 = roi[1] * spatial_scale_ - offset;
        const double x2 = roi[2] * spatial_scale_ - offset, y2 = roi[3] * spatial_scale_ - offset;
        double roi_w = x2 - x1, roi_h = y2 - y1;
        // Legacy mode forces at least one pixel, so malformed rois still sample something.
        if (!half_pixel_) {
          roi_w = std::max(roi_w, 1.0);
          roi_h = std::max(roi_h, 1.0);
        }
        const double bin_h = roi_h / static_cast<double>(out_h_);
        const double bin_w = roi_w / static_cast<double>(out_w_);
        const double gh = sampling_ratio_ > 0 ? static_cast<double>(sampling_ratio_)
                                              : std::ceil(roi_h / static_cast<double>(out_h_));
        const double gw = sampling_ratio_ > 0 ? static_cast<double>(sampling_ratio_)
                                              : std::ceil(roi_w / static_cast<double>(out_w_));
        PI_CHECK(gh < (1 << 12) && gw < (1 << 12) && std::isfinite(y1) && std::isfinite(x1) &&
                     std::isfinite(y2) && std::isfinite(x2),
                 InvalidArgument, who, ": roi ", r, " is too large or not finite");
        const int64_t grid_h = gh > 0 ? static_cast<int64_t>(gh) : 0;
        const int64_t grid_w = gw > 0 ? static_cast<int64_t>(gw) : 0;
        const double count = std::max<double>(static_cast<double>(grid_h * grid_w), 1.0);
        for (int64_t ph = 0; ph < out_h_; ++ph) {
          for (int64_t pw = 0; pw < out_w_; ++pw) {
            samples.clear();
            for (int64_t iy = 0; iy < grid_h; ++iy) {
              const double yy =
                  y1 + static_cast<double>(ph) * bin_h +
                  (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
              for (int64_t ix = 0; ix < grid_w; ++ix) {
                const double xx =
                    x1 + static_cast<double>(pw) * bin_w +
                    (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
                samples.push_back(bilinear_sample(yy, xx, H, W));
              }
            }
            for (int64_t c = 0; c < C; ++c) {
              const T* plane = in + (bidx[static_cast<size_t>(r)] * C + c) * H * W;
              auto v = [&](int64_t off) {
                return static_cast<double>(static_cast<compute_t<T>>(plane[off]));
              };
              double acc = 0.0;
              bool first = true;
              for (const Sample& s : samples) {
                if (max_mode_) {
                  // The max of the weighted taps, as the ONNX reference (from onnxruntime) does.
                  double m = s.w[0] * v(s.off[0]);
                  for (int k = 1; k < 4; ++k) m = std::max(m, s.w[k] * v(s.off[k]));
                  acc = first ? m : std::max(acc, m);
                  first = false;
                } else {
                  for (int k = 0; k < 4; ++k) acc += s.w[k] * v(s.off[k]);
                }
              }
              if (!max_mode_) acc /= count;
              out[((r * C + c) * out_h_ + ph) * out_w_ + pw] =
                  static_cast<T>(static_cast<compute_t<T>>(acc));
            }
          }
        }
      }
    });
  }

 private:
  bool max_mode_ = false;
  bool half_pixel_ = true;
  int64_t out_h_ = 1, out_w_ = 1, sampling_ratio_ = 0;
  double spatial_scale_ = 1.0;
};

}  // namespace

PI_CPU_KERNEL(RoiAlign, 10, 28, RoiAlignKernel);

}  // namespace polyinfer
