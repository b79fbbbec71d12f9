// com.microsoft GroupQueryAttention: causal attention with a key/value cache and fewer key/value
// heads than query heads, as onnxruntime-genai's decoders use it.
//
//   query [B, S, N*H] with key and value [B, S, Nk*H], or packed [B, S, (N + 2 Nk) * H]
//   past_key, past_value [B, Nk, Pbuf, H] (BNSH; Pbuf may be the whole buffer)
//   seqlens_k [B] (int32): tokens in the cache after this step, minus 1, per batch entry
//   total_sequence_length (int32 scalar): the batch's largest seqlens_k + 1
//   -> output [B, S, N*H], present_key and present_value [B, Nk, max(Pbuf, total), H]
//
// What ONNX Runtime 1.32's CPU kernel does, and this one (checked against it; see
// tests/unit/contrib_ops_test.cpp): the step is the first prompt when S == total_sequence_length;
// then entry b's S new tokens fill present rows [0, S) (right padding included) and its query i
// is at position i, attending keys [0, min(i, seqlens_k[b])]. Otherwise entry b had
// P_b = seqlens_k[b] + 1 - S tokens: present rows [0, P_b) come from past, [P_b, P_b + S) are
// the new ones, and query i at position P_b + i attends keys [0, P_b + i]. Rows past those are
// zeros. Query head n reads key/value head n / (N / Nk). Options:
//   do_rotary: Q and the new K rotated (rotary.h) at their positions — position_ids [B, S] when
//     given (in the first prompt only its first element, p0 + i for every entry), with the
//     caches cos_cache/sin_cache [max_position, rot / 2];
//   local_window_size W > 0: only the last W keys up to the query's position;
//   causal=0: every key of the entry's seqlens_k + 1;
//   softcap c > 0: scores c * tanh(scores / c); attention_bias [B or 1, N or 1, S, total] added;
//   smooth_softmax, head_sink [N]: an extra logit 0, or head_sink[n], in the softmax.
// Not implemented (refused): quantized caches (k_scale, v_scale, *_quant_type), q/k norm weights,
// query_seqlens, sliding_window_cache, the qk output.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "providers/cpu/contrib/attention_core.h"
#include "providers/cpu/contrib/contrib_util.h"
#include "providers/cpu/contrib/rotary.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::contrib {
namespace {

class GroupQueryAttentionKernel final : public Kernel {
 public:
  explicit GroupQueryAttentionKernel(const KernelInfo& info)
      : num_heads_(info.attr_int("num_heads")),
        kv_heads_(info.attr_int("kv_num_heads")),
        scale_(info.attr_float("scale", 0.0f)),
        softcap_(info.attr_float("softcap", 0.0f)),
        window_(info.attr_int("local_window_size", -1)),
        rotary_(info.attr_int("do_rotary", 0) != 0),
        interleaved_(info.attr_int("rotary_interleaved", 0) != 0),
        smooth_(info.attr_int("smooth_softmax", -1) > 0),
        causal_(info.attr_int("causal", 1) != 0),
        who_(info.node().label()) {
    if (num_heads_ <= 0 || kv_heads_ <= 0 || num_heads_ % kv_heads_ != 0)
      info.unsupported("num_heads that is not a positive multiple of kv_num_heads");
    if (info.attr_int("qk_output", 0) != 0 || info.has_output(3)) info.unsupported("qk_output");
    if (info.attr_int("sliding_window_cache", 0) != 0) info.unsupported("sliding_window_cache=1");
    if (info.attr_string("k_quant_type", "NONE") != "NONE" ||
        info.attr_string("v_quant_type", "NONE") != "NONE" || info.has_input(12) ||
        info.has_input(13))
      info.unsupported("a quantized key/value cache");
    if (info.has_input(14) || info.has_input(15)) info.unsupported("q_norm_weight/k_norm_weight");
    if (info.has_input(16)) info.unsupported("query_seqlens");
    if (!causal_ && window_ > 0) info.unsupported("local_window_size with causal=0");
  }

