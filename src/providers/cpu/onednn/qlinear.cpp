// QLinearConv (and ai.polyinfer NhwcQLinearConv, QLinearConvAdd, NhwcQLinearConvAdd: channels-
// last and with a quantized residual, oneDNN's sum post-op), QLinearMatMul (and ai.polyinfer
// QLinearGemm: with an int32 bias) and MatMulInteger through oneDNN's int8 convolution and
// matmul (fast tier; the plain kernels in reference/quantize.cpp, reference/nhwc.cpp and
// reference/gemm.cpp are the reference).
//
// ONNX:  y = saturate(round((acc + bias) · sx·sw[m] / sy) + zy),
//        acc = Σ (x - zx)·(w[m] - zw[m])
// oneDNN 2.6 int8 primitives compute exactly that shape of formula: an s32 accumulation with a
// source zero point, an s32 bias added before the output scales (one per output channel), a
// destination zero point, round-to-nearest-even and saturation to u8/s8. The scales are folded
// into one float per channel at creation, so results can differ from the reference (which
// multiplies in double) by one step where (acc + bias)·scale lies within float rounding of a
// half-integer — the oracle tests allow exactly that.
//
// Covered: u8 or s8 activations, constant s8 weights with zero point 0 (per-tensor or
// per-output-channel scales: what QDQ exporters write), constant quantization parameters, u8
// or s8 output, constant int32 bias. Refused (the reference kernel takes the node): u8 or
// non-constant weights, a non-zero weight zero point (oneDNN's convolution has none), per-row
// A scales, a computed B in QLinearMatMul, 3-D convolutions. Weights are reordered once into
// the primitive's blocked layout (with oneDNN's s8 and zero-point compensation terms), at
// session creation when the input shape is static.
//
// Without VNNI (AVX2, AVX-512 without VNNI) oneDNN's int8 products are not the formula's: it
// adds u8 x s8 products in pairs into a saturating int16 (VPMADDUBSW; 2 x 255 x 127 > 32767)
// and runs an int8 source through halved weights. Each kernel therefore has two rows in the
// CPU choice table (choice_tables.cpp): `onednn_int8`, the operands as they are, where that is
// exact; and `onednn_int8_exact` (ExactForm below), the same primitives on operands rewritten
// so that it is.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "ops/window.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/onednn/conv_plan.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

std::optional<dt> int8_type(DType t) {
  if (t == DType::UInt8) return dt::u8;
  if (t == DType::Int8) return dt::s8;
  return std::nullopt;
}

// The values of a constant quantization parameter, as doubles.
std::vector<double> constant_values(const KernelInfo& info, size_t i, const char* what) {
  const Tensor* t = info.constant_input(i);
  if (!t) info.unsupported(std::string("oneDNN path: non-constant ") + what);
  return dispatch(NumericTypes{}, t->dtype(), what, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<double> v(static_cast<size_t>(t->numel()));
    for (size_t k = 0; k < v.size(); ++k) v[k] = double(compute_t<T>(t->data<T>()[k]));
    return v;
  });
}

// One operand's (scale, zero point) pair: scalars, or `per` values (per > 0) for the weights.
struct Quant {
  std::vector<double> scale;
  int32_t zp = 0;  // activations: the one zero point; weights: checked to be all zero
  dt type = dt::undef;
};

Quant read_quant(const KernelInfo& info, size_t si, size_t zi, int64_t per, bool weights,
                 const std::string& who) {
  Quant q;
  q.scale = constant_values(info, si, "scale");
  const std::vector<double> z = constant_values(info, zi, "zero point");
  const Tensor* zt = info.constant_input(zi);
  const auto type = int8_type(zt->dtype());
  if (!type)
    info.unsupported(std::string("oneDNN path: zero point of type ") + dtype_name(zt->dtype()));
  q.type = *type;
  const auto count_ok = [&](size_t n) {
    return n == 1 || (per > 0 && n == static_cast<size_t>(per));
  };
  if (!count_ok(q.scale.size()) || !count_ok(z.size()))
    info.unsupported(weights ? "oneDNN path: weight scales neither per tensor nor per output "
                               "channel"
                             : "oneDNN path: per-row or per-channel activation scales");
  for (double s : q.scale)
    PI_CHECK(s > 0 && std::isfinite(s), InvalidModel, who, ": scale ", s,
             " must be positive and finite");
  if (weights) {
    if (std::any_of(z.begin(), z.end(), [](double v) { return v != 0; }))
      info.unsupported("oneDNN path: non-zero weight zero point");
  } else {
    q.zp = int32_t(z[0]);
  }
  return q;
}

