// Inference of the matrix products (MatMul's numpy rules, Gemm, their integer, quantized and
// fused forms), attention, and quantization.
#include "infer/rule_util.h"

namespace polyinfer::infer {
namespace {

// numpy.matmul's shape of A @ B: 1-D operands promoted and their dimension dropped again, the
// leading dimensions broadcast.
std::optional<Dims> matmul_shape(const Dims& a, const Dims& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  Dims x = a, y = b;
  if (x.size() == 1) x.insert(x.begin(), Dim::of(1));
  if (y.size() == 1) y.push_back(Dim::of(1));
  const Dims bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
  auto batch = broadcast(bx, by);
  if (!batch) return std::nullopt;
  const Dim& ka = x.back();
  const Dim& kb = y[y.size() - 2];
  if (ka.known() && kb.known() && ka.value != kb.value) return std::nullopt;
  Dims out = *batch;
  if (a.size() > 1) out.push_back(x[x.size() - 2]);
  if (b.size() > 1) out.push_back(y.back());
  return out;
}

void matmul_as(Context& ctx, size_t a, size_t b, DType elem) {
  const auto sa = ctx.shape(a), sb = ctx.shape(b);
  const auto out = sa && sb ? matmul_shape(*sa, *sb) : std::nullopt;
  if (out) ctx.set(0, elem, *out);
  else
    ctx.set_elem(0, elem);
}

void matmul(Context& ctx) { matmul_as(ctx, 0, 1, ctx.elem(0)); }
void matmul_integer(Context& ctx) { matmul_as(ctx, 0, 1, DType::Int32); }
// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): y_zp's type.
void qlinear_matmul(Context& ctx) { matmul_as(ctx, 0, 3, ctx.elem(7)); }

// Gemm: [M, N] from A (transA) and B (transB).
void gemm_as(Context& ctx, size_t b_input, DType elem) {
  const auto a = ctx.shape(0), b = ctx.shape(b_input);
  if (!a || !b || a->size() != 2 || b->size() != 2) return ctx.set_rank(0, elem, 2);
  const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  ctx.set(0, elem, {(*a)[ta ? 1 : 0], (*b)[tb ? 0 : 1]});
}
void gemm(Context& ctx) { gemm_as(ctx, 1, ctx.elem(0)); }
// QLinearGemm(A, a_scale, a_zp, B, b_scale, b_zp, [y_scale, y_zp], [bias]): y_zp's type, or
// float32 without the output's quantization.
void qlinear_gemm(Context& ctx) {
  gemm_as(ctx, 3, ctx.has_input(7) ? ctx.elem(7) : DType::Float32);
}

// Attention input i as [B, H, S, D]: 4-D as it is, 3-D [B, S, H·D] split into `heads` heads.
std::optional<Dims> attention_heads(const Context& ctx, size_t i, int64_t heads) {
  const auto s = ctx.shape(i);
  if (!s || s->size() == 4) return s;
  if (s->size() != 3 || heads <= 0) return std::nullopt;
  const Dim& hd = (*s)[2];
  return Dims{(*s)[0], Dim::of(heads), (*s)[1],
              hd.known() && hd.value % heads == 0 ? Dim::of(hd.value / heads) : Dim::unknown()};
}

// Attention: Q [B, Sq, Hq·D] or [B, Hq, Sq, D]; Y as Q with V's head size; the present key and
// value caches (outputs 1, 2) [B, H_kv, past + S_kv, D] of K's and V's types; the scores (3)
// [B, Hq, Sq, past + S_kv] of Q's.
void attention(Context& ctx) {
  const int64_t heads_q = ctx.attr_int("q_num_heads", 0);
  const int64_t heads_kv = ctx.attr_int("kv_num_heads", 0);
  const auto kh = attention_heads(ctx, 1, heads_kv), vh = attention_heads(ctx, 2, heads_kv);
  const auto qh = attention_heads(ctx, 0, heads_q);
  Dim total = kh ? (*kh)[2] : Dim::unknown();
  if (ctx.has_input(4)) {
    const auto p = ctx.shape(4);
    total = p && p->size() == 4 && (*p)[2].known() && total.known()
                ? Dim::of((*p)[2].value + total.value)
                : Dim::unknown();
  }
  // present_key (output 1) is K's (input 1) type, present_value (2) V's (2).
  for (const auto& [o, h] : {std::pair{size_t(1), kh}, std::pair{size_t(2), vh}}) {
    if (!h) {
      ctx.set_elem(o, ctx.elem(o));
      continue;
    }
    Dims cache = *h;
    cache[2] = total;
    ctx.set(o, ctx.elem(o), cache);
  }
  if (qh) ctx.set(3, ctx.elem(0), {(*qh)[0], (*qh)[1], (*qh)[2], total});
  else
    ctx.set_elem(3, ctx.elem(0));

  const auto q = ctx.shape(0), v = ctx.shape(2);
  const DType elem = ctx.elem(0);
  if (!q || !v || q->size() != v->size()) return ctx.set_elem(0, elem);
  Dims out = *q;
  if (q->size() == 4) {
    out[3] = (*v)[3];
  } else if (q->size() == 3) {
    const int64_t hq = ctx.attr_int("q_num_heads", 0), hkv = ctx.attr_int("kv_num_heads", 0);
    const Dim& vd = (*v)[2];
    out[2] = hq > 0 && hkv > 0 && vd.known() && vd.value % hkv == 0 ? Dim::of(vd.value / hkv * hq)
                                                                    : Dim::unknown();
  } else {
    return ctx.set_elem(0, elem);
  }
  ctx.set(0, elem, out);
}

// ---- quantization ----

// QuantizeLinear: X's shape; y_zero_point's type, output_dtype (21 on), or uint8.
void quantize_linear(Context& ctx) {
  DType elem = DType::UInt8;
  if (ctx.has_input(2) && ctx.elem(2) != DType::Undefined) elem = ctx.elem(2);
  else if (const int64_t t = ctx.attr_int("output_dtype", 0); is_tensor_dtype_code(t))
    elem = static_cast<DType>(t);
  if (const auto s = ctx.shape(0)) ctx.set(0, elem, *s);
  else
    ctx.set_elem(0, elem);
}

// DequantizeLinear: X's shape; output_dtype (23 on), else x_scale's type (float32 before 19).
void dequantize_linear(Context& ctx) {
  DType elem = DType::Float32;
  if (const int64_t t = ctx.attr_int("output_dtype", 0); is_tensor_dtype_code(t))
    elem = static_cast<DType>(t);
  else if (ctx.opset() >= 19 && ctx.elem(1) != DType::Undefined)
    elem = ctx.elem(1);
  if (const auto s = ctx.shape(0)) ctx.set(0, elem, *s);
  else
    ctx.set_elem(0, elem);
}

void dynamic_quantize_linear(Context& ctx) {
  if (const auto s = ctx.shape(0)) ctx.set(0, DType::UInt8, *s);
  else
    ctx.set_elem(0, DType::UInt8);
  ctx.set(1, DType::Float32, {});
  ctx.set(2, DType::UInt8, {});
}

}  // namespace

PI_INFER_RULE("", MatMul, matmul);
PI_INFER_RULE("", MatMulInteger, matmul_integer);
PI_INFER_RULE("", QLinearMatMul, qlinear_matmul);
PI_INFER_RULE("", Gemm, gemm);
PI_INFER_RULE("ai.polyinfer", FusedMatMul, matmul);
PI_INFER_RULE("ai.polyinfer", FusedGemm, gemm);
PI_INFER_RULE("ai.polyinfer", QLinearGemm, qlinear_gemm);
PI_INFER_RULE("", Attention, attention);
PI_INFER_RULE("ai.polyinfer", Attention, attention);
PI_INFER_RULE("", QuantizeLinear, quantize_linear);
PI_INFER_RULE("", DequantizeLinear, dequantize_linear);
PI_INFER_RULE("", DynamicQuantizeLinear, dynamic_quantize_linear);

}  // namespace polyinfer::infer
