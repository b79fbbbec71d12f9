// Float32 Resize (10-19) on OpenCL (kernels/resize.cl), nearest and linear over the last two
// axes, every coordinate_transformation_mode but tf_half_pixel_for_nn, every nearest_mode,
// exclude_outside, sizes or scales, keep_aspect_ratio_policy, axes (18+). The output shape and
// every tap and weight are the CPU reference's (ops/resize.h: plan_resize,
// plan_axis), computed on the host and uploaded as a small table when the input shape changes.
// Refused at creation: cubic, antialias, tf_half_pixel_for_nn (it moves even unscaled axes),
// scales/sizes (and tf_crop_and_resize's roi) computed at run time or an unknown input rank
// (the leading axes could not be checked), and constants that change an axis before the last
// two; data other than float32.
#include "ops/resize.h"
#include "providers/opencl/ops/common.h"
#include "runtime/host_constants.h"

namespace polyinfer::opencl {
namespace {

using namespace polyinfer::resize;  // NOLINT: the shared parameter code

struct ResizeParams {
  uint32_t n, oh, ow, h, w, off_x, off_t, off_y, t_cols;
  float extrapolation;
};

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(const KernelInfo& info) : attrs_(info) {
    require_float32(info, kMaxRank, 1);
    require_last_two_axes(attrs_, info, "OpenCL");
    constants_.keep(info, 1);
    ctx_ = Context::get();
    kernel_ = ctx_->kernel("resize", "resize");
  }
  std::string impl() const override { return "opencl:resize"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x);
    HostConstantsContext hc(kc, constants_);
    const ResizePlan plan = plan_resize(attrs_, hc);
    const int rank = x.rank();
    PI_CHECK(rank >= 1, UnsupportedOp, who, ": a scalar input");
    Tensor& y = kc.output(0, DType::Float32, plan.out_shape);
    check_input(kc, y);
    if (y.numel() == 0) return;
    // The last two axes (a rank-1 input: one row); the others must not change.
    std::vector<AxisPlan> plans(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) {
      plans[d] = plan_axis(attrs_.p, x.shape()[d], plan.out_shape[d], plan.scales[d],
                           plan.out_len_f[d], plan.roi[d], plan.roi[d + rank]);
      PI_CHECK(d >= rank - 2 || is_identity(plans[d], x.shape()[d]), UnsupportedOp, who,
               ": resizing axis ", d, " of ", x.describe(),
               " (the OpenCL Resize resizes the last two axes)");
    }
    const int64_t h = rank >= 2 ? x.shape()[rank - 2] : 1, w = x.shape()[rank - 1];
    const int64_t oh = rank >= 2 ? plan.out_shape[rank - 2] : 1, ow = plan.out_shape[rank - 1];
    std::vector<float> table;
    table.reserve(static_cast<size_t>(4 * (oh + ow)));
    auto add_axis = [&](const AxisPlan* ap, int64_t out_len) {
      for (int64_t j = 0; j < out_len; ++j) {
        if (!ap) {  // rank 1: the one row
          table.insert(table.end(), {0.0f, 0.0f, 1.0f, 0.0f});
          continue;
        }
        if (ap->extrapolate[j]) {
          table.insert(table.end(), {-1.0f, -1.0f, 0.0f, 0.0f});
          continue;
        }
        const std::vector<Tap>& taps = ap->taps[j];
        PI_CHECK(!taps.empty() && taps.size() <= 2, Internal, who, ": ", taps.size(), " taps");
        const Tap& t0 = taps[0];
        const Tap& t1 = taps.size() > 1 ? taps[1] : taps[0];
        PI_CHECK(t0.index < (int64_t{1} << 24) && t1.index < (int64_t{1} << 24), UnsupportedOp, who,
                 ": an axis longer than 2^24 (the OpenCL Resize indexes with floats)");
        table.insert(table.end(), {static_cast<float>(t0.index), static_cast<float>(t1.index),
                                   static_cast<float>(t0.weight),
                                   taps.size() > 1 ? static_cast<float>(t1.weight) : 0.0f});
      }
    };
    add_axis(rank >= 2 ? &plans[rank - 2] : nullptr, oh);
    add_axis(&plans[rank - 1], ow);
    // Uploaded when it changes (a new input shape): replacing the old table frees it, which is
    // safe on the in-order queue (Context::deallocate).
    if (table != table_host_) {
      table_host_ = table;
      table_ = Tensor::from_vector<float>({static_cast<int64_t>(table.size())}, table)
                   .to(ctx_->device());
    }
    ResizeParams p{};
    p.n = u32(y.numel());
    p.oh = u32(oh);
    p.ow = u32(ow);
    p.h = u32(h);
    p.w = u32(w);
    p.t_cols = u32(4 * oh);
    p.extrapolation = static_cast<float>(attrs_.p.extrapolation);
    const BufferRef rx = ctx_->find(x.raw_data()), rt = ctx_->find(table_.raw_data()),
                    ry = ctx_->find(y.raw_data());
    p.off_x = element_offset(rx);
    p.off_t = element_offset(rt);
    p.off_y = element_offset(ry);
    ctx_->dispatch(kernel_, {rx.buffer, rt.buffer, ry.buffer}, &p, sizeof p,
                   groups_for(p.n, *ctx_));
  }

 private:
  ResizeAttrs attrs_;
  HostConstants constants_;
  std::vector<float> table_host_;
  Tensor table_;  // on the device
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", Resize, 10, 19, ResizeKernel);

}  // namespace
}  // namespace polyinfer::opencl