// Output scales sx·sw[m]/sy, one per channel (or one), as oneDNN takes them.
std::vector<float> output_scales(const Quant& x, const Quant& w, const Quant& y) {
  std::vector<float> s(w.scale.size());
  for (size_t m = 0; m < s.size(); ++m)
    s[m] = static_cast<float>(x.scale[0] * w.scale[m] / y.scale[0]);
  return s;
}

// Attributes shared by both primitives: scales over dst dimension `channel_dim`, runtime source
// and destination zero points (oneDNN 2.6's int8 kernels implement the runtime form).
dnnl::primitive_attr int8_attr(const std::vector<float>& scales, int channel_dim, bool src_zp,
                               bool dst_zp) {
  dnnl::primitive_attr attr;
  onednn::use_own_scratchpad(attr);
  attr.set_output_scales(scales.size() == 1 ? 0 : 1 << channel_dim, scales);
  if (src_zp) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (dst_zp) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  return attr;
}

// Adds the runtime zero-point arguments (their memories live in the kernel: `zps` holds src, dst).
void add_zero_points(std::unordered_map<int, memory>& args, int32_t (&zps)[2]) {
  const memory::desc md({1}, dt::s32, tag::x);
  if (zps[0] != 0)
    args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, memory(md, onednn::engine(), &zps[0]));
  if (zps[1] != 0)
    args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, memory(md, onednn::engine(), &zps[1]));
}

// out[i] = in[i] ^ bias, and the same widened to 16 bits (the byte, then a zero byte): the
// exact form's passes over the source, vectorized (a byte loop of memcpy's ran 15x slower).
PI_FAST_CLONES void flip_bytes(const uint8_t* __restrict in, uint8_t* __restrict out, int64_t n,
                               uint8_t bias) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] ^ bias;
}
PI_FAST_CLONES void widen_bytes(const uint8_t* __restrict in, uint16_t* __restrict out, int64_t n,
                                uint8_t bias) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(in[i] ^ bias);
}

// The exact form of an int8 product where oneDNN's is not (onednn_int8_exact): the same
// primitive on rewritten operands, so that it computes the formula's integers exactly.
//   flip:  an int8 source becomes uint8 (x + 128, its zero point + 128: the same x - zx), which
//          oneDNN runs without halving the weights;
//   widen: a zero channel after each input channel (column of A), and a zero weight for it.
//          VPMADDUBSW adds adjacent products in pairs, and now every pair holds one product at
//          most: |x·w| <= 255 x 128 fits int16, whatever the order of oneDNN's blocked layout,
//          since it keeps the channels of a tap adjacent. Twice the products, taken only for
//          weights beyond +-64 (two products of at most 255 x 64 always fit) and sums over
//          several input channels: a depthwise convolution has no pairs to saturate, and widened
//          it would leave oneDNN's depthwise kernels for its reference one.
// Why not float products on dequantized operands (float convolutions between our own
// quantization passes): measured no faster than the widened int8 form, on oneDNN's kernels or
// ours (docs/kernels.md, "onednn_int8_exact"), with twice the bytes per activation.
struct ExactForm {
  bool flip = false, widen = false;
  bool any() const { return flip || widen; }

  // Decides the form for a source of type `source` and weights `w` (int8, read in place) whose
  // sums run over `channels` input channels.
  void choose(dt source, const Tensor& w, int64_t channels) {
    flip = source == dt::s8;
    const int8_t* p = static_cast<const int8_t*>(w.peek_bytes());
    widen =
        channels > 1 && std::any_of(p, p + w.numel(), [](int8_t v) { return v > 64 || v < -64; });
  }

