// Attention (opsets 23, 24 and 25, the last still current at 28): scaled dot-product attention
// with an optional mask, causal masking, a sliding window (left_window_size/right_window_size,
// opset 25), softcap, a key/value cache kept inside the operator (past_* in, present_* out) or
// outside it (nonpad_kv_seqlen, opset 24), grouped-query heads and the qk_matmul_output tap.
//
// Values are held in double on [batch, heads, seq, head_size] copies of the inputs (Q, K and V
// may differ in dtype; 3-D inputs are re-laid out once), and rounded to the operator's dtype T1
// wherever the spec's function body holds a T1 tensor: Q and K scaled by sqrt(scale), the QK
// product, each step of the softcap, the bias and the biased scores, the probabilities and Y.
// The softmax runs at softmax_precision (T1 when absent) with each step rounded to it
// (attention_math.h says why).
//
// Masking follows the spec's bias rules: attn_mask (bool: false is -inf; numeric: added),
// padded with -inf past its last column; is_causal and the window bounds relative to the query's
// absolute position offset + i, where offset is the past length (internal cache), or
// nonpad_kv_seqlen[b] - q_sequence_length (external cache), or 0; keys at or past
// nonpad_kv_seqlen[b] masked. A query row whose bias is -inf everywhere attends to nothing: its
// probabilities and its Y row are 0, not NaN.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/attention_math.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

using attention_math::from_double;
using attention_math::Round;
using attention_math::rounding;
using attention_math::to_double;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// What an attention mask may hold: the float types and the whole-byte integers.
using MaskTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                           uint8_t, uint16_t, uint32_t, uint64_t>;

// A [B, H, S, D] block of values laid out row-major.
struct Heads {
  int64_t B = 0, H = 0, S = 0, D = 0;
  std::vector<double> v;
  const double* row(int64_t b, int64_t h, int64_t s) const {
    return v.data() + ((b * H + h) * S + s) * D;
  }
  Shape shape() const { return {B, H, S, D}; }
};

// attn_mask as an additive bias, right-aligned to [B, H, Sq, width] (each of its first three
// extents 1 or full); columns past `width` are -inf.
struct Mask {
  Shape dims{1, 1, 1, 0};
  std::vector<double> v;
  double at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (j >= dims[3]) return kNegInf;
    const int64_t bb = dims[0] == 1 ? 0 : b, hh = dims[1] == 1 ? 0 : h, ii = dims[2] == 1 ? 0 : i;
    return v[static_cast<size_t>(((bb * dims[1] + hh) * dims[2] + ii) * dims[3] + j)];
  }
};

class AttentionKernel final : public Kernel {
 public:
  explicit AttentionKernel(const KernelInfo& info)
      : has_scale_(info.has_attr("scale")),
        scale_(info.attr_float("scale", 0.0f)),
        causal_(info.attr_int("is_causal", 0) != 0),
        q_heads_(info.attr_int("q_num_heads", 0)),
        kv_heads_(info.attr_int("kv_num_heads", 0)),
        softcap_(info.attr_float("softcap", 0.0f)),
        mode_(info.attr_int("qk_matmul_output_mode", 0)),
        left_(info.attr_int("left_window_size", -1)),
        right_(info.attr_int("right_window_size", -1)),
        who_(info.node().label()) {
    PI_CHECK(mode_ >= 0 && mode_ <= 3, InvalidModel, who_,
             ": qk_matmul_output_mode must be 0..3, got ", mode_);
    PI_CHECK(left_ >= -1 && right_ >= -1, InvalidModel, who_,
             ": left_window_size and right_window_size must be -1 or nonnegative, got ", left_,
             " and ", right_);
    if (info.has_attr("softmax_precision")) {
      const int64_t p = info.attr_int("softmax_precision");
      PI_CHECK(p == 1 || p == 10 || p == 11 || p == 16, InvalidModel, who_,
               ": softmax_precision must be 1 (float), 10 (float16), 11 (double) or 16 "
               "(bfloat16), got ",
               p);
      precision_ = static_cast<DType>(p);
    }
    PI_CHECK(info.num_inputs() <= 7, InvalidModel, who_, ": Attention takes at most 7 inputs, got ",
             info.num_inputs());
    PI_CHECK(!info.has_input(6) || !(info.has_input(4) || info.has_input(5) || info.has_output(1) ||
                                     info.has_output(2)),
             InvalidModel, who_,
             ": nonpad_kv_seqlen (an external cache) cannot be combined with past_key/past_value "
             "or present_key/present_value (the internal cache); use one or the other");
  }

