// Conv and ai.polyinfer FusedConv / NhwcFusedConv through oneDNN (fast tier; the plain kernels
// in reference/conv.cpp and reference/fused.cpp are the reference).
//
// Covers float32 1-D, 2-D and 3-D convolutions of any group, stride, dilation and padding whose
// weights (and bias) are constants — everything torchvision-style models use; 1-D ones run as
// 2-D of height 1, 3-D ones whose window leaves the depth alone as 2-D over the depth slices
// (conv_plan.h). FusedConv adds a residual input Z (oneDNN's sum post-op: dst holds Z before the
// convolution accumulates into it) and an activation (eltwise post-ops, or a pass after the
// primitive where that is faster: onednn::split_activation); NhwcFusedConv (2-D) has X, Z and Y
// in NHWC, which oneDNN's brgconv reads and writes directly. NCHW tensors are reordered to the
// primitive's blocked layout and back on every run, which costs as much as a small convolution
// — hence the optimizer's channels-last pass at level 3 (opt/channels_last.h).
#include <map>
#include <optional>

#include "ops/window.h"
#include "providers/cpu/onednn/conv_plan.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

class OnednnConv final : public Kernel {
 public:
  explicit OnednnConv(const KernelInfo& info) : label_(info.node().label()) {
    const bool fused = info.node().domain == "ai.polyinfer";
    const Tensor* w = info.constant_input(1);
    if (!w || w->dtype() != DType::Float32) info.unsupported("oneDNN path: non-constant weights");
    if (w->rank() < 3 || w->rank() > 5) info.unsupported("oneDNN path: 4-D and higher");
    const ir::TypeInfo* xt = info.input_type(0);
    if (xt && xt->elem != DType::Undefined && xt->elem != DType::Float32)
      info.unsupported("oneDNN path: dtype other than float32");
    weights_ = *w;
    w_shape_ = w->shape();
    if (info.has_input(2)) {
      const Tensor* b = info.constant_input(2);
      if (!b || b->dtype() != DType::Float32) info.unsupported("oneDNN path: non-constant bias");
      PI_CHECK(b->numel() == w->shape()[0], ShapeMismatch, label_, ": bias has ", b->numel(),
               " values but the weights have ", w->shape()[0], " output channels");
      bias_ = b->clone();
    }
    attrs_ = WindowAttrs::parse(info);
    if (fused) {
      act_ = onednn::split_activation(FusedActivation::from(info));
      channels_last_ = info.node().op_type == "NhwcFusedConv";
      if (channels_last_ && w->rank() != 4) info.unsupported("oneDNN path: NhwcFusedConv not 2-D");
      has_z_ = info.has_input(3);
    }
    dnnl::post_ops probe;
    if (!onednn::append_activation(probe, act_.post_op))
      info.unsupported("oneDNN path: this activation");
    // Static input shape: create the primitive and prepack the weights now, at session creation.
    if (xt && xt->has_shape && xt->dims.size() == static_cast<size_t>(w->rank())) {
      bool known = true;
      for (int64_t d : xt->dims) known = known && d > 0;
      if (known) {
        plan_for(xt->dims);
        // The shape cannot change (the session checks inputs against it): the prepacked copy
        // is all this kernel needs, and the original may be freed (prepacked()).
        weights_ = Tensor();
      }
    }
  }

  bool prepacked(size_t i) const override { return (i == 1 && !weights_.defined()) || i == 2; }
  // The residual Z is where the sum post-op starts: given Z's memory as Y's, the copy of Z into
  // Y goes (ResNet-50: 16 of them, ~22 MB per run).
  int inplace_input() const override { return has_z_ ? 3 : -1; }