  // `w` (int8, [M, C, ...] when `axis` is 1, [K, N] when 0) with a zero slice after each slice
  // along `axis`.
  Tensor widened_weights(const Tensor& w, int axis) const {
    Shape ws = w.shape();
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < ws.size(); ++d)
      (static_cast<int>(d) < axis ? outer : inner) *= d == size_t(axis) ? 1 : ws[d];
    const int64_t n = ws[axis];
    ws[axis] *= 2;
    Tensor out = Tensor::empty(DType::Int8, ws);
    const int8_t* src = static_cast<const int8_t*>(w.peek_bytes());
    int8_t* dst = out.data<int8_t>();
    std::fill(dst, dst + out.numel(), int8_t{0});
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < n; ++c)
        std::copy(src + (o * n + c) * inner, src + (o * n + c + 1) * inner,
                  dst + (o * 2 * n + 2 * c) * inner);
    return out;
  }

  // X's shape in the form: the channel axis (`axis`) doubled when widening.
  Shape shape(Shape xs, int axis) const {
    if (widen) xs[axis] *= 2;
    return xs;
  }

  // X (u8 or s8 bytes; its channels along `axis`) in the form, in a buffer of the calling
  // thread shared by every exact kernel (the executor runs one node at a time per thread, and
  // one buffer per kernel would keep every layer's copy), grown to the largest request.
  const void* source(const Tensor& x, int axis, int threads) const {
    const int64_t bytes = shape_numel(shape(x.shape(), axis));
    thread_local Tensor buffer;
    if (!buffer.defined() || buffer.numel() < bytes) {
      buffer = Tensor::empty(DType::UInt8, {bytes});
      // The zero channels may hold anything (their weights are zero, and a pair's products
      // are then one), values of an earlier run included; only never-written memory is not.
      std::fill(buffer.data<uint8_t>(), buffer.data<uint8_t>() + bytes, uint8_t{0});
    }
    const uint8_t* in = static_cast<const uint8_t*>(x.raw_data());
    uint8_t* out = buffer.data<uint8_t>();
    // int8 v as uint8 v + 128: its bits with the top one flipped.
    const uint8_t bias = flip ? 0x80 : 0;
    const int64_t n = x.numel();
    int64_t inner = 1;
    for (int d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
    if (!widen) {
      fast::parallel_for(n, threads, fast::kGrain,
                         [&](int64_t b, int64_t e) { flip_bytes(in + b, out + b, e - b, bias); });
    } else if (inner == 1) {
      // Channels last: each byte followed by a zero byte, one 16-bit little-endian value.
      uint16_t* out16 = reinterpret_cast<uint16_t*>(out);
      fast::parallel_for(n, threads, fast::kGrain, [&](int64_t b, int64_t e) {
        widen_bytes(in + b, out16 + b, e - b, bias);
      });
    } else {
      // Channels first: each plane to every second plane (the others stay zero).
      const int64_t planes = n / inner;
      fast::parallel_for(planes, threads, std::max<int64_t>(1, fast::kGrain / inner),
                         [&](int64_t b, int64_t e) {
                           for (int64_t c = b; c < e; ++c)
                             flip_bytes(in + c * inner, out + 2 * c * inner, inner, bias);
                         });
    }
    return out;
  }

  // What the placement reports after the primitive's name.
  std::string impl_suffix() const {
    return !any()          ? ""
           : flip && widen ? " (exact: uint8 source, zero channels)"
           : flip          ? " (exact: uint8 source)"
                           : " (exact: zero channels)";
  }
};