  void run(KernelContext& ctx) override {
    const char* who = who_.c_str();
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    const int rank = q.rank();
    PI_CHECK((rank == 3 || rank == 4) && k.rank() == rank && v.rank() == rank, ShapeMismatch, who_,
             ": Q, K and V must all be 3-D or all 4-D, got ", q.describe(), ", ", k.describe(),
             ", ", v.describe());
    PI_CHECK(k.dtype() == q.dtype(), InvalidArgument, who_, ": K must have Q's dtype, got ",
             k.describe());
    Heads Q, K, V;
    if (rank == 3) {
      PI_CHECK(q_heads_ > 0 && kv_heads_ > 0, InvalidArgument, who_,
               ": 3-D inputs need positive q_num_heads and kv_num_heads");
      Q = split_heads(q, q_heads_, "Q");
      K = split_heads(k, kv_heads_, "K");
      V = split_heads(v, kv_heads_, "V");
    } else {
      Q = {q.dim(0), q.dim(1), q.dim(2), q.dim(3), to_double(q, who)};
      K = {k.dim(0), k.dim(1), k.dim(2), k.dim(3), to_double(k, who)};
      V = {v.dim(0), v.dim(1), v.dim(2), v.dim(3), to_double(v, who)};
      PI_CHECK(q_heads_ == 0 || q_heads_ == Q.H, ShapeMismatch, who_, ": q_num_heads=", q_heads_,
               " but Q is ", q.describe());
      PI_CHECK(kv_heads_ == 0 || kv_heads_ == K.H, ShapeMismatch, who_,
               ": kv_num_heads=", kv_heads_, " but K is ", k.describe());
    }
    PI_CHECK(K.B == Q.B && V.B == Q.B && K.H == V.H && K.S == V.S && K.D == Q.D, ShapeMismatch,
             who_, ": Q ", q.describe(), ", K ", k.describe(), " and V ", v.describe(),
             " do not agree on batch, heads, sequence length or head size");
    PI_CHECK(K.H > 0 && Q.H % K.H == 0, ShapeMismatch, who_, ": q heads (", Q.H,
             ") must be a multiple of kv heads (", K.H, ")");

    // Internal cache: present = concat(past, new) along the sequence axis.
    PI_CHECK(ctx.has_input(4) == ctx.has_input(5), InvalidArgument, who_,
             ": past_key and past_value must be given together");
    int64_t past = 0;
    if (ctx.has_input(4)) {
      const Tensor& pk = ctx.input(4);
      const Tensor& pv = ctx.input(5);
      PI_CHECK(pk.rank() == 4 && pv.rank() == 4 && pk.dim(0) == K.B && pk.dim(1) == K.H &&
                   pk.dim(3) == K.D && pv.dim(0) == V.B && pv.dim(1) == V.H &&
                   pv.dim(2) == pk.dim(2) && pv.dim(3) == V.D,
               ShapeMismatch, who_, ": past_key ", pk.describe(), " / past_value ", pv.describe(),
               " do not match K ", shape_str(K.shape()), " / V ", shape_str(V.shape()));
      PI_CHECK(pk.dtype() == k.dtype() && pv.dtype() == v.dtype(), InvalidArgument, who_,
               ": past_key/past_value must have K's/V's dtype");
      past = pk.dim(2);
      K = concat_seq(Heads{pk.dim(0), pk.dim(1), pk.dim(2), pk.dim(3), to_double(pk, who)}, K);
      V = concat_seq(Heads{pv.dim(0), pv.dim(1), pv.dim(2), pv.dim(3), to_double(pv, who)}, V);
    }
    const int64_t B = Q.B, Hq = Q.H, Sq = Q.S, D = Q.D, T = K.S, Dv = V.D;
    const int64_t group = Hq / K.H;

    // The query block's absolute position (causal frontier and window centre) and the number of
    // valid keys, per batch entry. An external cache's offset may be negative: its leading
    // query rows then see no key, and come out as zeros.
    std::vector<int64_t> offset(static_cast<size_t>(B), past);
    std::vector<int64_t> valid(static_cast<size_t>(B), T);
    if (ctx.has_input(6)) {
      const Tensor& n = ctx.input(6);
      PI_CHECK(n.dtype() == DType::Int64 && n.rank() == 1 && n.dim(0) == B, InvalidArgument, who_,
               ": nonpad_kv_seqlen must be int64 of shape [", B, "], got ", n.describe());
      for (int64_t b = 0; b < B; ++b) {
        const int64_t len = n.data<int64_t>()[b];
        PI_CHECK(len >= 0 && len <= T, InvalidArgument, who_, ": nonpad_kv_seqlen[", b, "] = ", len,
                 " is outside [0, ", T, "], the key sequence length");
        valid[static_cast<size_t>(b)] = len;
        offset[static_cast<size_t>(b)] = len - Sq;
      }
    }
    const Mask mask = read_mask(ctx, B, Hq, Sq, T);

    const Round rt = rounding(q.dtype());
    const DType p_type = precision_ == DType::Undefined ? q.dtype() : precision_;

    // Q·Kᵀ·scale is computed as (Q·√scale)·(K·√scale)ᵀ, each factor rounded to T1, as the spec
    // prescribes against overflow. A negative scale has no square root: it multiplies the
    // product instead (the spec's reference would give NaN).
    const double scale = has_scale_ ? double(scale_) : 1.0 / std::sqrt(double(D));
    const bool split_scale = scale >= 0;
    std::vector<double> ks = K.v;  // K.v stays unscaled: it is present_key
    if (split_scale) {
      const double s = rt(std::sqrt(scale));
      for (double& x : Q.v) x = rt(x * s);
      for (double& x : ks) x = rt(x * s);
    }
    const double cap = rt(double(softcap_));

    std::vector<double> y(static_cast<size_t>(B * Hq * Sq * Dv));
    std::vector<double> qk_out;
    if (ctx.wants_output(3)) qk_out.resize(static_cast<size_t>(B * Hq * Sq * T));
    std::vector<double> bias(static_cast<size_t>(T)), row(static_cast<size_t>(T));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t kvh = h / group;  // GQA: each kv head serves `group` consecutive q heads
        for (int64_t i = 0; i < Sq; ++i) {
          const bool attends =
              bias_row(mask, b, h, i, offset[size_t(b)], valid[size_t(b)], rt, bias);
          double* tap = qk_out.empty() ? nullptr : qk_out.data() + ((b * Hq + h) * Sq + i) * T;
          const double* qrow = Q.row(b, h, i);
          for (int64_t j = 0; j < T; ++j) {
            const double* krow = ks.data() + ((b * K.H + kvh) * T + j) * D;
            double s = 0;
            for (int64_t d = 0; d < D; ++d) s += qrow[d] * krow[d];
            s = rt(split_scale ? s : s * scale);
            if (tap && mode_ == 0) tap[j] = s;
            // The softcap comes before the bias, so that a masked score stays -inf.
            if (softcap_ > 0) s = rt(rt(std::tanh(rt(s / cap))) * cap);
            if (tap && mode_ == 1) tap[j] = s;
            s = rt(s + bias[size_t(j)]);
            if (tap && mode_ == 2) tap[j] = s;
            row[size_t(j)] = s;
          }
          attention_math::softmax(row, p_type);
          for (double& p : row) p = attends ? rt(p) : 0.0;
          if (tap && mode_ == 3) std::copy(row.begin(), row.end(), tap);
          double* yrow = y.data() + ((b * Hq + h) * Sq + i) * Dv;
          for (int64_t j = 0; j < T; ++j) {
            const double p = row[size_t(j)];
            const double* vrow = V.row(b, kvh, j);
            for (int64_t e = 0; e < Dv; ++e) yrow[e] += p * vrow[e];
          }
          for (int64_t e = 0; e < Dv; ++e) yrow[e] = rt(yrow[e]);
        }
      }

