// ConvTranspose through oneDNN's deconvolution (fast tier; the scatter in
// reference/conv_transpose.cpp is the reference). Float32 1-D (as 2-D of height 1), 2-D and
// 3-D, any group, stride, dilation and padding, output_padding and output_shape, with constant
// weights and bias: the weights are reordered into the primitive's layout once, at session
// creation when the input shape is static. The output sizes and pads are the reference's
// (conv_transpose_geometry); output_padding and a larger output_shape become a smaller
// (possibly negative) right padding in oneDNN's terms. A shape oneDNN refuses is a refusal at
// creation (the reference takes the node); with a dynamic input shape the nodes that may need
// a negative padding are refused up front, so a run never meets a refusal it could not fall
// back from.
#include "ops/window.h"
#include "providers/cpu/onednn/onednn.h"
#include "runtime/kernel.h"

#include <optional>

namespace polyinfer::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct DeconvPlan {
  Shape y_shape;
  dnnl::deconvolution_forward prim;
  memory::desc user_src, user_dst, scratchpad;  // scratchpad: add_thread_scratchpad
  memory weights;
  Tensor weights_buf;  // behind `weights`
  std::optional<memory> bias, src_buf, dst_buf;
  std::optional<dnnl::reorder> to_src, from_dst;
};

class OnednnConvTranspose final : public Kernel {
 public:
  explicit OnednnConvTranspose(const KernelInfo& info)
      : label_(info.node().label()), attrs_(ConvTransposeAttrs::parse(info)) {
    const Tensor* w = info.constant_input(1);
    if (!w || w->dtype() != DType::Float32) info.unsupported("oneDNN path: non-constant weights");
    if (w->rank() < 3 || w->rank() > 5) info.unsupported("oneDNN path: 4-D and higher");
    const ir::TypeInfo* xt = info.input_type(0);
    if (xt && xt->elem != DType::Undefined && xt->elem != DType::Float32)
      info.unsupported("oneDNN path: dtype other than float32");
    weights_ = *w;
    if (info.has_input(2)) {
      const Tensor* b = info.constant_input(2);
      if (!b || b->dtype() != DType::Float32) info.unsupported("oneDNN path: non-constant bias");
      bias_ = b->clone();
    }
    bool static_shape = xt && xt->has_shape && xt->dims.size() == static_cast<size_t>(w->rank());
    for (size_t i = 0; static_shape && i < xt->dims.size(); ++i) static_shape = xt->dims[i] > 0;
    if (static_shape) {
      plans_.prepare(info, xt->dims, [&] { return make_plan(xt->dims); });
      weights_ = Tensor();  // prepacked for the only possible shape
      return;
    }
    bool outpad = !attrs_.output_shape.empty();
    for (int64_t p : attrs_.output_padding) outpad = outpad || p != 0;
    if (outpad)
      info.unsupported("oneDNN path: output_padding or output_shape with a dynamic input shape");
  }