class OnednnQLinearConv : public Kernel {
 public:
  OnednnQLinearConv(const KernelInfo& info, bool exact)
      : label_(info.node().label()),
        channels_last_(info.node().op_type.rfind("Nhwc", 0) == 0),
        has_z_(info.node().op_type.find("ConvAdd") != std::string::npos) {
    const Tensor* w = info.constant_input(3);
    if (!w) info.unsupported("oneDNN path: non-constant weights");
    if (w->dtype() != DType::Int8) info.unsupported("oneDNN path: weights other than int8");
    if (w->rank() != 3 && w->rank() != 4) info.unsupported("oneDNN path: 3-D convolution");
    const int64_t M = w->shape()[0];
    x_ = read_quant(info, 1, 2, 0, false, label_);
    const Quant wq = read_quant(info, 4, 5, M, true, label_);
    // QLinearConvAdd: Y is quantized by inputs 12, 13; 6, 7 bound the convolution's output.
    y_ = has_z_ ? read_quant(info, 12, 13, 0, false, label_)
                : read_quant(info, 6, 7, 0, false, label_);
    scales_ = output_scales(x_, wq, y_);
    source_type_ = x_.type;
    if (exact) {
      form_.choose(x_.type, *w, w->shape()[1]);
      if (form_.flip) {
        x_.type = dt::u8;
        x_.zp += 128;
      }
    }
    zps_[0] = x_.zp;
    zps_[1] = y_.zp;
    weights_ = form_.widen ? form_.widened_weights(*w, 1) : *w;
    w_shape_ = weights_.shape();
    if (!exact)
      advisory_ = onednn::int8_advisory(*w, x_.type == dt::s8, onednn::int8_products_exact(),
                                        w->shape()[1] > 1);
    if (info.has_input(8)) {
      const Tensor* b = info.constant_input(8);
      if (!b || b->dtype() != DType::Int32) info.unsupported("oneDNN path: non-constant bias");
      PI_CHECK(b->shape() == Shape{M}, ShapeMismatch, label_, ": bias must be int32[", M, "], got ",
               b->describe());
      bias_ = b->clone();
    }
    if (has_z_) {
      // The convolution's saturation, in units of sy (an eltwise clip post-op after the output
      // scales), then the residual: oneDNN's sum post-op adds zs/sy·(Z - zz) to what dst holds
      // (Z, copied in before the convolution), before the destination zero point and the one
      // rounding.
      const Quant c = read_quant(info, 6, 7, 0, false, label_);
      const double qmin = c.type == dt::u8 ? 0 : -128, qmax = c.type == dt::u8 ? 255 : 127;
      clip_lo_ = static_cast<float>((qmin - c.zp) * c.scale[0] / y_.scale[0]);
      clip_hi_ = static_cast<float>((qmax - c.zp) * c.scale[0] / y_.scale[0]);
      const Quant z = read_quant(info, 10, 11, 0, false, label_);
      if (z.type != y_.type) info.unsupported("oneDNN path: Z of another type than Y");
      z_scale_ = static_cast<float>(z.scale[0] / y_.scale[0]);
      z_zp_ = z.zp;
    }
    attrs_ = WindowAttrs::parse(info);
    const ir::TypeInfo* xt = info.input_type(0);
    if (xt && xt->elem != DType::Undefined && int8_type(xt->elem) != source_type_)
      info.unsupported("oneDNN path: X's type differs from its zero point's");
    if (xt && xt->has_shape && xt->dims.size() == static_cast<size_t>(w->rank()) &&
        std::all_of(xt->dims.begin(), xt->dims.end(), [](int64_t d) { return d > 0; })) {
      plans_.prepare(info, xt->dims, [&] { return make_plan(xt->dims); });
      weights_ = Tensor();  // prepacked for the only possible shape (see prepacked())
    }
  }

  bool prepacked(size_t i) const override { return (i == 3 && !weights_.defined()) || i == 8; }
  // QLinearConvAdd's sum post-op starts from Z's values in the destination (same 8-bit type as
  // Y): given Z's memory as Y's, the copy of Z goes, as for FusedConv.
  int inplace_input() const override { return has_z_ ? 9 : -1; }

