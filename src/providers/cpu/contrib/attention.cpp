// com.microsoft Attention (the fused-QKV form ONNX Runtime's BERT and GPT-2 fusions write) and
// MultiHeadAttention.
//
// Attention(input [B, S, E], weights [E, Dq + Dk + Dv], bias?, mask_index?, past?,
//           attention_bias?) -> output [B, S, Dv], present?
//   Q, K, V = input x weights + bias, split by qkv_hidden_sizes (or in three equal parts) and
//   into num_heads heads; past [2, B, N, P, H] goes before K and V (present [2, B, N, P + S, H]).
// MultiHeadAttention(query [B, S, D], key?, value?, bias?, key_padding_mask?, attention_bias?,
//                    past_key?, past_value?) -> output [B, S, Dv], present_key?, present_value?
//   key/value [B, L, D] and [B, L, Dv] (bias added, past_key/past_value [B, N, P, H] before
//   them), or already split into heads [B, N, L, H] (used as they are: no bias, no past); or
//   packed: query [B, S, N, 3, H] (Q, K, V) or key [B, L, N, 2, H] (K, V) with value absent.
//
// Scores = scale * Q K^T (scale defaults to 1 / sqrt(H)) + mask + attention_bias, softmax over
// keys, times V. Masks add mask_filter_value (-10000) rather than -inf, as ONNX Runtime's CPU
// kernels do (attention_core.h KeyMask); unidirectional masks key j for query i where
// j > P + i the same way. Not implemented (refused when the node asks): a 4-D or [3B + 2]
// mask_index, past_present_share_buffer, do_rotary, MultiHeadAttention's qk output,
// past_sequence_length and cache_indirection.
//
// The projection of Attention is the packed GEMM on the fast tier (constant float32 weights,
// AVX2), a plain loop on the reference tier; heads are tasks split over the threads.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/unaligned.h"
#include "providers/cpu/contrib/attention_core.h"
#include "providers/cpu/contrib/contrib_util.h"
#include "providers/cpu/contrib/projection.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::contrib {
namespace {

// The heads' inputs gathered into one layout, what both operators' attention runs on.
struct Heads {
  int64_t B = 0, N = 0, S = 0, P = 0, T = 0, H = 0, Hv = 0;
  const float* q = nullptr;  // query row (b, i) of head n at q + (b * S + i) * q_stride + n * H
  int64_t q_stride = 0;
  float* k = nullptr;  // [B, N, T, H]
  float* v = nullptr;  // [B, N, T, Hv]
};

// Copies rows of a [B, L, N, h] source (row stride `stride`, head n at column n * h, plus
// bias[n * h ...] where given) into [B, N, T, h] at key positions [P, P + L).
void scatter_heads(const float* src, int64_t stride, const float* bias, int64_t B, int64_t L,
                   int64_t N, int64_t h, int64_t P, int64_t T, float* dst) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < L; ++j)
      for (int64_t n = 0; n < N; ++n) {
        const float* s = src + (b * L + j) * stride + n * h;
        float* d = dst + ((b * N + n) * T + P + j) * h;
        for (int64_t e = 0; e < h; ++e) d[e] = s[e] + (bias ? bias[n * h + e] : 0.0f);
      }
}

// past [B, N, P, h] into positions [0, P) of [B, N, T, h].
void copy_past(const float* past, int64_t B, int64_t N, int64_t P, int64_t h, int64_t T,
               float* dst) {
  for (int64_t bn = 0; bn < B * N; ++bn)
    std::copy(past + bn * P * h, past + (bn + 1) * P * h, dst + bn * T * h);
}

// output [B, S, N * Hv] from the heads: for each row, additive mask + causal + bias, then
// attend_row.
void run_heads(const Heads& hd, float scale, const KeyMask& mask, const BiasRows& bias, bool causal,
               float filter, int threads, float* out) {
  const int64_t B = hd.B, N = hd.N, S = hd.S, T = hd.T;
  fast::parallel_for(B * N, threads, 1, [&](int64_t t0, int64_t t1) {
    std::vector<float> add(static_cast<size_t>(T)), scores(static_cast<size_t>(T));
    const bool any_add = mask || bias || causal;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / N, n = t % N;
      const float* kh = hd.k + t * T * hd.H;
      const float* vh = hd.v + t * T * hd.Hv;
      for (int64_t i = 0; i < S; ++i) {
        if (any_add) {
          if (mask) {
            mask.fill(b, i, add.data());
          } else {
            std::fill(add.begin(), add.end(), 0.0f);
          }
          if (causal)
            for (int64_t j = hd.P + i + 1; j < T; ++j) add[j] += filter;
          if (bias) {
            const float* br = bias.row(b, n, i);
            for (int64_t j = 0; j < T; ++j) add[j] += br[j];
          }
        }
        const float* q = hd.q + (b * S + i) * hd.q_stride + n * hd.H;
        attend_row(q, kh, vh, hd.H, hd.Hv, 0, T, scale, any_add ? add.data() : nullptr,
                   SoftmaxForm{}, scores.data(), out + (b * S + i) * N * hd.Hv + n * hd.Hv);
      }
    }
  });
}

