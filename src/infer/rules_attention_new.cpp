// Inference of the recurrent-state operators of opset 27 (LinearAttention, CausalConvWithState)
// and of ai.onnx.preview's FlexAttention. (Attention's rule is with the matrix products,
// rules_matmul.cpp.)
#include "infer/rule_util.h"

namespace polyinfer::infer {
namespace {

// dims[i] / by where known and divisible, else unknown.
Dim divided(const Dim& d, int64_t by) {
  return by > 0 && d.known() && d.value % by == 0 ? Dim::of(d.value / by) : Dim::unknown();
}

// LinearAttention: output [B, T, Hq·d_v] of the query's type; present_state [B, H_kv, d_k, d_v]
// of past_state's type, or the query's without one.
void linear_attention(Context& ctx) {
  const DType elem = ctx.elem(0);
  const DType state = ctx.has_input(3) ? ctx.elem(3) : elem;
  const int64_t hq = ctx.attr_int("q_num_heads", 0), hkv = ctx.attr_int("kv_num_heads", 0);
  const auto q = ctx.shape(0), v = ctx.shape(2);
  if (!q || !v || q->size() != 3 || v->size() != 3 || hq <= 0 || hkv <= 0) {
    ctx.set_rank(0, elem, 3);
    ctx.set_rank(1, state, 4);
    return;
  }
  const Dim dk = divided((*q)[2], hq), dv = divided((*v)[2], hkv);
  ctx.set(0, elem, {(*q)[0], (*q)[1], dv.known() ? Dim::of(dv.value * hq) : Dim::unknown()});
  ctx.set(1, state, {(*q)[0], Dim::of(hkv), dk, dv});
}

// CausalConvWithState: output as the input [B, C, L]; present_state [B, C, k - 1] with k the
// weight's last dimension.
void causal_conv_with_state(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto x = ctx.shape(0), w = ctx.shape(1);
  if (x) ctx.set(0, elem, *x);
  else
    ctx.set_rank(0, elem, 3);
  Dim carry = Dim::unknown();
  if (w && w->size() == 3 && (*w)[2].known() && (*w)[2].value >= 1)
    carry = Dim::of((*w)[2].value - 1);
  if (x && x->size() == 3) ctx.set(1, elem, {(*x)[0], (*x)[1], carry});
  else
    ctx.set_rank(1, elem, 3);
}

// FlexAttention: Y [B, Hq, L, Dv] of Q's type, from Q [B, Hq, L, E] and V [B, Hkv, S, Dv].
void flex_attention(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto q = ctx.shape(0), v = ctx.shape(2);
  if (q && v && q->size() == 4 && v->size() == 4)
    ctx.set(0, elem, {(*q)[0], (*q)[1], (*q)[2], (*v)[3]});
  else
    ctx.set_rank(0, elem, 4);
}

}  // namespace

PI_INFER_RULE("", LinearAttention, linear_attention);
PI_INFER_RULE("", CausalConvWithState, causal_conv_with_state);
PI_INFER_RULE("ai.onnx.preview", FlexAttention, flex_attention);

}  // namespace polyinfer::infer