  std::string impl() const override { return impl_ + form_.impl_suffix(); }
  std::string advisory() const override { return advisory_; }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(int8_type(x.dtype()) == source_type_, InvalidArgument, label_, ": X is ",
             dtype_name(x.dtype()), " but its zero point is not");
    PI_CHECK(x.rank() == static_cast<int>(w_shape_.size()), ShapeMismatch, label_, ": X has rank ",
             x.rank(), " but the weights have rank ", w_shape_.size());
    Plan& p = plan_for(x.shape());
    Tensor& y = ctx.output(0, y_.type == dt::u8 ? DType::UInt8 : DType::Int8, p.y_shape);
    const Tensor* z = nullptr;
    if (has_z_) {
      z = &ctx.input(9);
      PI_CHECK(z->shape() == y.shape() && int8_type(z->dtype()) == y_.type, ShapeMismatch, label_,
               ": Z ", z->describe(), " must have the output's shape ", shape_str(y.shape()),
               " and type");
    }
    const void* src = form_.any() ? form_.source(x, channel_axis(), ctx.threads()) : x.raw_data();
    onednn::guarded(label_, [&] {
      std::unordered_map<int, memory> zero_points;
      add_zero_points(zero_points, zps_);
      onednn::run_conv_plan(p, stream_, src, y, z, std::move(zero_points));
    });
  }

 private:
  using Plan = onednn::ConvPlan;

  Plan& plan_for(const Shape& xs) {
    return plans_.get(xs, label_, [&] { return make_plan(xs); });
  }

  int channel_axis() const { return channels_last_ ? static_cast<int>(w_shape_.size()) - 1 : 1; }

  Plan make_plan(const Shape& xs) {
    PI_CHECK(weights_.defined(), Internal, label_, ": input shape ", shape_str(xs),
             " differs from the statically known one the weights were prepacked for");
    PI_CHECK(xs.size() == w_shape_.size(), ShapeMismatch, label_, ": X ", shape_str(xs),
             " has another rank than the weights ", shape_str(w_shape_));
    const onednn::ConvDims d = onednn::conv_dims(form_.shape(xs, channel_axis()), w_shape_, attrs_,
                                                 channels_last_, label_);
    const memory::desc bias_md =
        bias_.defined() ? memory::desc({d.M}, dt::s32, tag::x) : memory::desc();
    // int8 kernels want channels-last activations: NCHW ones are reordered on every run (hence
    // NhwcQLinearConv, from the channels-last pass); tag::any lets oneDNN pick for those.
    const tag act_tag = channels_last_ ? tag::nhwc : tag::any;
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        memory::desc(d.src, x_.type, act_tag), memory::desc(d.weights, dt::s8, tag::any), bias_md,
        memory::desc(d.dst, y_.type, act_tag), d.strides, d.dilation, d.pad_l, d.pad_r);
    dnnl::primitive_attr attr = int8_attr(scales_, 1, zps_[0] != 0, zps_[1] != 0);
    if (has_z_) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, clip_lo_, clip_hi_);
      ops.append_sum(z_scale_, z_zp_, y_.type);
      attr.set_post_ops(ops);
    }
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, onednn::engine());
    impl_ = onednn::impl_name(pd);
    std::optional<memory> bias;
    if (bias_.defined()) bias = onednn::wrap(bias_md, bias_);
    return onednn::make_conv_plan(pd, d, channels_last_, x_.type, y_.type, weights_.peek_bytes(),
                                  dt::s8, bias, has_z_, stream_);
  }

  std::string label_;
  bool channels_last_;          // Nhwc*: X, Y (and Z) are [N, H, W, C]
  bool has_z_;                  // QLinearConvAdd: a quantized residual Z (inputs 9-11)
  dt source_type_ = dt::undef;  // X's (x_.type is what the primitive reads: u8 where flipped)
  ExactForm form_;              // none for onednn_int8
  float z_scale_ = 1;           // zs / sy
  int32_t z_zp_ = 0;
  float clip_lo_ = 0, clip_hi_ = 0;  // the convolution's saturation bounds, in units of sy
  Quant x_, y_;
  std::vector<float> scales_;
  int32_t zps_[2] = {0, 0};  // source and destination zero points, read by oneDNN at run time
  Tensor weights_, bias_;    // weights_ is released once prepacked for the only possible shape
  Shape w_shape_;
  WindowAttrs attrs_;
  onednn::PlanCache<Shape, Plan> plans_;
  dnnl::stream stream_{onednn::engine()};
  std::string impl_ = "onednn";
  std::string advisory_;
};

// QLinearMatMul with a constant 2-D B: a linear layer, A's batch dimensions folded into M;
// QLinearGemm adds its constant bias.
class OnednnQLinearMatMul : public Kernel {
 public:
  OnednnQLinearMatMul(const KernelInfo& info, bool exact) : label_(info.node().label()) {
    const Tensor* b = info.constant_input(3);
    if (!b || b->rank() != 2) info.unsupported("oneDNN path: B not a constant 2-D tensor");
    if (b->dtype() != DType::Int8) info.unsupported("oneDNN path: B other than int8");
    const ir::TypeInfo* at = info.input_type(0);
    const int ra = at && at->has_shape ? static_cast<int>(at->dims.size()) : -1;
    if (ra < 2) info.unsupported("oneDNN path: A of unknown or rank < 2 shape");
    const int64_t N = b->shape()[1];
    a_ = read_quant(info, 1, 2, 0, false, label_);
    const Quant bq = read_quant(info, 4, 5, N, true, label_);
    // QLinearGemm without sy, zy: float32 Y = (acc + bias)·sa·sb[n].
    if (info.node().op_type == "QLinearGemm" && !info.has_input(6)) {
      y_.scale = {1.0};
      y_.type = dt::f32;
    } else {
      y_ = read_quant(info, 6, 7, 0, false, label_);
    }
    if (at->elem != DType::Undefined && int8_type(at->elem) != a_.type)
      info.unsupported("oneDNN path: A's type differs from its zero point's");
    scales_ = output_scales(a_, bq, y_);
    source_type_ = a_.type;
    if (exact) {
      form_.choose(a_.type, *b, b->shape()[0]);
      if (form_.flip) {
        a_.type = dt::u8;
        a_.zp += 128;
      }
    } else {
      advisory_ = onednn::int8_advisory(*b, a_.type == dt::s8, onednn::int8_products_exact());
    }
    zps_[0] = a_.zp;
    zps_[1] = y_.zp;
    weights_ = form_.widen ? form_.widened_weights(*b, 0) : *b;
    K_ = b->shape()[0];
    N_ = N;
    if (info.node().op_type == "QLinearGemm" && info.has_input(8)) {
      const Tensor* c = info.constant_input(8);
      if (!c || c->dtype() != DType::Int32) info.unsupported("oneDNN path: non-constant bias");
      PI_CHECK(c->numel() == N, ShapeMismatch, label_, ": the bias must have ", N, " values, got ",
               c->describe());
      bias_ = c->clone();
    }
    if (std::all_of(at->dims.begin(), at->dims.end(), [](int64_t d) { return d > 0; })) {
      plans_.prepare(info, at->dims, [&] { return make_plan(at->dims); });
      weights_ = Tensor();
    }
  }

