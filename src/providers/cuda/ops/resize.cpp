// Resize (10-19) on CUDA (layout.cu), float32, float16 and bfloat16, nearest and linear over the
// last two axes, every coordinate_transformation_mode but tf_half_pixel_for_nn, every
// nearest_mode, exclude_outside, sizes or scales, keep_aspect_ratio_policy, axes (18+). The
// output shape and every tap and weight are the CPU reference's (ops/resize.h: plan_resize,
// plan_axis), computed on the host and uploaded as two small tables when the input shape
// changes; the kernel only blends at most 2x2 input points.
// Refused at creation: cubic, antialias, tf_half_pixel_for_nn (it moves even unscaled axes),
// scales/sizes (and tf_crop_and_resize's roi) computed at run time or an unknown input rank (the
// leading axes could not be checked), constants that change an axis before the last two; other
// data types. (The same checks as the Vulkan Resize's.)
#include <map>

#include "core/shape_util.h"
#include "ops/resize.h"
#include "providers/cuda/ops/layout_kernels.h"
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

using namespace polyinfer::resize;  // NOLINT: the shared parameter code

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(const KernelInfo& info) : ctx_(Context::get()), attrs_(info) {
    dtype_ = require_float(info, 1);
    require_last_two_axes(attrs_, info, "CUDA");
    constants_.keep(info, 1);
  }
  std::string impl() const override { return "cuda:resize"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    HostConstantsContext hc(kc, constants_);
    const ResizePlan plan = plan_resize(attrs_, hc);
    const int rank = x.rank();
    PI_CHECK(rank >= 1, UnsupportedOp, who, ": a scalar input");
    Tensor& y = kc.output(0, dtype_, plan.out_shape);
    if (y.numel() == 0) return;
    std::vector<AxisPlan> plans(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) {
      plans[d] = plan_axis(attrs_.p, x.shape()[d], plan.out_shape[d], plan.scales[d],
                           plan.out_len_f[d], plan.roi[d], plan.roi[d + rank]);
      PI_CHECK(d >= rank - 2 || is_identity(plans[d], x.shape()[d]), UnsupportedOp, who,
               ": resizing axis ", d, " of ", x.describe(),
               " (the CUDA Resize resizes the last "
               "two axes)");
    }
    const int64_t h = rank >= 2 ? x.shape()[rank - 2] : 1, w = x.shape()[rank - 1];
    const int64_t oh = rank >= 2 ? plan.out_shape[rank - 2] : 1, ow = plan.out_shape[rank - 1];
    std::vector<int32_t> idx;
    std::vector<float> wt;
    auto add_axis = [&](const AxisPlan* ap, int64_t out_len) {
      for (int64_t j = 0; j < out_len; ++j) {
        if (!ap) {  // rank 1: the one row
          idx.insert(idx.end(), {0, 0});
          wt.insert(wt.end(), {1.0f, 0.0f});
          continue;
        }
        if (ap->extrapolate[j]) {
          idx.insert(idx.end(), {-1, -1});
          wt.insert(wt.end(), {0.0f, 0.0f});
          continue;
        }
        const std::vector<Tap>& taps = ap->taps[j];
        PI_CHECK(!taps.empty() && taps.size() <= 2, Internal, who, ": ", taps.size(), " taps");
        const Tap& t0 = taps[0];
        const Tap& t1 = taps.size() > 1 ? taps[1] : taps[0];
        PI_CHECK(t0.index <= 0x7fffffff && t1.index <= 0x7fffffff, UnsupportedOp, who,
                 ": an axis longer than 2^31");
        idx.insert(idx.end(), {static_cast<int32_t>(t0.index), static_cast<int32_t>(t1.index)});
        wt.insert(wt.end(), {static_cast<float>(t0.weight),
                             taps.size() > 1 ? static_cast<float>(t1.weight) : 0.0f});
      }
    };
    add_axis(rank >= 2 ? &plans[rank - 2] : nullptr, oh);
    add_axis(&plans[rank - 1], ow);
    // Uploaded once per input shape and kept for the session: a CUDA Graph recorded at one shape
    // reads its tables on every replay, whatever shapes other runs had meanwhile.
    const std::string key = shape_str(x.shape());
    auto t = tables_.find(key);
    if (t == tables_.end()) {
      const int64_t n = static_cast<int64_t>(idx.size());
      Tables fresh{Tensor::from_vector<int32_t>({n}, idx).to(Device{DeviceKind::CUDA, 0}),
                   Tensor::from_vector<float>({n}, wt).to(Device{DeviceKind::CUDA, 0})};
      t = tables_.emplace(key, std::move(fresh)).first;
    }
    launch_resize(elem_of(dtype_), x.raw_data(), y.raw_data(), x.numel() / (h * w), h, w, oh, ow,
                  static_cast<const int32_t*>(t->second.idx.raw_data()),
                  static_cast<const float*>(t->second.wt.raw_data()),
                  static_cast<float>(attrs_.p.extrapolation), ctx_.max_grid_x(), ctx_.stream());
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_ = DType::Float32;
  ResizeAttrs attrs_;
  HostConstants constants_;
  struct Tables {
    Tensor idx, wt;  // on the device
  };
  std::map<std::string, Tables> tables_;  // by input shape
};

PI_CUDA_KERNEL(Resize, 10, 19, ResizeKernel);

}  // namespace
}  // namespace polyinfer::cuda