  bool prepacked(size_t i) const override { return (i == 1 && !weights_.defined()) || i == 2; }
  std::string impl() const override { return impl_; }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.dtype() == DType::Float32, InvalidArgument, label_, ": X must be float32, got ",
             dtype_name(x.dtype()));
    DeconvPlan& p = plans_.get(x.shape(), label_, [&] { return make_plan(x.shape()); });
    Tensor& y = ctx.output(0, DType::Float32, p.y_shape);
    if (y.numel() == 0) return;
    onednn::guarded(label_, [&] {
      memory src = onednn::wrap(p.user_src, x);
      if (p.src_buf) {
        p.to_src->execute(stream_, src, *p.src_buf);
        src = *p.src_buf;
      }
      memory dst(p.user_dst, onednn::engine(), y.raw_data());
      memory out = p.dst_buf ? *p.dst_buf : dst;
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_DST, out}};
      if (p.bias) args.emplace(DNNL_ARG_BIAS, *p.bias);
      onednn::add_thread_scratchpad(args, p.scratchpad);
      p.prim.execute(stream_, args);
      if (p.dst_buf) p.from_dst->execute(stream_, *p.dst_buf, dst);
      stream_.wait();
    });
  }

 private:
  DeconvPlan make_plan(const Shape& xs) {
    PI_CHECK(weights_.defined(), Internal, label_, ": input shape ", shape_str(xs),
             " differs from the statically known one the weights were prepacked for");
    const ConvTransposeGeometry g = conv_transpose_geometry(attrs_, xs, weights_.shape(), label_);
    if (bias_.defined())
      PI_CHECK(bias_.shape() == Shape{g.M}, ShapeMismatch, label_, ": bias must be float32[", g.M,
               "], got ", bias_.describe());
    // 1-D runs as 2-D of height 1 (oneDNN has no 1-D weight tag with input channels first).
    const bool one_d = g.in.size() == 1;
    memory::dims in = onednn::dims_of(g.in), out = onednn::dims_of(g.out),
                 k = onednn::dims_of(g.kernel), s(g.strides.begin(), g.strides.end()),
                 dil(g.dilations.begin(), g.dilations.end()),
                 pl(g.pad_begin.begin(), g.pad_begin.end());
    if (one_d) {
      in.insert(in.begin(), 1);
      out.insert(out.begin(), 1);
      k.insert(k.begin(), 1);
      s.insert(s.begin(), 1);
      dil.insert(dil.begin(), 1);
      pl.insert(pl.begin(), 0);
    }
    // oneDNN's output size is (in - 1) * stride + dilated kernel - pad_l - pad_r.
    memory::dims pr(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      pr[i] = (in[i] - 1) * s[i] + (k[i] - 1) * dil[i] + 1 - pl[i] - out[i];
      dil[i] -= 1;  // oneDNN counts dilation from 0
    }
    const bool three_d = in.size() == 3;
    memory::dims src{g.N, g.C}, dst{g.N, g.M}, wd;
    src.insert(src.end(), in.begin(), in.end());
    dst.insert(dst.end(), out.begin(), out.end());
    // ONNX's W is [C, M/group, k...]: input channels outermost, oneDNN's io(d)hw order.
    if (g.group == 1) wd = {g.M, g.C};
    else
      wd = {g.group, g.M / g.group, g.C / g.group};
    wd.insert(wd.end(), k.begin(), k.end());
    const tag w_tag =
        g.group == 1 ? (three_d ? tag::iodhw : tag::iohw) : (three_d ? tag::giodhw : tag::giohw);
    const tag plain = three_d ? tag::ncdhw : tag::nchw;
    const memory::desc bias_md =
        bias_.defined() ? memory::desc({g.M}, dt::f32, tag::x) : memory::desc();
    dnnl::deconvolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
        memory::desc(src, dt::f32, tag::any), memory::desc(wd, dt::f32, tag::any), bias_md,
        memory::desc(dst, dt::f32, tag::any), s, dil, pl, pr);
    dnnl::primitive_attr attr;
    onednn::use_own_scratchpad(attr);
    dnnl::deconvolution_forward::primitive_desc pd(desc, attr, onednn::engine());
    impl_ = onednn::impl_name(pd);

    DeconvPlan p;
    p.y_shape = Shape{g.N, g.M};
    p.y_shape.insert(p.y_shape.end(), g.out.begin(), g.out.end());
    p.prim = dnnl::deconvolution_forward(pd);
    p.scratchpad = pd.scratchpad_desc();
    p.user_src = memory::desc(src, dt::f32, plain);
    p.user_dst = memory::desc(dst, dt::f32, plain);
    p.weights = onednn::host_memory(pd.weights_desc(), &p.weights_buf);
    onednn::write_weights(weights_.raw_data(), memory::desc(wd, dt::f32, w_tag), p.weights,
                          stream_);
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
    stream_.wait();
    return p;
  }

  std::string label_;
  ConvTransposeAttrs attrs_;
  Tensor weights_, bias_;  // weights_ is released once prepacked for the only possible shape
  onednn::PlanCache<Shape, DeconvPlan> plans_;
  dnnl::stream stream_{onednn::engine()};
  std::string impl_ = "onednn";
};

PI_CPU_FAST_KERNEL("", ConvTranspose, 1, 28, OnednnConvTranspose);

}  // namespace
}  // namespace polyinfer::cpu