  bool prepacked(size_t i) const override {
    return (i == 3 && !weights_.defined()) || (i == 8 && bias_.defined());
  }

  std::string impl() const override { return impl_ + form_.impl_suffix(); }
  std::string advisory() const override { return advisory_; }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    PI_CHECK(int8_type(a.dtype()) == source_type_, InvalidArgument, label_, ": A is ",
             dtype_name(a.dtype()), " but its zero point is not");
    PI_CHECK(a.rank() >= 2, ShapeMismatch, label_, ": A must have rank >= 2 here, got ",
             shape_str(a.shape()));
    Plan& p = plan_for(a.shape());
    const void* src = form_.any() ? form_.source(a, a.rank() - 1, ctx.threads()) : a.raw_data();
    Tensor& y = ctx.output(0,
                           y_.type == dt::u8   ? DType::UInt8
                           : y_.type == dt::s8 ? DType::Int8
                                               : DType::Float32,
                           p.y_shape);
    dnnl::stream& s = stream_;
    onednn::guarded(label_, [&] {
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, memory(p.src_md, onednn::engine(), const_cast<void*>(src))},
          {DNNL_ARG_WEIGHTS, p.weights},
          {DNNL_ARG_DST, memory(p.dst_md, onednn::engine(), y.raw_data())}};
      if (bias_.defined())
        args.emplace(DNNL_ARG_BIAS, onednn::wrap(memory::desc({1, N_}, dt::s32, tag::ab), bias_));
      add_zero_points(args, zps_);
      onednn::add_thread_scratchpad(args, p.scratchpad_md);
      p.prim.execute(s, args);
      s.wait();
    });
  }

 private:
  struct Plan {
    Shape y_shape;
    dnnl::matmul prim;
    memory::desc src_md, dst_md, scratchpad_md;
    memory weights;
    Tensor weights_buf;  // behind `weights`
  };

  Plan& plan_for(const Shape& as) {
    return plans_.get(as, label_, [&] { return make_plan(as); });
  }

  Plan make_plan(const Shape& as) {
    PI_CHECK(weights_.defined(), Internal, label_, ": input shape ", shape_str(as),
             " differs from the statically known one the weights were prepacked for");
    PI_CHECK(as.back() == K_, ShapeMismatch, label_, ": A ", shape_str(as), " has K = ", as.back(),
             " but B has ", K_, " rows");
    const int64_t M = shape_numel(as) / K_, K = form_.widen ? 2 * K_ : K_;
    Plan p;
    p.y_shape = Shape(as.begin(), as.end() - 1);
    p.y_shape.push_back(N_);
    p.src_md = memory::desc({M, K}, a_.type, tag::ab);
    p.dst_md = memory::desc({M, N_}, y_.type, tag::ab);
    const dnnl::primitive_attr attr = int8_attr(scales_, 1, zps_[0] != 0, zps_[1] != 0);
    const memory::desc bias_md =
        bias_.defined() ? memory::desc({1, N_}, dt::s32, tag::ab) : memory::desc();
    dnnl::matmul::primitive_desc pd(
        dnnl::matmul::desc(p.src_md, memory::desc({K, N_}, dt::s8, tag::any), bias_md, p.dst_md),
        attr, onednn::engine());
    impl_ = onednn::impl_name(pd);
    p.prim = dnnl::matmul(pd);
    p.scratchpad_md = pd.scratchpad_desc();
    p.weights = onednn::host_memory(pd.weights_desc(), &p.weights_buf);
    onednn::write_weights(weights_.peek_bytes(), memory::desc({K, N_}, dt::s8, tag::ab), p.weights,
                          stream_);
    return p;
  }

  std::string label_;
  dt source_type_ = dt::undef;  // A's (a_.type is what the primitive reads: u8 where flipped)
  ExactForm form_;              // none for onednn_int8
  Quant a_, y_;
  std::vector<float> scales_;
  int32_t zps_[2] = {0, 0};
  Tensor weights_, bias_;  // bias_: QLinearGemm's int32[N], added before the output scale
  int64_t K_ = 0, N_ = 0;
  onednn::PlanCache<Shape, Plan> plans_;
  dnnl::stream stream_{onednn::engine()};
  std::string impl_ = "onednn";
  std::string advisory_;
};