  void run(KernelContext& ctx) override {
    const Tensor& qt = ctx.input(0);
    PI_CHECK(qt.rank() == 3, ShapeMismatch, who_, ": query must be [batch, sequence, hidden], got ",
             shape_str(qt.shape()));
    const int64_t B = qt.shape()[0], S = qt.shape()[1], N = num_heads_, Nk = kv_heads_;
    const bool packed = !ctx.has_input(1);
    int64_t H = 0;
    if (packed) {
      PI_CHECK(!ctx.has_input(2) && qt.shape()[2] % (N + 2 * Nk) == 0, ShapeMismatch, who_,
               ": packed query's ", qt.shape()[2], " columns are not (num_heads + 2 kv_num_heads)",
               " heads");
      H = qt.shape()[2] / (N + 2 * Nk);
    } else {
      PI_CHECK(qt.shape()[2] % N == 0, ShapeMismatch, who_, ": query's hidden size ", qt.shape()[2],
               " is not a multiple of num_heads ", N);
      H = qt.shape()[2] / N;
      for (size_t i : {size_t{1}, size_t{2}}) {
        const Tensor& t = ctx.input(i);
        PI_CHECK(t.rank() == 3 && t.shape()[0] == B && t.shape()[1] == S && t.shape()[2] == Nk * H,
                 ShapeMismatch, who_, ": ", i == 1 ? "key" : "value", " has shape ",
                 shape_str(t.shape()), "; it must be [", B, ", ", S, ", ", Nk * H, "]");
      }
    }
    const int64_t qstride = packed ? (N + 2 * Nk) * H : N * H;
    const int64_t kvstride = packed ? qstride : Nk * H;
    const FloatIn qs(qt, who_, "query");
    const FloatIn ks = packed ? FloatIn() : FloatIn(ctx.input(1), who_, "key");
    const FloatIn vs = packed ? FloatIn() : FloatIn(ctx.input(2), who_, "value");
    const float* kbase = packed ? qs.data() + N * H : ks.data();
    const float* vbase = packed ? qs.data() + (N + Nk) * H : vs.data();

    int64_t Pbuf = 0;
    FloatIn pk, pv;
    if (ctx.has_input(3) || ctx.has_input(4)) {
      PI_CHECK(ctx.has_input(3) && ctx.has_input(4), InvalidArgument, who_,
               ": past_key and past_value go together");
      const Tensor& a = ctx.input(3);
      const Tensor& c = ctx.input(4);
      PI_CHECK(a.rank() == 4 && a.shape()[0] == B && a.shape()[1] == Nk && a.shape()[3] == H &&
                   c.shape() == a.shape(),
               ShapeMismatch, who_, ": past_key ", shape_str(a.shape()), " and past_value ",
               shape_str(c.shape()), " must be [", B, ", ", Nk, ", past_sequence_length, ", H, "]");
      Pbuf = a.shape()[2];
      pk = FloatIn(a, who_, "past_key");
      pv = FloatIn(c, who_, "past_value");
    }
    const Tensor& sl_t = ctx.input(5);
    PI_CHECK(sl_t.numel() == B, ShapeMismatch, who_, ": seqlens_k has shape ",
             shape_str(sl_t.shape()), "; it must hold ", B, " values");
    const std::vector<int64_t> seqlens = read_index_values(sl_t, who_, "seqlens_k");
    const Tensor& tot_t = ctx.input(6);
    PI_CHECK(tot_t.numel() == 1, ShapeMismatch, who_, ": total_sequence_length must be a scalar");
    const int64_t total = read_index_values(tot_t, who_, "total_sequence_length")[0];
    const bool prompt = S == total;
    const int64_t Tp = std::max(Pbuf, total);  // present's length
    PI_CHECK(total >= S, InvalidArgument, who_, ": total_sequence_length ", total,
             " is below the sequence length ", S);
    std::vector<int64_t> past_len(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      const int64_t tb = seqlens[b] + 1;
      past_len[b] = prompt ? 0 : tb - S;
      PI_CHECK(tb >= 1 && tb <= total && past_len[b] >= 0 && past_len[b] <= Pbuf, InvalidArgument,
               who_, ": seqlens_k[", b, "] = ", seqlens[b], " does not fit ", S,
               " new tokens after a past of ", Pbuf, " within total_sequence_length ", total);
    }

    // Rotary caches and each token's position.
    FloatIn cs, sn;
    int64_t half = 0, max_pos = 0;
    std::vector<int64_t> pos_ids;
    if (rotary_) {
      PI_CHECK(ctx.has_input(7) && ctx.has_input(8), InvalidArgument, who_,
               ": do_rotary needs cos_cache and sin_cache");
      const Tensor& c = ctx.input(7);
      PI_CHECK(c.rank() == 2 && ctx.input(8).shape() == c.shape() && 2 * c.shape()[1] <= H,
               ShapeMismatch, who_, ": cos_cache ", shape_str(c.shape()), " and sin_cache ",
               shape_str(ctx.input(8).shape()), " must be [max_position, rotary_dim / 2] with ",
               "rotary_dim <= ", H);
      half = c.shape()[1];
      max_pos = c.shape()[0];
      cs = FloatIn(c, who_, "cos_cache");
      sn = FloatIn(ctx.input(8), who_, "sin_cache");
      if (ctx.has_input(9)) {
        const Tensor& p = ctx.input(9);
        PI_CHECK(p.numel() >= (prompt ? 1 : B * S), ShapeMismatch, who_, ": position_ids ",
                 shape_str(p.shape()), " must be [", B, ", ", S, "]");
        pos_ids = read_index_values(p, who_, "position_ids");
      }
    }
    const auto position = [&](int64_t b, int64_t i) {
      if (pos_ids.empty()) return past_len[b] + i;
      return prompt ? pos_ids[0] + i : pos_ids[b * S + i];
    };

    // Present: [B, Nk, Tp, H], into the outputs when wanted.
    std::optional<FloatOut> present_k, present_v;
    std::vector<float> k_scratch, v_scratch;
    float* kp = nullptr;
    float* vp = nullptr;
    const DType dt = qt.dtype();
    if (ctx.wants_output(1)) {
      present_k.emplace(ctx, 1, dt, Shape{B, Nk, Tp, H});
      kp = present_k->data();
    } else {
      k_scratch.resize(static_cast<size_t>(B * Nk * Tp * H));
      kp = k_scratch.data();
    }
    if (ctx.wants_output(2)) {
      present_v.emplace(ctx, 2, dt, Shape{B, Nk, Tp, H});
      vp = present_v->data();
    } else {
      v_scratch.resize(static_cast<size_t>(B * Nk * Tp * H));
      vp = v_scratch.data();
    }
    std::fill(kp, kp + B * Nk * Tp * H, 0.0f);
    std::fill(vp, vp + B * Nk * Tp * H, 0.0f);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t n = 0; n < Nk; ++n) {
        const int64_t P = past_len[b];
        float* kd = kp + (b * Nk + n) * Tp * H;
        float* vd = vp + (b * Nk + n) * Tp * H;
        if (P > 0) {
          const float* ksrc = pk.data() + (b * Nk + n) * Pbuf * H;
          const float* vsrc = pv.data() + (b * Nk + n) * Pbuf * H;
          std::copy(ksrc, ksrc + P * H, kd);
          std::copy(vsrc, vsrc + P * H, vd);
        }
        for (int64_t i = 0; i < S; ++i) {
          const float* ksrc = kbase + (b * S + i) * kvstride + n * H;
          const float* vsrc = vbase + (b * S + i) * kvstride + n * H;
          float* kr = kd + (P + i) * H;
          std::copy(ksrc, ksrc + H, kr);
          std::copy(vsrc, vsrc + H, vd + (P + i) * H);
          if (rotary_) {
            const int64_t p = position(b, i);
            check_position(p, max_pos);
            rotate_head(kr, 2 * half, cs.data() + p * half, sn.data() + p * half, interleaved_);
          }
        }
      }

