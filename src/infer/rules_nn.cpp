// Inference of the neural-network operators: convolutions and pooling (with the window geometry
// every provider uses, src/ops/window.h), their channels-last and fused forms, normalizations.
#include <algorithm>
#include <cmath>

#include "infer/rule_util.h"
#include "ops/window.h"

namespace polyinfer::infer {
namespace {

// A stand-in for an unknown spatial size: the geometry is computed with it and the output
// dimension it gives is then dropped (output sizes depend on each input size alone).
constexpr int64_t kStandIn = 1 << 20;

WindowAttrs window_attrs(const Context& ctx) {
  WindowAttrs a;
  a.auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  a.kernel_shape = ctx.attr_ints("kernel_shape").value_or(std::vector<int64_t>{});
  a.strides = ctx.attr_ints("strides").value_or(std::vector<int64_t>{});
  a.dilations = ctx.attr_ints("dilations").value_or(std::vector<int64_t>{});
  a.pads = ctx.attr_ints("pads").value_or(std::vector<int64_t>{});
  a.group = ctx.attr_int("group", 1);
  a.ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  return a;
}

// Output spatial sizes of a window over `spatial` with `kernel` taps (window_geometry's rules);
// unknown where an input size is.
std::optional<Dims> window_out(const Context& ctx, const Dims& spatial, const Shape& kernel,
                               bool pool) {
  Shape in;
  for (const Dim& d : spatial) in.push_back(d.known() ? d.value : kStandIn);
  const WindowGeometry g = window_geometry(window_attrs(ctx), in, kernel, ctx.node().label(), pool);
  Dims out;
  for (size_t i = 0; i < spatial.size(); ++i)
    out.push_back(spatial[i].known() ? Dim::of(g.out[i]) : Dim::unknown());
  return out;
}

// A kernel shape from the attribute, or from W's dims [M, C, k...] from `first`.
std::optional<Shape> kernel_of(const Context& ctx, size_t w_input, size_t spatial) {
  if (const auto k = ctx.attr_ints("kernel_shape"); k && k->size() == spatial) return *k;
  const auto w = ctx.shape(w_input);
  if (!w || w->size() != spatial + 2) return std::nullopt;
  Shape k;
  for (size_t i = 2; i < w->size(); ++i) {
    if (!(*w)[i].known()) return std::nullopt;
    k.push_back((*w)[i].value);
  }
  return k;
}

// Conv-like: X [N, C, D...] (channels first) or [N, D..., C] (channels last), W [M, C/g, k...].
void conv_like(Context& ctx, size_t w_input, DType elem, bool channels_last) {
  const auto x = ctx.shape(0);
  const auto w = ctx.shape(w_input);
  if (!x || x->size() < 3) return ctx.set_elem(0, elem);
  const size_t spatial = x->size() - 2;
  const Dim m = w && !w->empty() ? (*w)[0] : Dim::unknown();
  const auto kernel = kernel_of(ctx, w_input, spatial);
  Dims sp(channels_last ? x->begin() + 1 : x->begin() + 2, channels_last ? x->end() - 1 : x->end());
  Dims out_sp(spatial);
  if (kernel) out_sp = *window_out(ctx, sp, *kernel, false);
  Dims out{(*x)[0]};
  if (channels_last) {
    out.insert(out.end(), out_sp.begin(), out_sp.end());
    out.push_back(m);
  } else {
    out.push_back(m);
    out.insert(out.end(), out_sp.begin(), out_sp.end());
  }
  ctx.set(0, elem, out);
}

void conv(Context& ctx) { conv_like(ctx, 1, ctx.elem(0), false); }
void conv_integer(Context& ctx) { conv_like(ctx, 1, DType::Int32, false); }
// QLinearConv's Y: y_zero_point's type (input 7), uint8 without one.
DType qconv_out(const Context& ctx) { return ctx.has_input(7) ? ctx.elem(7) : DType::UInt8; }
void qlinear_conv(Context& ctx) { conv_like(ctx, 3, qconv_out(ctx), false); }
void nhwc_conv(Context& ctx) { conv_like(ctx, 1, ctx.elem(0), true); }
void nhwc_qlinear_conv(Context& ctx) { conv_like(ctx, 3, qconv_out(ctx), true); }
// QLinearConvAdd: Y of the residual Z's 8-bit type (input 9).
void qconv_add(Context& ctx) { conv_like(ctx, 3, ctx.elem(9), false); }
void nhwc_qconv_add(Context& ctx) { conv_like(ctx, 3, ctx.elem(9), true); }

void conv_transpose(Context& ctx) {
  const auto x = ctx.shape(0), w = ctx.shape(1);
  const DType elem = ctx.elem(0);
  if (!x || !w || x->size() < 3 || w->size() != x->size()) return ctx.set_elem(0, elem);
  Shape xs, ws;
  for (const Dim& d : *x) xs.push_back(d.known() ? d.value : kStandIn);
  for (const Dim& d : *w) {
    if (!d.known()) return ctx.set_rank(0, elem, int(x->size()));
    ws.push_back(d.value);
  }
  ConvTransposeAttrs a;
  a.window = window_attrs(ctx);
  a.output_padding = ctx.attr_ints("output_padding").value_or(std::vector<int64_t>{});
  a.output_shape = ctx.attr_ints("output_shape").value_or(std::vector<int64_t>{});
  const ConvTransposeGeometry g = conv_transpose_geometry(a, xs, ws, ctx.node().label());
  Dims out{(*x)[0], Dim::of(g.M)};
  for (size_t i = 0; i < g.out.size(); ++i)
    out.push_back((*x)[i + 2].known() || !a.output_shape.empty() ? Dim::of(g.out[i])
                                                                 : Dim::unknown());
  ctx.set(0, elem, out);
}

void pool_like(Context& ctx, bool channels_last) {
  const auto x = ctx.shape(0);
  const DType elem = ctx.elem(0);
  if (!x || x->size() < 3) {
    ctx.set_elem(0, elem);
    return ctx.set_elem(1, DType::Int64);
  }
  const size_t spatial = x->size() - 2;
  const auto k = ctx.attr_ints("kernel_shape");
  Dims out = *x;
  if (k && k->size() == spatial) {
    const Dims sp(channels_last ? x->begin() + 1 : x->begin() + 2,
                  channels_last ? x->end() - 1 : x->end());
    const Dims o = *window_out(ctx, sp, *k, true);
    std::copy(o.begin(), o.end(), out.begin() + (channels_last ? 1 : 2));
  } else {
    for (size_t i = 0; i < spatial; ++i) out[i + (channels_last ? 1 : 2)] = Dim::unknown();
  }
  ctx.set(0, elem, out);
  ctx.set(1, DType::Int64, out);  // MaxPool's Indices
}
void pool(Context& ctx) { pool_like(ctx, false); }
void nhwc_pool(Context& ctx) { pool_like(ctx, true); }

void global_pool_like(Context& ctx, bool channels_last) {
  const auto x = ctx.shape(0);
  if (!x || x->size() < 2) return ctx.set_elem(0, ctx.elem(0));
  Dims out = *x;
  for (size_t i = channels_last ? 1 : 2; i < out.size() - (channels_last ? 1 : 0); ++i)
    out[i] = Dim::of(1);
  ctx.set(0, ctx.elem(0), out);
}
void global_pool(Context& ctx) { global_pool_like(ctx, false); }
void nhwc_global_pool(Context& ctx) { global_pool_like(ctx, true); }

// BatchNormalization: Y as X; in training mode (opset 14+) the running mean and variance as
// the scale's shape.
void batch_norm(Context& ctx) {
  ctx.set_like(0, 0);
  for (size_t o = 1; o < ctx.num_outputs(); ++o) ctx.set_like(o, 3);
}

// LayerNormalization: Y as X; Mean and InvStdDev of X's shape with the normalized axes 1.
void layer_norm(Context& ctx) {
  ctx.set_like(0, 0);
  const auto x = ctx.shape(0);
  if (!x) return;
  const int64_t r = static_cast<int64_t>(x->size());
  const auto axis = axis_index(ctx.attr_int("axis", -1), r);
  if (!axis) return;
  Dims stat = *x;
  for (int64_t i = *axis; i < r; ++i) stat[i] = Dim::of(1);
  const int64_t stash = ctx.attr_int("stash_type", 1);
  const DType elem = stash == 1 ? DType::Float32 : ctx.elem(0);
  ctx.set(1, elem, stat);
  ctx.set(2, elem, stat);
}

// ai.polyinfer NhwcPointwiseDepthwiseConv: X [N, H, W, C] -> 1x1 to E channels -> 3x3 depthwise.
void pointwise_depthwise(Context& ctx) {
  const auto x = ctx.shape(0), w2 = ctx.shape(3);
  if (!x || x->size() != 4) return ctx.set_elem(0, ctx.elem(0));
  const Dim e = w2 && !w2->empty() ? (*w2)[0] : Dim::unknown();
  const Dims sp(x->begin() + 1, x->end() - 1);
  Dims out{(*x)[0]};
  const Dims o = *window_out(ctx, sp, {3, 3}, false);
  out.insert(out.end(), o.begin(), o.end());
  out.push_back(e);
  ctx.set(0, ctx.elem(0), out);
}

// The concatenation of inputs [first, last) on their last axis (they agree elsewhere).
std::optional<Dims> concat_last(const Context& ctx, size_t first, size_t last) {
  std::optional<Dims> out;
  for (size_t i = first; i < last; ++i) {
    const auto s = ctx.shape(i);
    if (!s || s->empty()) return std::nullopt;
    if (!out) {
      out = *s;
      continue;
    }
    if (out->size() != s->size()) return std::nullopt;
    Dim& c = out->back();
    c = c.known() && s->back().known() ? Dim::of(c.value + s->back().value) : Dim::unknown();
  }
  return out;
}

// ChannelAffine(X, scale, shift): X's type.
void channel_affine(Context& ctx) { ctx.set_like(0, 0); }

// ConcatChannelAffine(scale, shift, X1, ..., Xn): the Xi concatenated on the last axis.
void concat_channel_affine(Context& ctx) {
  const auto out = concat_last(ctx, 2, ctx.num_inputs());
  if (out) ctx.set(0, ctx.elem(2), *out);
  else
    ctx.set_elem(0, ctx.elem(2));
}

// ConcatChannelShuffle(X1, ..., XG) -> Y1, ..., YS: the concatenation cut into S equal parts.
void concat_channel_shuffle(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto all = concat_last(ctx, 0, ctx.num_inputs());
  const int64_t parts = static_cast<int64_t>(ctx.num_outputs());
  for (size_t o = 0; o < ctx.num_outputs(); ++o) {
    if (!all) {
      ctx.set_elem(o, elem);
      continue;
    }
    Dims d = *all;
    d.back() = d.back().known() && d.back().value % parts == 0 ? Dim::of(d.back().value / parts)
                                                               : Dim::unknown();
    ctx.set(o, elem, d);
  }
}

// The float values of a constant input (Resize's scales), or nullopt.
std::optional<std::vector<double>> floats(const Context& ctx, size_t i) {
  const Tensor* t = ctx.constant(i);
  if (!t || t->rank() > 1 || t->numel() > 64) return std::nullopt;
  std::vector<double> out;
  for (int64_t k = 0; k < t->numel(); ++k) {
    if (t->dtype() == DType::Float32) out.push_back(t->data<float>()[k]);
    else if (t->dtype() == DType::Float64)
      out.push_back(t->data<double>()[k]);
    else
      return std::nullopt;
  }
  return out;
}

// Output sizes of a resize by `scales` (floor of input times scale).
std::optional<Dims> scaled(const Dims& in, const std::vector<double>& scales) {
  if (scales.size() != in.size()) return std::nullopt;
  Dims out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!(scales[i] > 0) || !in[i].known()) {
      out.push_back(Dim::unknown());
      continue;
    }
    const double v = std::floor(static_cast<double>(in[i].value) * scales[i]);
    out.push_back(v >= 0 && v < 1e15 ? Dim::of(static_cast<int64_t>(v)) : Dim::unknown());
  }
  return out;
}