// ---- Attention ----

class AttentionKernel : public Kernel {
 public:
  AttentionKernel(const KernelInfo& info, bool fast)
      : num_heads_(info.attr_int("num_heads")),
        unidirectional_(info.attr_int("unidirectional", 0) != 0),
        filter_(info.attr_float("mask_filter_value", -10000.0f)),
        scale_(info.attr_float("scale", 0.0f)),
        qkv_sizes_(info.attr_ints("qkv_hidden_sizes")),
        who_(info.node().label()) {
    if (num_heads_ <= 0) info.unsupported("num_heads <= 0");
    if (info.attr_int("do_rotary", 0) != 0) info.unsupported("do_rotary=1");
    if (info.attr_int("past_present_share_buffer", 0) != 0)
      info.unsupported("past_present_share_buffer=1");
    if (info.has_input(6)) info.unsupported("past_sequence_length");
    if (!qkv_sizes_.empty() && qkv_sizes_.size() != 3)
      info.unsupported("qkv_hidden_sizes of other than 3 values");
    const Tensor* w = info.constant_input(1);
    const Tensor* bias = info.has_input(2) ? info.constant_input(2) : nullptr;
    const bool const_w = w && w->dtype() == DType::Float32 && w->rank() == 2 &&
                         (!info.has_input(2) || (bias && bias->dtype() == DType::Float32 &&
                                                 bias->numel() == w->shape()[1]));
    if (fast && !const_w)
      info.unsupported("the packed projection: weights and bias that are not float32 constants");
    if (const_w) {
      std::vector<float> b;
      if (bias) {
        b.resize(static_cast<size_t>(bias->numel()));
        const UnalignedFloats bf(bias->peek_bytes());
        for (size_t i = 0; i < b.size(); ++i) b[i] = bf[static_cast<int64_t>(i)];
      }
      proj_.emplace(info, w->peek_bytes(), w->shape()[0], w->shape()[1], bias ? b.data() : nullptr,
                    fast, "Attention");
    }
  }
  bool prepacked(size_t i) const override { return proj_ && (i == 1 || i == 2); }
  std::string impl() const override {
    return proj_ && proj_->packed() ? std::string("fast:") + proj_->isa() + "-packed-qkv"
                                    : "reference";
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() == 3, ShapeMismatch, who_, ": input must be [batch, sequence, hidden], got ",
             shape_str(x.shape()));
    const int64_t B = x.shape()[0], S = x.shape()[1], E = x.shape()[2];
    const FloatIn xs(x, who_, "input");
    // The projection: [B * S, D].
    std::vector<float> qkv;
    int64_t D = 0;
    if (proj_) {
      PI_CHECK(proj_->K() == E, ShapeMismatch, who_, ": input's hidden size ", E,
               " does not match weights' ", proj_->K(), " rows");
      D = proj_->N();
      qkv.resize(static_cast<size_t>(B * S * D));
      proj_->run(xs.data(), qkv.data(), B * S, ctx.threads());
    } else {
      const Tensor& w = ctx.input(1);
      PI_CHECK(w.rank() == 2 && w.shape()[0] == E, ShapeMismatch, who_, ": weights ",
               shape_str(w.shape()), " must be [", E, ", Dq + Dk + Dv]");
      D = w.shape()[1];
      const FloatIn ws(w, who_, "weights");
      const FloatIn bs = FloatIn::optional(ctx, 2, who_, "bias");
      if (bs)
        PI_CHECK(ctx.input(2).numel() == D, ShapeMismatch, who_, ": bias has ",
                 ctx.input(2).numel(), " values; it must have ", D);
      qkv.resize(static_cast<size_t>(B * S * D));
      Projection::plain(xs.data(), ws.data(), bs.data(), qkv.data(), B * S, E, D, ctx.threads());
    }
    const int64_t N = num_heads_;
    int64_t Dq = D / 3, Dk = D / 3, Dv = D / 3;
    if (!qkv_sizes_.empty()) {
      Dq = qkv_sizes_[0];
      Dk = qkv_sizes_[1];
      Dv = qkv_sizes_[2];
    }
    PI_CHECK(Dq + Dk + Dv == D && (qkv_sizes_.size() == 3 || D % 3 == 0) && Dq == Dk &&
                 Dq % N == 0 && Dv % N == 0 && Dq > 0 && Dv > 0,
             ShapeMismatch, who_, ": the weights' ", D,
             " columns do not split into Q, K and V of sizes that num_heads ", N,
             " divides (set qkv_hidden_sizes)");
    const int64_t H = Dq / N, Hv = Dv / N;

