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
//
// A window equal to its stride, unpadded, undilated and ungrouped (the 2x2/2 upsamplers of
// DBNet heads and YOLO-seg protos) takes another form: each output pixel then receives exactly
// one input pixel, so the node is one matrix product T = Wt X per image (Wt: [M k..., C], X:
// [C, in...]) and an interleave of T's rows into Y with the bias added. oneDNN's
// deconvolution ran those at 1.5-28 GFLOP/s: its blocked layout pads M = 1 to 16 channels and
// its jit kernel is slow for them (docs/kernels.md has the figures).
#include <algorithm>
#include <cstring>
#include <optional>

#include "ops/window.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/onednn/onednn.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// The window = stride form: T = Wt X (oneDNN matmul), then Y from T's rows.
struct Unstrided {
  dnnl::matmul prim;
  memory::desc x_md, t_md, scratchpad;
  memory wt;      // Wt, [M k0 k1 k2, C] (k padded to 3 axes with 1s)
  Tensor wt_buf;  // behind `wt`
  Tensor bias;    // [M] (zeros without one)
  int64_t M = 0, C = 0, in[3] = {1, 1, 1}, k[3] = {1, 1, 1};
};

struct DeconvPlan {
  Shape y_shape;
  std::optional<Unstrided> unstrided;  // set: the window = stride form runs, not `prim`
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
    if (p.unstrided) return run_unstrided(*p.unstrided, x, y, ctx.threads());
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
    if (window_is_stride(g)) return make_unstrided_plan(g);
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
    onednn::write_weights(weights_.peek_bytes(), memory::desc(wd, dt::f32, w_tag), p.weights,
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

  // Every output pixel takes one input pixel: window = stride, no padding at the start, output
  // = input times stride (no output_padding), undilated, ungrouped.
  static bool window_is_stride(const ConvTransposeGeometry& g) {
    if (g.group != 1 || g.in.size() > 3) return false;
    for (size_t i = 0; i < g.in.size(); ++i)
      if (g.kernel[i] != g.strides[i] || g.dilations[i] != 1 || g.pad_begin[i] != 0 ||
          g.out[i] != g.in[i] * g.strides[i])
        return false;
    return true;
  }

  DeconvPlan make_unstrided_plan(const ConvTransposeGeometry& g) {
    Unstrided u;
    u.M = g.M;
    u.C = g.C;
    const size_t skip = 3 - g.in.size();
    for (size_t i = 0; i < g.in.size(); ++i) {
      u.in[skip + i] = g.in[i];
      u.k[skip + i] = g.kernel[i];
    }
    const int64_t rows = g.M * u.k[0] * u.k[1] * u.k[2], pixels = u.in[0] * u.in[1] * u.in[2];
    // W is [C, M, k...] = [C, rows]: Wt is its transpose, written once (from the weight's bytes
    // wherever they are: any alignment).
    const memory::desc wt_md({rows, g.C}, dt::f32, tag::ab);
    u.x_md = memory::desc({g.C, pixels}, dt::f32, tag::ab);
    u.t_md = memory::desc({rows, pixels}, dt::f32, tag::ab);
    u.wt = onednn::host_memory(wt_md, &u.wt_buf);
    const auto* w = static_cast<const unsigned char*>(weights_.peek_bytes());
    float* wt = static_cast<float*>(u.wt.get_data_handle());
    for (int64_t c = 0; c < g.C; ++c)
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(wt + r * g.C + c, w + (c * rows + r) * sizeof(float), sizeof(float));
    u.bias = bias_.defined() ? bias_ : Tensor::zeros(DType::Float32, {g.M});
    dnnl::primitive_attr attr;
    onednn::use_own_scratchpad(attr);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(wt_md, u.x_md, u.t_md), attr,
                                          onednn::engine());
    u.prim = dnnl::matmul(pd);
    u.scratchpad = pd.scratchpad_desc();
    impl_ = onednn::impl_name(pd) + " + interleave";
    DeconvPlan p;
    p.y_shape = Shape{g.N, g.M};
    p.y_shape.insert(p.y_shape.end(), g.out.begin(), g.out.end());
    p.unstrided = std::move(u);
    return p;
  }

  // Per image: T = Wt X into a buffer of this thread, then row (m, od, oh) of Y is T's rows
  // (m, od % k0, oh % k1, j) for j < k2 at depth and row od / k0, oh / k1, interleaved.
  void run_unstrided(Unstrided& u, const Tensor& x, Tensor& y, int threads) {
    const int64_t k0 = u.k[0], k1 = u.k[1], k2 = u.k[2], D = u.in[0], H = u.in[1], W = u.in[2];
    const int64_t pixels = D * H * W, rows = u.M * k0 * k1 * k2, N = x.shape()[0];
    const int64_t y_rows = u.M * D * k0 * H * k1, y_row = W * k2;
    thread_local Tensor t_buf;
    if (!t_buf.defined() || t_buf.numel() < rows * pixels)
      t_buf = Tensor::empty(DType::Float32, {rows * pixels});
    float* t = t_buf.data<float>();
    const float* bias = u.bias.data<float>();
    for (int64_t n = 0; n < N; ++n) {
      onednn::guarded(label_, [&] {
        const float* xn = x.data<float>() + n * u.C * pixels;
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC, u.wt},
            {DNNL_ARG_WEIGHTS, memory(u.x_md, onednn::engine(), const_cast<float*>(xn))},
            {DNNL_ARG_DST, memory(u.t_md, onednn::engine(), t)}};
        onednn::add_thread_scratchpad(args, u.scratchpad);
        u.prim.execute(stream_, args);
        stream_.wait();
      });
      float* yn = y.data<float>() + n * y_rows * y_row;
      polyinfer::fast::parallel_for(
          y_rows, threads, std::max<int64_t>(1, 4096 / y_row), [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r) {
              const int64_t oh = r % (H * k1), od = r / (H * k1) % (D * k0),
                            m = r / (H * k1 * D * k0);
              const float bm = bias[m];
              const float* src = t + (((m * k0 + od % k0) * k1 + oh % k1) * k2) * pixels +
                                 (od / k0 * H + oh / k1) * W;
              float* out = yn + r * y_row;
              if (k2 == 2) {
                const float* s1 = src + pixels;
                for (int64_t w = 0; w < W; ++w) {
                  out[2 * w] = src[w] + bm;
                  out[2 * w + 1] = s1[w] + bm;
                }
              } else {
                for (int64_t j = 0; j < k2; ++j)
                  for (int64_t w = 0; w < W; ++w) out[w * k2 + j] = src[j * pixels + w] + bm;
              }
            }
          });
    }
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