// MatMulInteger with a constant 2-D int8 B whose zero point is 0 (how dynamic quantization
// writes linear layers: DynamicQuantizeLinear → MatMulInteger → Cast → Mul): oneDNN's u8/s8 ×
// s8 → s32 matmul, exact (integer arithmetic only). A's zero point is read on every run (it
// comes from DynamicQuantizeLinear); a per-row one goes to the reference kernel.
class OnednnMatMulInteger : public Kernel {
 public:
  OnednnMatMulInteger(const KernelInfo& info, bool exact)
      : label_(info.node().label()), ref_(info) {
    const Tensor* b = info.constant_input(1);
    if (!b || b->rank() != 2) info.unsupported("oneDNN path: B not a constant 2-D tensor");
    if (b->dtype() != DType::Int8) info.unsupported("oneDNN path: B other than int8");
    if (info.has_input(3)) {
      const Tensor* bz = info.constant_input(3);
      if (!bz) info.unsupported("oneDNN path: non-constant B zero point");
      for (int64_t i = 0; i < bz->numel(); ++i)
        if (bz->dtype() != DType::Int8 || bz->data<int8_t>()[i] != 0)
          info.unsupported("oneDNN path: non-zero B zero point");
    }
    const ir::TypeInfo* at = info.input_type(0);
    if (!at || !at->has_shape || at->dims.size() < 2 || !int8_type(at->elem))
      info.unsupported("oneDNN path: A not 8-bit of known rank >= 2");
    a_type_ = *int8_type(at->elem);
    if (exact) {
      form_.choose(a_type_, *b, b->shape()[0]);
    } else {
      advisory_ = onednn::int8_advisory(*b, a_type_ == dt::s8, onednn::int8_products_exact());
    }
    weights_ = form_.widen ? form_.widened_weights(*b, 0) : *b;
    K_ = b->shape()[0];
    N_ = b->shape()[1];
    if (std::all_of(at->dims.begin(), at->dims.end(), [](int64_t d) { return d > 0; })) {
      plans_.prepare(info, at->dims, [&] { return make_plan(at->dims); });
    }
    // The original B stays (prepacked() is false): a run the fast path declines (a per-row A
    // zero point, only known at run time) hands it to the reference kernel.
  }