    int64_t P = 0;
    FloatIn past;
    if (ctx.has_input(4)) {
      const Tensor& pt = ctx.input(4);
      PI_CHECK(pt.rank() == 5 && pt.shape()[0] == 2 && pt.shape()[1] == B && pt.shape()[2] == N &&
                   pt.shape()[4] == H && H == Hv,
               ShapeMismatch, who_, ": past has shape ", shape_str(pt.shape()), "; it must be [2, ",
               B, ", ", N, ", past_sequence_length, ", H, "] (and Q, K, V of one head size)");
      P = pt.shape()[3];
      past = FloatIn(pt, who_, "past");
    }
    const int64_t T = P + S;
    // K and V: into present when it is wanted ([2, B, N, T, H]), else scratch.
    std::optional<FloatOut> present;
    std::vector<float> kv_scratch;
    float* kv = nullptr;
    if (ctx.wants_output(1)) {
      PI_CHECK(H == Hv, ShapeMismatch, who_, ": present needs Q, K and V of one head size");
      present.emplace(ctx, 1, x.dtype(), Shape{2, B, N, T, H});
      kv = present->data();
    } else {
      kv_scratch.resize(static_cast<size_t>(B * N * T * (H + Hv)));
      kv = kv_scratch.data();
    }
    Heads hd{B, N, S, P, T, H, Hv, qkv.data(), D, kv, kv + B * N * T * H};
    if (P > 0) {
      copy_past(past.data(), B, N, P, H, T, hd.k);
      copy_past(past.data() + B * N * P * H, B, N, P, Hv, T, hd.v);
    }
    scatter_heads(qkv.data() + Dq, D, nullptr, B, S, N, H, P, T, hd.k);
    scatter_heads(qkv.data() + Dq + Dk, D, nullptr, B, S, N, Hv, P, T, hd.v);

    KeyMask mask;
    if (ctx.has_input(3)) mask = KeyMask(ctx.input(3), B, S, T, filter_, who_, "mask_index");
    FloatIn ab = FloatIn::optional(ctx, 5, who_, "attention_bias");
    BiasRows bias;
    if (ab) bias = BiasRows(ab.data(), ctx.input(5).shape(), B, N, S, T, who_);
    FloatOut y(ctx, 0, x.dtype(), {B, S, N * Hv});
    const float scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(H));
    run_heads(hd, scale, mask, bias, unidirectional_, filter_, ctx.threads(), y.data());
    y.done();
    if (present) present->done();
  }

 private:
  int64_t num_heads_;
  bool unidirectional_;
  float filter_, scale_;
  std::vector<int64_t> qkv_sizes_;
  std::string who_;
  std::optional<Projection> proj_;
};

class AttentionRef final : public AttentionKernel {
 public:
  explicit AttentionRef(const KernelInfo& info) : AttentionKernel(info, false) {}
};
class AttentionFast final : public AttentionKernel {
 public:
  explicit AttentionFast(const KernelInfo& info) : AttentionKernel(info, true) {}
};

// ---- MultiHeadAttention ----

class MultiHeadAttentionKernel final : public Kernel {
 public:
  explicit MultiHeadAttentionKernel(const KernelInfo& info)
      : num_heads_(info.attr_int("num_heads")),
        unidirectional_(info.attr_int("unidirectional", 0) != 0),
        filter_(info.attr_float("mask_filter_value", -10000.0f)),
        scale_(info.attr_float("scale", 0.0f)),
        who_(info.node().label()) {
    if (num_heads_ <= 0) info.unsupported("num_heads <= 0");
    if (info.has_output(3)) info.unsupported("the qk output");
    if (info.has_input(8)) info.unsupported("past_sequence_length");
    if (info.has_input(9)) info.unsupported("cache_indirection");
  }