    const FloatIn ab = FloatIn::optional(ctx, 10, who_, "attention_bias");
    BiasRows brows;
    if (ab) brows = BiasRows(ab.data(), ctx.input(10).shape(), B, N, S, total, who_);
    SoftmaxForm form;
    form.softcap = softcap_;
    form.smooth = smooth_;
    const FloatIn sink = FloatIn::optional(ctx, 11, who_, "head_sink");
    if (sink)
      PI_CHECK(ctx.input(11).numel() == N, ShapeMismatch, who_, ": head_sink must hold ", N,
               " values");
    FloatOut y(ctx, 0, dt, {B, S, N * H});
    float* yp = y.data();
    const float scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(H));
    const int64_t group = N / Nk;
    fast::parallel_for(B * N, ctx.threads(), 1, [&](int64_t t0, int64_t t1) {
      std::vector<float> q(static_cast<size_t>(H)), scores(static_cast<size_t>(Tp));
      std::vector<float> add(static_cast<size_t>(Tp));
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t b = t / N, n = t % N, kvh = n / group;
        const float* kh = kp + (b * Nk + kvh) * Tp * H;
        const float* vh = vp + (b * Nk + kvh) * Tp * H;
        const int64_t tb = seqlens[b] + 1;
        SoftmaxForm f = form;
        if (sink) {
          f.has_sink = true;
          f.sink = sink.data()[n];
        }
        for (int64_t i = 0; i < S; ++i) {
          const float* qsrc = qs.data() + (b * S + i) * qstride + n * H;
          std::copy(qsrc, qsrc + H, q.begin());
          if (rotary_) {
            const int64_t p = position(b, i);
            rotate_head(q.data(), 2 * half, cs.data() + p * half, sn.data() + p * half,
                        interleaved_);
          }
          const int64_t p = past_len[b] + i;  // the query's place in the cache
          const int64_t hi = causal_ ? std::min(p, tb - 1) + 1 : tb;
          const int64_t lo = window_ > 0 ? std::max<int64_t>(0, p - window_ + 1) : 0;
          const float* add_row = nullptr;
          if (brows) {
            const float* br = brows.row(b, n, i);
            std::copy(br, br + std::min(hi, total), add.begin());
            add_row = add.data();
          }
          attend_row(q.data(), kh, vh, H, H, lo, hi, scale, add_row, f, scores.data(),
                     yp + (b * S + i) * N * H + n * H);
        }
      }
    });
    y.done();
    if (present_k) present_k->done();
    if (present_v) present_v->done();
  }

 private:
  void check_position(int64_t p, int64_t max_pos) const {
    PI_CHECK(p >= 0 && p < max_pos, InvalidArgument, who_, ": position ", p,
             " is outside the rotary caches' ", max_pos, " rows");
  }

  int64_t num_heads_, kv_heads_;
  float scale_, softcap_;
  int64_t window_;
  bool rotary_, interleaved_, smooth_, causal_;
  std::string who_;
};

}  // namespace

PI_MS_KERNEL(GroupQueryAttention, GroupQueryAttentionKernel);

}  // namespace polyinfer::contrib