// Resize: sizes (input 3, from opset 11) or scales (input 2; input 1 at opset 10), over `axes`
// (opset 18) or every axis; a policy other than stretch is left to the run.
void resize(Context& ctx) {
  const auto x = ctx.shape(0);
  const DType elem = ctx.elem(0);
  if (!x) return ctx.set_elem(0, elem);
  const int r = static_cast<int>(x->size());
  std::vector<int64_t> axes;
  if (const auto a = ctx.attr_ints("axes"); ctx.opset() >= 18 && a && !a->empty()) {
    const auto idx = axes_index(*a, r);
    if (!idx) return ctx.set_rank(0, elem, r);
    axes = *a;
    for (int64_t& v : axes) v = v < 0 ? v + r : v;
  } else {
    for (int i = 0; i < r; ++i) axes.push_back(i);
  }
  if (ctx.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
    return ctx.set_rank(0, elem, r);
  Dims sub;
  for (int64_t a : axes) sub.push_back((*x)[a]);
  std::optional<Dims> out_sub;
  if (ctx.opset() >= 11 && ctx.has_input(3)) {
    if (const auto sizes = ctx.known_ints(3); sizes && sizes->size() == axes.size()) {
      out_sub.emplace();
      for (int64_t v : *sizes) out_sub->push_back(v >= 0 ? Dim::of(v) : Dim::unknown());
    }
  } else if (const auto sc = floats(ctx, ctx.opset() >= 11 ? 2 : 1)) {
    out_sub = scaled(sub, *sc);
  }
  if (!out_sub) return ctx.set_rank(0, elem, r);
  Dims out = *x;
  for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = (*out_sub)[i];
  ctx.set(0, elem, out);
}

// Upsample: scales as an attribute (before opset 9) or input 1.
void upsample(Context& ctx) {
  const auto x = ctx.shape(0);
  const DType elem = ctx.elem(0);
  if (!x) return ctx.set_elem(0, elem);
  std::optional<std::vector<double>> sc;
  if (ctx.opset() < 9) {
    if (const ir::Attribute* a = ctx.attr("scales"); a && a->type == ir::Attribute::Type::Floats)
      sc = std::vector<double>(a->floats.begin(), a->floats.end());
  } else {
    sc = floats(ctx, 1);
  }
  const auto out = sc ? scaled(*x, *sc) : std::nullopt;
  if (out) ctx.set(0, elem, *out);
  else
    ctx.set_rank(0, elem, int(x->size()));
}

void qlinear_add(Context& ctx) {
  // A, a_scale, a_zp, B, b_scale, b_zp, c_scale, c_zp.
  std::optional<Dims> shape = Dims{};
  for (size_t i : {size_t{0}, size_t{3}}) {
    const auto s = ctx.shape(i);
    shape = s && shape ? broadcast(*shape, *s) : std::nullopt;
  }
  const DType elem = ctx.has_input(7) ? ctx.elem(7) : ctx.elem(0);
  if (shape) ctx.set(0, elem, *shape);
  else
    ctx.set_elem(0, elem);
}

}  // namespace