    if (rank == 3) {
      // [B, Hq, Sq, Dv] → [B, Sq, Hq * Dv]
      std::vector<double> y3(y.size());
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < Hq; ++h)
          for (int64_t i = 0; i < Sq; ++i)
            for (int64_t e = 0; e < Dv; ++e)
              y3[((b * Sq + i) * Hq + h) * Dv + e] = y[((b * Hq + h) * Sq + i) * Dv + e];
      from_double(ctx.output(0, q.dtype(), {B, Sq, Hq * Dv}), y3, who);
    } else {
      from_double(ctx.output(0, q.dtype(), {B, Hq, Sq, Dv}), y, who);
    }
    if (ctx.wants_output(1)) from_double(ctx.output(1, k.dtype(), K.shape()), K.v, who);
    if (ctx.wants_output(2)) from_double(ctx.output(2, v.dtype(), V.shape()), V.v, who);
    if (ctx.wants_output(3)) from_double(ctx.output(3, q.dtype(), {B, Hq, Sq, T}), qk_out, who);
  }

 private:
  // [B, S, H*D] → [B, H, S, D]
  Heads split_heads(const Tensor& t, int64_t heads, const char* name) const {
    PI_CHECK(t.dim(2) % heads == 0, ShapeMismatch, who_, ": ", name, " hidden size ", t.dim(2),
             " is not a multiple of its head count ", heads);
    Heads r{t.dim(0), heads, t.dim(1), t.dim(2) / heads, {}};
    const std::vector<double> src = to_double(t, who_.c_str());
    r.v.resize(src.size());
    for (int64_t b = 0; b < r.B; ++b)
      for (int64_t s = 0; s < r.S; ++s)
        for (int64_t h = 0; h < r.H; ++h)
          for (int64_t d = 0; d < r.D; ++d)
            r.v[((b * r.H + h) * r.S + s) * r.D + d] = src[((b * r.S + s) * r.H + h) * r.D + d];
    return r;
  }

  // Concatenates a and b along the sequence axis; both are [B, H, *, D].
  static Heads concat_seq(const Heads& a, const Heads& b) {
    Heads r{a.B, a.H, a.S + b.S, a.D, {}};
    r.v.resize(static_cast<size_t>(r.B * r.H * r.S * r.D));
    for (int64_t n = 0; n < r.B; ++n)
      for (int64_t h = 0; h < r.H; ++h)
        for (int64_t s = 0; s < r.S; ++s)
          std::copy_n(s < a.S ? a.row(n, h, s) : b.row(n, h, s - a.S), r.D,
                      r.v.begin() + ((n * r.H + h) * r.S + s) * r.D);
    return r;
  }

  // attn_mask as a bias (bool: true 0, false -inf; numeric: its value), checked against
  // [B, H, Sq, T].
  Mask read_mask(KernelContext& ctx, int64_t B, int64_t H, int64_t Sq, int64_t T) const {
    Mask r;
    if (!ctx.has_input(3)) {
      r.dims = {1, 1, 1, T};
      r.v.assign(static_cast<size_t>(T), 0.0);
      return r;
    }
    const Tensor& m = ctx.input(3);
    PI_CHECK(m.rank() >= 1 && m.rank() <= 4, ShapeMismatch, who_,
             ": attn_mask must have rank 1 to 4, got ", m.describe());
    r.dims.assign(static_cast<size_t>(4 - m.rank()), 1);
    r.dims.insert(r.dims.end(), m.shape().begin(), m.shape().end());
    const Shape full{B, H, Sq, T};
    PI_CHECK(r.dims[3] <= T, ShapeMismatch, who_, ": attn_mask ", m.describe(),
             " is wider than the total sequence length ", T);
    for (int d = 0; d < 3; ++d)
      PI_CHECK(r.dims[d] == 1 || r.dims[d] == full[d], ShapeMismatch, who_, ": attn_mask ",
               m.describe(), " does not broadcast to ", shape_str(full));
    r.v.resize(static_cast<size_t>(m.numel()));
    if (m.dtype() == DType::Bool) {
      const bool* p = m.data<bool>();
      for (size_t i = 0; i < r.v.size(); ++i) r.v[i] = p[i] ? 0.0 : kNegInf;
    } else {
      dispatch(MaskTypes{}, m.dtype(), who_.c_str(), [&](auto tag) {
        using M = typename decltype(tag)::type;
        const M* p = m.data<M>();
        for (size_t i = 0; i < r.v.size(); ++i) r.v[i] = static_cast<double>(compute_t<M>(p[i]));
      });
    }
    return r;
  }

  // Query row (b, h, i)'s additive bias over the T keys, rounded to T1 as the spec's function
  // body casts it; returns whether any key is left (a bias not -inf everywhere).
  bool bias_row(const Mask& mask, int64_t b, int64_t h, int64_t i, int64_t offset, int64_t valid,
                Round rt, std::vector<double>& out) const {
    const int64_t pos = offset + i;  // the query's absolute position
    bool any = false;
    for (int64_t j = 0; j < static_cast<int64_t>(out.size()); ++j) {
      double x = mask.at(b, h, i, j);
      const bool outside = (causal_ && j > pos) || (left_ >= 0 && pos - j > left_) ||
                           (right_ >= 0 && j - pos > right_) || j >= valid;
      if (outside) x += kNegInf;
      x = rt(x);
      out[size_t(j)] = x;
      any = any || x != kNegInf;
    }
    return any;
  }

  bool has_scale_;
  float scale_;
  bool causal_;
  int64_t q_heads_, kv_heads_;
  float softcap_;
  int64_t mode_;
  int64_t left_, right_;
  DType precision_ = DType::Undefined;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(Attention, 23, 28, AttentionKernel);

}  // namespace polyinfer