  std::string impl() const override { return impl_; }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.dtype() == DType::Float32, InvalidArgument, label_, ": X must be float32, got ",
             dtype_name(x.dtype()));
    PI_CHECK(x.rank() == static_cast<int>(w_shape_.size()), ShapeMismatch, label_, ": X has rank ",
             x.rank(), " but the weights have rank ", w_shape_.size());
    Plan& p = plan_for(x.shape());
    Tensor& y = ctx.output(0, DType::Float32, p.y_shape);
    const Tensor* z = nullptr;
    if (has_z_) {
      z = &ctx.input(3);
      PI_CHECK(z->dtype() == DType::Float32 && z->shape() == y.shape(), ShapeMismatch, label_,
               ": Z has shape ", shape_str(z->shape()), " but the output has ",
               shape_str(y.shape()));
    }
    onednn::guarded(label_, [&] { onednn::run_conv_plan(p, stream_, x, y, z); });
    act_.apply_after(y, ctx.threads());
  }

 private:
  using Plan = onednn::ConvPlan;

  // The primitive for input shape `xs` (NCHW, or NHWC when channels_last).
  Plan& plan_for(const Shape& xs) {
    return plans_.get(xs, label_, [&] { return make_plan(xs); });
  }

  Plan make_plan(const Shape& xs) {
    PI_CHECK(weights_.defined(), Internal, label_, ": input shape ", shape_str(xs),
             " differs from the statically known one the weights were prepacked for");
    // A 3-D window of depth 1 runs as 2-D over the depth slices: as fast as oneDNN's 3-D kernel,
    // and Winograd's where the slices are 3x3 (docs/kernels.md).
    const onednn::ConvDims d =
        onednn::conv_dims(xs, w_shape_, attrs_, channels_last_, label_, /*fold_depth=*/true);
    const tag act_tag = channels_last_ ? tag::nhwc : tag::any;
    const memory::desc bias_md =
        bias_.defined() ? memory::desc({d.M}, dt::f32, tag::x) : memory::desc();
    auto desc_for = [&](dnnl::algorithm alg, tag t) {
      return dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_inference, alg, memory::desc(d.src, dt::f32, t),
          memory::desc(d.weights, dt::f32, tag::any), bias_md, memory::desc(d.dst, dt::f32, t),
          d.strides, d.dilation, d.pad_l, d.pad_r);
    };
    dnnl::post_ops ops;
    if (has_z_) ops.append_sum(1.f);
    onednn::append_activation(ops, act_.post_op);
    dnnl::primitive_attr attr;
    onednn::use_own_scratchpad(attr);
    attr.set_post_ops(ops);
    // 3x3 stride-1 convolutions: Winograd (oneDNN's F(2x3)/F(4x3) on AVX-512) runs ResNet-50's
    // layers faster than brgconv, the reorders from and to NHWC included (docs/kernels.md).
    // Where oneDNN has no Winograd kernel for the shape or post-ops, the direct convolution is
    // used; so it is below kWinogradMinChannels input channels on AVX-512 (onednn.h).
    const bool few_channels = d.src[1] < onednn::kWinogradMinChannels && onednn::avx512_kernels();
    std::optional<dnnl::convolution_forward::primitive_desc> chosen;
    const bool winograd_shape = attrs_.group == 1 && d.kernel == memory::dims{3, 3} &&
                                d.strides == memory::dims{1, 1} &&
                                d.dilation == memory::dims{0, 0} && !few_channels;
    if (winograd_shape) {
      try {
        chosen.emplace(desc_for(dnnl::algorithm::convolution_winograd, tag::any), attr,
                       onednn::engine());
      } catch (const dnnl::error&) {
      }
    }
    if (!chosen)
      chosen.emplace(desc_for(dnnl::algorithm::convolution_direct, act_tag), attr,
                     onednn::engine());
    impl_ = onednn::impl_name(*chosen) + act_.impl_suffix();
    std::optional<memory> bias;
    if (bias_.defined()) bias = onednn::wrap(bias_md, bias_);
    return onednn::make_conv_plan(*chosen, d, channels_last_, dt::f32, dt::f32,
                                  weights_.peek_bytes(), dt::f32, bias, has_z_, stream_);
  }

  std::string label_;
  Tensor weights_, bias_;  // weights_ is released once prepacked for the only possible shape
  Shape w_shape_;
  WindowAttrs attrs_;
  onednn::SplitActivation act_;
  bool channels_last_ = false, has_z_ = false;
  onednn::PlanCache<Shape, Plan> plans_;
  dnnl::stream stream_{onednn::engine()};  // one per kernel, not one per run
  std::string impl_ = "onednn";
};

PI_CPU_FAST_KERNEL("", Conv, 1, 28, OnednnConv);
PI_CPU_FAST_KERNEL("ai.polyinfer", FusedConv, 1, 1, OnednnConv);
PI_CPU_CANDIDATE("ai.polyinfer", NhwcFusedConv, 1, 1, "onednn_conv", OnednnConv);

}  // namespace
}  // namespace polyinfer::cpu