  void run(KernelContext& ctx) override {
    const Tensor& qt = ctx.input(0);
    const int64_t N = num_heads_;
    const bool packed_qkv = qt.rank() == 5;
    PI_CHECK(qt.rank() == 3 || (packed_qkv && qt.shape()[2] == N && qt.shape()[3] == 3 &&
                                !ctx.has_input(1) && !ctx.has_input(2)),
             ShapeMismatch, who_, ": query has shape ", shape_str(qt.shape()),
             "; it must be [batch, sequence, hidden] or packed [batch, sequence, ", N,
             ", 3, head_size] (with key and value absent)");
    const int64_t B = qt.shape()[0], S = qt.shape()[1];
    const int64_t D = packed_qkv ? N * qt.shape()[4] : qt.shape()[2];
    PI_CHECK(D % N == 0, ShapeMismatch, who_, ": hidden size ", D, " is not a multiple of ",
             "num_heads ", N);
    const int64_t H = D / N;
    const FloatIn qs(qt, who_, "query");
    FloatIn ks, vs;
    enum class KvForm { Packed3, Rows, PackedKv, Heads } form = KvForm::Packed3;
    int64_t L = S, Hv = H;
    if (!packed_qkv) {
      const Tensor& kt = ctx.input(1);
      ks = FloatIn(kt, who_, "key");
      if (kt.rank() == 5) {
        PI_CHECK(kt.shape()[0] == B && kt.shape()[2] == N && kt.shape()[3] == 2 &&
                     kt.shape()[4] == H && !ctx.has_input(2),
                 ShapeMismatch, who_, ": packed key ", shape_str(kt.shape()), " must be [", B,
                 ", kv_sequence_length, ", N, ", 2, ", H, "] with value absent");
        form = KvForm::PackedKv;
        L = kt.shape()[1];
      } else {
        const Tensor& vt = ctx.input(2);
        vs = FloatIn(vt, who_, "value");
        if (kt.rank() == 4) {
          PI_CHECK(kt.shape()[0] == B && kt.shape()[1] == N && kt.shape()[3] == H &&
                       vt.rank() == 4 && vt.shape()[0] == B && vt.shape()[1] == N &&
                       vt.shape()[2] == kt.shape()[2],
                   ShapeMismatch, who_, ": key ", shape_str(kt.shape()), " and value ",
                   shape_str(vt.shape()), " split into heads must be [", B, ", ", N,
                   ", kv_sequence_length, head_size]");
          form = KvForm::Heads;
          L = kt.shape()[2];
          Hv = vt.shape()[3];
        } else {
          PI_CHECK(kt.rank() == 3 && vt.rank() == 3 && kt.shape()[0] == B && kt.shape()[2] == D &&
                       vt.shape()[0] == B && vt.shape()[1] == kt.shape()[1] &&
                       vt.shape()[2] % N == 0,
                   ShapeMismatch, who_, ": key ", shape_str(kt.shape()), " and value ",
                   shape_str(vt.shape()), " must be [", B, ", kv_sequence_length, ", D, "] and [",
                   B, ", kv_sequence_length, v_hidden_size]");
          form = KvForm::Rows;
          L = kt.shape()[1];
          Hv = vt.shape()[2] / N;
        }
      }
    }
    const int64_t Dv = N * Hv;
    const FloatIn bias = FloatIn::optional(ctx, 3, who_, "bias");
    if (bias)
      PI_CHECK(ctx.input(3).numel() == 2 * D + Dv, ShapeMismatch, who_, ": bias has ",
               ctx.input(3).numel(), " values; it must have ", 2 * D + Dv);
    int64_t P = 0;
    FloatIn pk, pv;
    if (ctx.has_input(6) || ctx.has_input(7)) {
      PI_CHECK(ctx.has_input(6) && ctx.has_input(7) && form != KvForm::Heads, InvalidArgument, who_,
               ": past_key and past_value go together, with key and value not split into ",
               "heads");
      const Tensor& a = ctx.input(6);
      const Tensor& c = ctx.input(7);
      PI_CHECK(a.rank() == 4 && a.shape()[0] == B && a.shape()[1] == N && a.shape()[3] == H &&
                   c.rank() == 4 && c.shape()[0] == B && c.shape()[1] == N &&
                   c.shape()[2] == a.shape()[2] && c.shape()[3] == Hv,
               ShapeMismatch, who_, ": past_key ", shape_str(a.shape()), " and past_value ",
               shape_str(c.shape()), " must be [", B, ", ", N, ", past_sequence_length, ", H, "]");
      P = a.shape()[2];
      pk = FloatIn(a, who_, "past_key");
      pv = FloatIn(c, who_, "past_value");
    }
    const int64_t T = P + L;

    // Q rows with the bias added: [B, S, N, H].
    std::vector<float> q(static_cast<size_t>(B * S * D));
    for (int64_t r = 0; r < B * S; ++r)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t e = 0; e < H; ++e) {
          const int64_t src = packed_qkv ? ((r * N + n) * 3) * H + e : r * D + n * H + e;
          q[r * D + n * H + e] = qs.data()[src] + (bias ? bias.data()[n * H + e] : 0.0f);
        }
    // K and V, [B, N, T, H] and [B, N, T, Hv]: into the present outputs when wanted.
    std::optional<FloatOut> present_k, present_v;
    std::vector<float> k_scratch, v_scratch;
    float* kp = nullptr;
    float* vp = nullptr;
    if (ctx.wants_output(1)) {
      present_k.emplace(ctx, 1, qt.dtype(), Shape{B, N, T, H});
      kp = present_k->data();
    } else {
      k_scratch.resize(static_cast<size_t>(B * N * T * H));
      kp = k_scratch.data();
    }
    if (ctx.wants_output(2)) {
      present_v.emplace(ctx, 2, qt.dtype(), Shape{B, N, T, Hv});
      vp = present_v->data();
    } else {
      v_scratch.resize(static_cast<size_t>(B * N * T * Hv));
      vp = v_scratch.data();
    }
    if (P > 0) {
      copy_past(pk.data(), B, N, P, H, T, kp);
      copy_past(pv.data(), B, N, P, Hv, T, vp);
    }
    const float* kb = bias ? bias.data() + D : nullptr;
    const float* vb = bias ? bias.data() + 2 * D : nullptr;
    switch (form) {
      case KvForm::Packed3:
        // [B, S, N, 3, H]: K at offset H, V at 2H of each head's triple.
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < L; ++j)
            for (int64_t n = 0; n < N; ++n)
              for (int64_t e = 0; e < H; ++e) {
                const float* s = qs.data() + (((b * L + j) * N + n) * 3) * H + e;
                kp[((b * N + n) * T + P + j) * H + e] = s[H] + (kb ? kb[n * H + e] : 0.0f);
                vp[((b * N + n) * T + P + j) * H + e] = s[2 * H] + (vb ? vb[n * H + e] : 0.0f);
              }
        break;
      case KvForm::PackedKv:
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < L; ++j)
            for (int64_t n = 0; n < N; ++n)
              for (int64_t e = 0; e < H; ++e) {
                const float* s = ks.data() + (((b * L + j) * N + n) * 2) * H + e;
                kp[((b * N + n) * T + P + j) * H + e] = s[0] + (kb ? kb[n * H + e] : 0.0f);
                vp[((b * N + n) * T + P + j) * H + e] = s[H] + (vb ? vb[n * H + e] : 0.0f);
              }
        break;
      case KvForm::Rows:
        scatter_heads(ks.data(), D, kb, B, L, N, H, P, T, kp);
        scatter_heads(vs.data(), Dv, vb, B, L, N, Hv, P, T, vp);
        break;
      case KvForm::Heads:
        std::copy(ks.data(), ks.data() + B * N * T * H, kp);
        std::copy(vs.data(), vs.data() + B * N * T * Hv, vp);
        break;
    }

    KeyMask mask;
    if (ctx.has_input(4)) mask = KeyMask(ctx.input(4), B, S, T, filter_, who_, "key_padding_mask");
    const FloatIn ab = FloatIn::optional(ctx, 5, who_, "attention_bias");
    BiasRows brows;
    if (ab) brows = BiasRows(ab.data(), ctx.input(5).shape(), B, N, S, T, who_);
    Heads hd{B, N, S, P, T, H, Hv, q.data(), D, kp, vp};
    FloatOut y(ctx, 0, qt.dtype(), {B, S, Dv});
    const float scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(H));
    run_heads(hd, scale, mask, brows, unidirectional_, filter_, ctx.threads(), y.data());
    y.done();
    if (present_k) present_k->done();
    if (present_v) present_v->done();
  }

 private:
  int64_t num_heads_;
  bool unidirectional_;
  float filter_, scale_;
  std::string who_;
};

}  // namespace

PI_MS_KERNEL(Attention, AttentionRef);
PI_MS_FAST_KERNEL(Attention, AttentionFast);
PI_MS_KERNEL(MultiHeadAttention, MultiHeadAttentionKernel);

}  // namespace polyinfer::contrib
