// Conv and ai.polyinfer FusedConv / NhwcFusedConv through oneDNN (fast tier; the plain kernels in ops/conv.cpp
// and ops/fused.cpp are the reference).
//
// Covers float32 1-D and 2-D convolutions of any group, stride, dilation and padding whose
// weights (and bias) are constants — everything torchvision-style models use. FusedConv adds a
// residual input Z (oneDNN's sum post-op: dst holds Z before the convolution accumulates into
// it) and an activation (eltwise post-ops); NhwcFusedConv has X, Z and Y in NHWC, which
// oneDNN's brgconv reads and writes directly. NCHW tensors are reordered to the primitive's blocked
// layout and back on every run, which costs as much as a small convolution — hence the
// optimizer's channels-last pass at level 3 (opt/channels_last.h).
#include <map>
#include <optional>

#include "providers/cpu/onednn/onednn.h"
#include "providers/cpu/ops/conv_util.h"
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
    if (w->rank() != 3 && w->rank() != 4) info.unsupported("oneDNN path: 3-D convolution");
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
      act_ = FusedActivation::from(info);
      channels_last_ = info.node().op_type == "NhwcFusedConv";
      has_z_ = info.has_input(3);
    }
    dnnl::post_ops probe;
    if (!onednn::append_activation(probe, act_)) info.unsupported("oneDNN path: this activation");
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

  std::string impl() const override { return impl_; }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.dtype() == DType::Float32, InvalidArgument, label_, ": X must be float32, got ",
             dtype_name(x.dtype()));
    PI_CHECK(x.rank() == static_cast<int>(w_shape_.size()), ShapeMismatch, label_, ": X has rank ",
             x.rank(), " but the weights have rank ", w_shape_.size());
    Plan& p = plan_for(x.shape());
    Tensor& y = ctx.output(0, DType::Float32, p.y_shape);
    dnnl::stream& s = stream_;
    onednn::guarded(label_, [&] {
      memory src = onednn::wrap(p.user_src, x);
      if (p.src_buf) {
        p.to_src->execute(s, src, *p.src_buf);
        src = *p.src_buf;
      }
      memory dst(p.user_dst, onednn::engine(), y.raw_data());
      memory conv_dst = p.dst_buf ? *p.dst_buf : dst;
      if (has_z_) {
        const Tensor& z = ctx.input(3);
        PI_CHECK(z.dtype() == DType::Float32 && z.shape() == y.shape(), ShapeMismatch, label_,
                 ": Z has shape ", shape_str(z.shape()), " but the output has ",
                 shape_str(y.shape()));
        memory zm = onednn::wrap(p.user_dst, z);
        p.z_in->execute(s, zm, conv_dst);  // the sum post-op accumulates into what dst holds
      }
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                           {DNNL_ARG_WEIGHTS, p.weights},
                                           {DNNL_ARG_DST, conv_dst}};
      if (p.bias) args.emplace(DNNL_ARG_BIAS, *p.bias);
      p.prim.execute(s, args);
      if (p.dst_buf) p.from_dst->execute(s, *p.dst_buf, dst);
      s.wait();
    });
  }

 private:
  struct Plan {
    Shape y_shape;
    dnnl::convolution_forward prim;
    memory::desc user_src, user_dst;
    memory weights;
    std::optional<memory> bias, src_buf, dst_buf;
    // Made with the plan, not per run: layout changes in and out, and Z into dst.
    std::optional<dnnl::reorder> to_src, from_dst, z_in;
  };

  // The primitive for input shape `xs` (NCHW, or NHWC when channels_last), made on first use.
  Plan& plan_for(const Shape& xs) {
    auto it = plans_.find(xs);
    if (it != plans_.end()) return it->second;
    return plans_.emplace(xs, onednn::guarded(label_, [&] { return make_plan(xs); }))
        .first->second;
  }

  Plan make_plan(const Shape& xs) {
    PI_CHECK(weights_.defined(), Internal, label_, ": input shape ", shape_str(xs),
             " differs from the statically known one the weights were prepacked for");
    const Shape& ws = w_shape_;
    const bool one_d = ws.size() == 3;
    const int64_t N = xs[0], C = channels_last_ ? xs.back() : xs[1], M = ws[0];
    const int64_t G = attrs_.group;
    PI_CHECK(C == ws[1] * G, ShapeMismatch, label_, ": X has ", C, " channels but weights ",
             shape_str(ws), " with group ", G, " expect ", ws[1] * G);
    PI_CHECK(M % G == 0, InvalidModel, label_, ": ", M, " output channels are not divisible by "
             "group ", G);
    Shape spatial = channels_last_ ? Shape(xs.begin() + 1, xs.end() - 1)
                                   : Shape(xs.begin() + 2, xs.end());
    const Shape kernel(ws.begin() + 2, ws.end());
    PI_CHECK(attrs_.kernel_shape.empty() || attrs_.kernel_shape == kernel, InvalidModel, label_,
             ": kernel_shape ", shape_str(attrs_.kernel_shape), " does not match the weights ",
             shape_str(ws));
    const WindowGeometry g = window_geometry(attrs_, spatial, kernel, label_);
    // 1-D convolutions run as 2-D ones of height 1.
    auto two_d = [&](const std::vector<int64_t>& v, int64_t pad) {
      return one_d ? memory::dims{pad, v[0]} : memory::dims{v[0], v[1]};
    };
    const memory::dims in_hw = two_d(g.in, 1), out_hw = two_d(g.out, 1), k_hw = two_d(kernel, 1);
    const memory::dims strides = two_d(g.strides, 1), pad_l = two_d(g.pad_begin, 0),
                       pad_r = two_d(g.pad_end, 0);
    memory::dims dil = two_d(g.dilations, 1);
    for (auto& d : dil) d -= 1;  // oneDNN counts dilation from 0
    const memory::dims src_d{N, C, in_hw[0], in_hw[1]}, dst_d{N, M, out_hw[0], out_hw[1]};
    const memory::dims w_d = G == 1 ? memory::dims{M, C, k_hw[0], k_hw[1]}
                                    : memory::dims{G, M / G, C / G, k_hw[0], k_hw[1]};
    const tag act_tag = channels_last_ ? tag::nhwc : tag::any;
    Plan p;
    p.y_shape = channels_last_ ? Shape{N} : Shape{N, M};
    for (int64_t o : g.out) p.y_shape.push_back(o);
    if (channels_last_) p.y_shape.push_back(M);
    p.user_src = memory::desc(src_d, dt::f32, channels_last_ ? tag::nhwc : tag::nchw);
    p.user_dst = memory::desc(dst_d, dt::f32, channels_last_ ? tag::nhwc : tag::nchw);
    const memory::desc bias_md = bias_.defined() ? memory::desc({M}, dt::f32, tag::x)
                                                 : memory::desc();
    auto desc_for = [&](dnnl::algorithm alg, tag t) {
      return dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_inference, alg, memory::desc(src_d, dt::f32, t),
          memory::desc(w_d, dt::f32, tag::any), bias_md, memory::desc(dst_d, dt::f32, t), strides,
          dil, pad_l, pad_r);
    };
    dnnl::post_ops ops;
    if (has_z_) ops.append_sum(1.f);
    onednn::append_activation(ops, act_);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    // 3x3 stride-1 convolutions: Winograd (oneDNN's F(2x3)/F(4x3) on AVX-512) measured 1.1-2.2x
    // faster than brgconv on ResNet-50's layers here, and its blocked layout costs reorders of
    // only 1-5% of the convolution from and to NHWC. Where oneDNN has no Winograd kernel for the
    // shape or post-ops, the direct convolution is used.
    std::optional<dnnl::convolution_forward::primitive_desc> chosen;
    const bool winograd_shape = !one_d && G == 1 && k_hw == memory::dims{3, 3} &&
                                strides == memory::dims{1, 1} && dil == memory::dims{0, 0};
    if (winograd_shape) {
      try {
        chosen.emplace(desc_for(dnnl::algorithm::convolution_winograd, tag::any), attr,
                       onednn::engine());
      } catch (const dnnl::error&) {
      }
    }
    if (!chosen) chosen.emplace(desc_for(dnnl::algorithm::convolution_direct, act_tag), attr,
                                onednn::engine());
    const dnnl::convolution_forward::primitive_desc& pd = *chosen;
    impl_ = onednn::impl_name(pd);
    p.prim = dnnl::convolution_forward(pd);
    dnnl::stream& s = stream_;
    memory user_w(memory::desc(w_d, dt::f32, G == 1 ? tag::oihw : tag::goihw), onednn::engine(),
                  const_cast<void*>(weights_.raw_data()));
    p.weights = memory(pd.weights_desc(), onednn::engine());
    dnnl::reorder(user_w, p.weights).execute(s, user_w, p.weights);
    if (bias_.defined()) p.bias = onednn::wrap(bias_md, bias_);
    if (pd.src_desc() != p.user_src) {
      p.src_buf = memory(pd.src_desc(), onednn::engine());
      p.to_src = dnnl::reorder(dnnl::reorder::primitive_desc(onednn::engine(), p.user_src,
                                                             onednn::engine(), pd.src_desc()));
    }
    if (pd.dst_desc() != p.user_dst) {
      p.dst_buf = memory(pd.dst_desc(), onednn::engine());
      p.from_dst = dnnl::reorder(dnnl::reorder::primitive_desc(onednn::engine(), pd.dst_desc(),
                                                               onednn::engine(), p.user_dst));
    }
    if (has_z_)
      p.z_in = dnnl::reorder(dnnl::reorder::primitive_desc(onednn::engine(), p.user_dst,
                                                           onednn::engine(), pd.dst_desc()));
    s.wait();
    return p;
  }

  std::string label_;
  Tensor weights_, bias_;  // weights_ is released once prepacked for the only possible shape
  Shape w_shape_;
  WindowAttrs attrs_;
  FusedActivation act_;
  bool channels_last_ = false, has_z_ = false;
  std::map<Shape, Plan> plans_;
  dnnl::stream stream_{onednn::engine()};  // one per kernel, not one per run
  std::string impl_ = "onednn";
};

PI_CPU_FAST_KERNEL("", Conv, 1, 23, OnednnConv);
PI_CPU_FAST_KERNEL("ai.polyinfer", FusedConv, 1, 1, OnednnConv);
PI_CPU_FAST_KERNEL("ai.polyinfer", NhwcFusedConv, 1, 1, OnednnConv);

}  // namespace
}  // namespace polyinfer::cpu
