// Inference of ONNX Runtime's com.microsoft operators that polyinfer's CPU provider runs
// (src/providers/cpu/contrib/), and of SimplifiedLayerNormalization, which ONNX Runtime
// registers in the default domain. Shapes follow ONNX Runtime's schemas (its
// docs/ContribOperators.md); what depends on values not known here is left unknown.
#include "infer/rule_util.h"

namespace polyinfer::infer {
namespace {

constexpr const char* kMs = "com.microsoft";

// A known dimension's value divided by n, where it divides; else unknown.
Dim div_dim(const Dim& d, int64_t n) {
  return d.known() && n > 0 && d.value % n == 0 ? Dim::of(d.value / n) : Dim::unknown();
}
Dim mul_dim(const Dim& d, int64_t n) {
  return d.known() && n > 0 ? Dim::of(d.value * n) : Dim::unknown();
}
// An attribute's count (heads) as a dimension: unknown where absent.
Dim count(int64_t n) { return n > 0 ? Dim::of(n) : Dim::unknown(); }
Dim add_dims(const Dim& a, const Dim& b) {
  if (a.known() && b.known()) return Dim::of(a.value + b.value);
  if (a.known() && a.value == 0) return b;
  if (b.known() && b.value == 0) return a;
  return Dim::unknown();
}

// Skip(Simplified)LayerNormalization: output and input_skip_bias_sum as input; mean and
// inv_std_var float32 with the last dimension 1.
void skip_layer_norm(Context& ctx) {
  ctx.set_like(0, 0);
  ctx.set_like(3, 0);
  const auto x = ctx.shape(0);
  if (!x || x->empty()) {
    ctx.set_elem(1, DType::Float32);
    ctx.set_elem(2, DType::Float32);
    return;
  }
  Dims stat = *x;
  stat.back() = Dim::of(1);
  ctx.set(1, DType::Float32, stat);
  ctx.set(2, DType::Float32, stat);
}

// SimplifiedLayerNormalization: Y of scale's dtype and X's shape; inv_std_var float32 with the
// normalized axes 1.
void simplified_layer_norm(Context& ctx) {
  const DType elem = ctx.elem(1) != DType::Undefined ? ctx.elem(1) : ctx.elem(0);
  const auto x = ctx.shape(0);
  if (!x) {
    ctx.set_elem(0, elem);
    ctx.set_elem(1, DType::Float32);
    return;
  }
  ctx.set(0, elem, *x);
  const int64_t r = static_cast<int64_t>(x->size());
  const auto axis = axis_index(ctx.attr_int("axis", -1), r);
  if (!axis) return ctx.set_elem(1, DType::Float32);
  Dims stat = *x;
  for (int64_t i = *axis; i < r; ++i) stat[i] = Dim::of(1);
  ctx.set(1, DType::Float32, stat);
}

// EmbedLayerNormalization: output and embedding_sum [B, S, H] of the tables' dtype; mask_index
// int32 [B].
void embed_layer_norm(Context& ctx) {
  const DType elem = ctx.elem(2);
  const auto ids = ctx.shape(0), word = ctx.shape(2);
  if (ids && ids->size() == 2 && word && word->size() == 2) {
    const Dims out{(*ids)[0], (*ids)[1], (*word)[1]};
    ctx.set(0, elem, out);
    ctx.set(2, elem, out);
    ctx.set(1, DType::Int32, {(*ids)[0]});
  } else {
    ctx.set_rank(0, elem, 3);
    ctx.set_rank(2, elem, 3);
    ctx.set_rank(1, DType::Int32, 1);
  }
}

// Attention: output [B, S, Dv]; present [2, B, N, P + S, H].
void ms_attention(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto x = ctx.shape(0), w = ctx.shape(1);
  const int64_t n = ctx.attr_int("num_heads", 0);
  if (!x || x->size() != 3) {
    ctx.set_rank(0, elem, 3);
    ctx.set_rank(1, elem, 5);
    return;
  }
  Dim dq = Dim::unknown(), dv = Dim::unknown();
  if (const auto sizes = ctx.attr_ints("qkv_hidden_sizes"); sizes && sizes->size() == 3) {
    dq = Dim::of((*sizes)[0]);
    dv = Dim::of((*sizes)[2]);
  } else if (w && w->size() == 2) {
    dq = dv = div_dim((*w)[1], 3);
  }
  ctx.set(0, elem, {(*x)[0], (*x)[1], dv});
  Dim past = Dim::of(0);
  if (ctx.has_input(4)) {
    const auto p = ctx.shape(4);
    past = p && p->size() == 5 ? (*p)[3] : Dim::unknown();
  }
  ctx.set(1, elem, {Dim::of(2), (*x)[0], count(n), add_dims(past, (*x)[1]), div_dim(dq, n)});
}

// MultiHeadAttention: output [B, S, Dv]; present_key/present_value [B, N, P + L, H].
void multi_head_attention(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto q = ctx.shape(0);
  const int64_t n = ctx.attr_int("num_heads", 0);
  if (!q || (q->size() != 3 && q->size() != 5)) {
    ctx.set_rank(0, elem, 3);
    ctx.set_rank(1, elem, 4);
    ctx.set_rank(2, elem, 4);
    return;
  }
  const Dim b = (*q)[0], s = (*q)[1];
  Dim h = q->size() == 5 ? (*q)[4] : div_dim((*q)[2], n);
  Dim dv = q->size() == 5 ? mul_dim((*q)[4], n) : (*q)[2];
  Dim hv = h, kv_len = s;
  const auto k = ctx.has_input(1) ? ctx.shape(1) : std::nullopt;
  const auto v = ctx.has_input(2) ? ctx.shape(2) : std::nullopt;
  if (ctx.has_input(1)) {
    kv_len = k && k->size() >= 3 ? (*k)[k->size() == 4 ? 2 : 1] : Dim::unknown();
    if (v && v->size() == 3) {
      dv = (*v)[2];
      hv = div_dim(dv, n);
    } else if (v && v->size() == 4) {
      hv = (*v)[3];
      dv = mul_dim(hv, n);
    } else if (!ctx.has_input(2) && k && k->size() == 5) {
      hv = (*k)[4];
      dv = mul_dim(hv, n);
    } else if (ctx.has_input(2)) {
      dv = hv = Dim::unknown();
    }
  }
  ctx.set(0, elem, {b, s, dv});
  Dim past = Dim::of(0);
  if (ctx.has_input(6)) {
    const auto p = ctx.shape(6);
    past = p && p->size() == 4 ? (*p)[2] : Dim::unknown();
  }
  const Dim total = add_dims(past, kv_len);
  ctx.set(1, elem, {b, count(n), total, h});
  ctx.set(2, elem, {b, count(n), total, hv});
}

// GroupQueryAttention: output [B, S, N * H]; present_key/present_value
// [B, Nk, max(past length, total_sequence_length), H].
void group_query_attention(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto q = ctx.shape(0);
  const int64_t n = ctx.attr_int("num_heads", 0), nk = ctx.attr_int("kv_num_heads", 0);
  if (!q || q->size() != 3) {
    ctx.set_rank(0, elem, 3);
    ctx.set_rank(1, elem, 4);
    ctx.set_rank(2, elem, 4);
    return;
  }
  const Dim h = ctx.has_input(1) ? div_dim((*q)[2], n) : div_dim((*q)[2], n + 2 * nk);
  ctx.set(0, elem, {(*q)[0], (*q)[1], mul_dim(h, n)});
  Dim len = Dim::unknown();
  const auto total = ctx.known_ints(6);
  const auto past = ctx.has_input(3) ? ctx.shape(3) : std::nullopt;
  if (total && total->size() == 1) {
    if (!ctx.has_input(3)) {
      len = Dim::of((*total)[0]);
    } else if (past && past->size() == 4 && (*past)[2].known()) {
      len = Dim::of(std::max((*past)[2].value, (*total)[0]));
    }
  }
  ctx.set(1, elem, {(*q)[0], count(nk), len, h});
  ctx.set(2, elem, {(*q)[0], count(nk), len, h});
}

// MatMulNBits: A's dtype, A's shape with the last dimension N.
void matmul_nbits(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto a = ctx.shape(0);
  if (!a || a->empty()) return ctx.set_elem(0, elem);
  Dims out = *a;
  out.back() = Dim::of(ctx.attr_int("N", 0));
  if (ctx.attr_int("N", 0) <= 0) out.back() = Dim::unknown();
  ctx.set(0, elem, out);
}

// GatherBlockQuantized (uint8 data on gather_axis 0): scales' dtype; indices' shape, then
// data's dimensions after the first with the packed last one unpacked.
void gather_block_quantized(Context& ctx) {
  const DType elem = ctx.elem(2);
  const auto d = ctx.shape(0), idx = ctx.shape(1);
  if (!d || !idx || d->size() < 2 || ctx.attr_int("gather_axis", 0) != 0)
    return ctx.set_elem(0, elem);
  Dims out = *idx;
  out.insert(out.end(), d->begin() + 1, d->end());
  const int64_t bits = ctx.attr_int("bits", 4);
  if (ctx.elem(0) == DType::UInt8 && (bits == 2 || bits == 4 || bits == 8))
    out.back() = mul_dim(out.back(), 8 / bits);
  else if (ctx.elem(0) != DType::UInt8)
    out.back() = Dim::unknown();
  ctx.set(0, elem, out);
}

}  // namespace

PI_INFER_RULE(kMs, SkipLayerNormalization, skip_layer_norm);
PI_INFER_RULE(kMs, SkipSimplifiedLayerNormalization, skip_layer_norm);
PI_INFER_RULE(kMs, SimplifiedLayerNormalization, simplified_layer_norm);
PI_INFER_RULE("", SimplifiedLayerNormalization, simplified_layer_norm);
PI_INFER_RULE(kMs, FastGelu, same_as_input);
PI_INFER_RULE(kMs, BiasGelu, same_as_input);
PI_INFER_RULE(kMs, Gelu, same_as_input);
PI_INFER_RULE(kMs, QuickGelu, same_as_input);
PI_INFER_RULE(kMs, BiasAdd, same_as_input);
PI_INFER_RULE(kMs, RotaryEmbedding, same_as_input);
PI_INFER_RULE(kMs, EmbedLayerNormalization, embed_layer_norm);
PI_INFER_RULE(kMs, Attention, ms_attention);
PI_INFER_RULE(kMs, MultiHeadAttention, multi_head_attention);
PI_INFER_RULE(kMs, GroupQueryAttention, group_query_attention);
PI_INFER_RULE(kMs, MatMulNBits, matmul_nbits);
PI_INFER_RULE(kMs, GatherBlockQuantized, gather_block_quantized);

}  // namespace polyinfer::infer