PI_INFER_RULE("", Conv, conv);
PI_INFER_RULE("", Resize, resize);
PI_INFER_RULE("", Upsample, upsample);
PI_INFER_RULE("", ConvInteger, conv_integer);
PI_INFER_RULE("", QLinearConv, qlinear_conv);
PI_INFER_RULE("", ConvTranspose, conv_transpose);
// DeformConv's Y is Conv's: [N, M, output sizes of the window over X].
PI_INFER_RULE("", DeformConv, conv);
PI_INFER_RULE("", MaxPool, pool);
PI_INFER_RULE("", AveragePool, pool);
PI_INFER_RULE("", LpPool, pool);
PI_INFER_RULE("", GlobalAveragePool, global_pool);
PI_INFER_RULE("", GlobalMaxPool, global_pool);
PI_INFER_RULE("", GlobalLpPool, global_pool);
PI_INFER_RULE("", BatchNormalization, batch_norm);
PI_INFER_RULE("", LayerNormalization, layer_norm);
PI_INFER_RULE("ai.polyinfer", LayerNormalization, layer_norm);
PI_INFER_RULE("ai.polyinfer", FusedConv, conv);
PI_INFER_RULE("ai.polyinfer", NhwcFusedConv, nhwc_conv);
PI_INFER_RULE("ai.polyinfer", NhwcQLinearConv, nhwc_qlinear_conv);
PI_INFER_RULE("ai.polyinfer", QLinearConvAdd, qconv_add);
PI_INFER_RULE("ai.polyinfer", NhwcQLinearConvAdd, nhwc_qconv_add);
PI_INFER_RULE("ai.polyinfer", NhwcMaxPool, nhwc_pool);
PI_INFER_RULE("ai.polyinfer", NhwcAveragePool, nhwc_pool);
PI_INFER_RULE("ai.polyinfer", NhwcGlobalAveragePool, nhwc_global_pool);
PI_INFER_RULE("ai.polyinfer", NhwcGlobalMaxPool, nhwc_global_pool);
PI_INFER_RULE("ai.polyinfer", NhwcPointwiseDepthwiseConv, pointwise_depthwise);
PI_INFER_RULE("ai.polyinfer", ChannelAffine, channel_affine);
PI_INFER_RULE("ai.polyinfer", ConcatChannelAffine, concat_channel_affine);
PI_INFER_RULE("ai.polyinfer", ConcatChannelShuffle, concat_channel_shuffle);
PI_INFER_RULE("ai.polyinfer", QLinearAdd, qlinear_add);

}  // namespace polyinfer::infer