  std::string impl() const override {
    return fell_back_ ? ref_.impl() : impl_ + form_.impl_suffix();
  }
  std::string advisory() const override { return fell_back_ ? "" : advisory_; }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    int32_t za = 0;
    if (ctx.has_input(2)) {
      const Tensor& z = ctx.input(2);
      if (z.numel() != 1 || z.rank() > 1 || z.dtype() != a.dtype()) return fall_back(ctx);
      za = a.dtype() == DType::UInt8 ? z.data<uint8_t>()[0] : z.data<int8_t>()[0];
    }
    if (int8_type(a.dtype()) != a_type_ || a.rank() < 2 || a.shape().back() != K_)
      return fall_back(ctx);  // the reference kernel computes or reports it
    Plan& p = plans_.get(a.shape(), label_, [&] { return make_plan(a.shape()); });
    Tensor& y = ctx.output(0, DType::Int32, p.y_shape);
    zp_ = form_.flip ? za + 128 : za;
    const void* src = form_.any() ? form_.source(a, a.rank() - 1, ctx.threads()) : a.raw_data();
    dnnl::stream& s = stream_;
    onednn::guarded(label_, [&] {
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, memory(p.src_md, onednn::engine(), const_cast<void*>(src))},
          {DNNL_ARG_WEIGHTS, p.weights},
          {DNNL_ARG_DST, memory(p.dst_md, onednn::engine(), y.raw_data())},
          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC,
           memory(memory::desc({1}, dt::s32, tag::x), onednn::engine(), &zp_)}};
      onednn::add_thread_scratchpad(args, p.scratchpad_md);
      p.prim.execute(s, args);
      s.wait();
    });
  }

 private:
  struct Plan {
    Shape y_shape;
    dnnl::matmul prim;
    memory::desc src_md, dst_md, scratchpad_md;
    memory weights;
    Tensor weights_buf;  // behind `weights`
  };

  void fall_back(KernelContext& ctx) {
    fell_back_ = true;
    ref_.run(ctx);
  }

  Plan make_plan(const Shape& as) {
    const int64_t M = shape_numel(as) / K_, K = form_.widen ? 2 * K_ : K_;
    Plan p;
    p.y_shape = Shape(as.begin(), as.end() - 1);
    p.y_shape.push_back(N_);
    p.src_md = memory::desc({M, K}, form_.flip ? dt::u8 : a_type_, tag::ab);
    p.dst_md = memory::desc({M, N_}, dt::s32, tag::ab);
    dnnl::primitive_attr attr;
    onednn::use_own_scratchpad(attr);
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    dnnl::matmul::primitive_desc pd(
        dnnl::matmul::desc(p.src_md, memory::desc({K, N_}, dt::s8, tag::any), p.dst_md), attr,
        onednn::engine());
    impl_ = onednn::impl_name(pd);
    p.prim = dnnl::matmul(pd);
    p.scratchpad_md = pd.scratchpad_desc();
    p.weights = onednn::host_memory(pd.weights_desc(), &p.weights_buf);
    onednn::write_weights(weights_.peek_bytes(), memory::desc({K, N_}, dt::s8, tag::ab), p.weights,
                          stream_);
    return p;
  }

  std::string label_;
  fast::RefFallback ref_;
  bool fell_back_ = false;
  dt a_type_ = dt::u8;  // A's (the primitive reads u8 where form_ flips it)
  ExactForm form_;      // none for onednn_int8
  Tensor weights_;      // B as the model has it [K, N] (widened: [2K, N])
  int64_t K_ = 0, N_ = 0;
  int32_t zp_ = 0;  // A's zero point of the current run, read by oneDNN
  onednn::PlanCache<Shape, Plan> plans_;
  dnnl::stream stream_{onednn::engine()};
  std::string impl_ = "onednn";
  std::string advisory_;
};

// The two rows of the int8 table (choice_tables.cpp): the operands as they are, and the exact form.
template <class K, bool Exact> class Row final : public K {
 public:
  explicit Row(const KernelInfo& info) : K(info, Exact) {}
};
using QConv = Row<OnednnQLinearConv, false>;
using QConvExact = Row<OnednnQLinearConv, true>;
using QMatMul = Row<OnednnQLinearMatMul, false>;
using QMatMulExact = Row<OnednnQLinearMatMul, true>;
using MatMulInt = Row<OnednnMatMulInteger, false>;
using MatMulIntExact = Row<OnednnMatMulInteger, true>;

PI_CPU_CANDIDATE("", QLinearConv, 10, 28, "onednn_int8", QConv);
PI_CPU_CANDIDATE("", QLinearConv, 10, 28, "onednn_int8_exact", QConvExact);
PI_CPU_CANDIDATE("ai.polyinfer", NhwcQLinearConv, 1, 1, "onednn_int8", QConv);
PI_CPU_CANDIDATE("ai.polyinfer", NhwcQLinearConv, 1, 1, "onednn_int8_exact", QConvExact);
PI_CPU_CANDIDATE("ai.polyinfer", QLinearConvAdd, 1, 1, "onednn_int8", QConv);
PI_CPU_CANDIDATE("ai.polyinfer", QLinearConvAdd, 1, 1, "onednn_int8_exact", QConvExact);
PI_CPU_CANDIDATE("ai.polyinfer", NhwcQLinearConvAdd, 1, 1, "onednn_int8", QConv);
PI_CPU_CANDIDATE("ai.polyinfer", NhwcQLinearConvAdd, 1, 1, "onednn_int8_exact", QConvExact);
PI_CPU_CANDIDATE("", QLinearMatMul, 10, 28, "onednn_int8", QMatMul);
PI_CPU_CANDIDATE("", QLinearMatMul, 10, 28, "onednn_int8_exact", QMatMulExact);
PI_CPU_CANDIDATE("ai.polyinfer", QLinearGemm, 1, 1, "onednn_int8", QMatMul);
PI_CPU_CANDIDATE("ai.polyinfer", QLinearGemm, 1, 1, "onednn_int8_exact", QMatMulExact);
PI_CPU_CANDIDATE("", MatMulInteger, 10, 28, "onednn_int8", MatMulInt);
PI_CPU_CANDIDATE("", MatMulInteger, 10, 28, "onednn_int8_exact", MatMulIntExact);

}  // namespace
}  // namespace polyinfer::cpu
