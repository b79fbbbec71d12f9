// Attention (opset 23): scaled dot-product attention with optional mask, causal masking, softcap,
// key/value cache (past_* in, present_* out), grouped-query heads and the qk_matmul_output tap.
//
// All arithmetic runs in double on [batch, heads, seq, head_size] copies of the inputs: Q, K and
// V may differ in dtype (T1/T2), 3-D inputs are re-laid out once, and double is at least as
// precise as any softmax_precision the model can ask for.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Elements of a float tensor of any float dtype, as double.
std::vector<double> to_double(const Tensor& t, const char* who) {
  return dispatch(FloatTypes{}, t.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(compute_t<T>(p[i]));
    return v;
  });
}

// Writes v into a float tensor of any float dtype.
void from_double(Tensor& t, const std::vector<double>& v, const char* who) {
  dispatch(FloatTypes{}, t.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(static_cast<compute_t<T>>(v[i]));
  });
}

// A [B, H, S, D] block of values laid out row-major.
struct Heads {
  int64_t B = 0, H = 0, S = 0, D = 0;
  std::vector<double> v;
  double at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return v[((b * H + h) * S + s) * D + d];
  }
  Shape shape() const { return {B, H, S, D}; }
};

// Additive attention bias [mb, mh, Sq, T]; mb and mh are 1 or the full batch / head count.
struct Bias {
  int64_t mb = 1, mh = 1;
  std::vector<double> v;
  double at(int64_t b, int64_t h, int64_t i, int64_t j, int64_t Sq, int64_t T) const {
    return v[(((mb == 1 ? 0 : b) * mh + (mh == 1 ? 0 : h)) * Sq + i) * T + j];
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
        who_(info.node().label()) {
    PI_CHECK(mode_ >= 0 && mode_ <= 3, InvalidModel, who_,
             ": qk_matmul_output_mode must be 0..3, got ", mode_);
    if (info.has_attr("softmax_precision")) {
      // Any float precision is fine: the kernel computes in double, which is at least as precise.
      const auto p = static_cast<DType>(info.attr_int("softmax_precision"));
      if (p != DType::Float32 && p != DType::Float16 && p != DType::Float64 && p != DType::BFloat16)
        info.unsupported("softmax_precision=" + std::to_string(static_cast<int>(p)));
    }
    if (info.num_inputs() > 6) info.unsupported("nonpad_kv_seqlen (opset 24)");
    for (const char* w : {"left_window_size", "right_window_size"})
      if (info.attr_int(w, -1) != -1) info.unsupported(std::string(w) + " (opset 25)");
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

    // Key/value cache: present = concat(past, new) along the sequence axis.
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

    const Bias bias = make_bias(ctx, B, Hq, Sq, T, past);

    const double scale = has_scale_ ? double(scale_) : 1.0 / std::sqrt(double(D));
    std::vector<double> y(static_cast<size_t>(B * Hq * Sq * Dv));
    std::vector<double> qk_out;
    if (ctx.wants_output(3)) qk_out.resize(static_cast<size_t>(B * Hq * Sq * T));
    std::vector<double> row(static_cast<size_t>(T));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t kvh = h / group;  // GQA: each kv head serves `group` consecutive q heads
        for (int64_t i = 0; i < Sq; ++i) {
          double* tap = qk_out.empty() ? nullptr : qk_out.data() + ((b * Hq + h) * Sq + i) * T;
          for (int64_t j = 0; j < T; ++j) {
            double s = 0;
            for (int64_t d = 0; d < D; ++d) s += Q.at(b, h, i, d) * K.at(b, kvh, j, d);
            s *= scale;
            if (tap && mode_ == 0) tap[j] = s;
            s += bias.at(b, h, i, j, Sq, T);
            if (tap && mode_ == 1) tap[j] = s;
            if (softcap_ > 0) s = double(softcap_) * std::tanh(s / double(softcap_));
            if (tap && mode_ == 2) tap[j] = s;
            row[j] = s;
          }
          softmax(row);
          if (tap && mode_ == 3)
            for (int64_t j = 0; j < T; ++j) tap[j] = row[j];
          for (int64_t e = 0; e < Dv; ++e) {
            double acc = 0;
            for (int64_t j = 0; j < T; ++j) acc += row[j] * V.at(b, kvh, j, e);
            y[((b * Hq + h) * Sq + i) * Dv + e] = acc;
          }
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
          for (int64_t d = 0; d < r.D; ++d)
            r.v[((n * r.H + h) * r.S + s) * r.D + d] =
                s < a.S ? a.at(n, h, s, d) : b.at(n, h, s - a.S, d);
    return r;
  }

  // Causal masking aligns the query block after the past: query i sees keys 0 .. past + i.
  double causal_bias(int64_t i, int64_t j, int64_t past) const {
    return causal_ && j > past + i ? -std::numeric_limits<double>::infinity() : 0.0;
  }

  // The additive bias from attn_mask and is_causal, laid out [mb, mh, Sq, T] where mb and mh are
  // the mask's batch and head extents (1 when it broadcasts over them, or when there is no
  // mask). A mask narrower than T is padded with -inf (false), as the reference does.
  Bias make_bias(KernelContext& ctx, int64_t B, int64_t H, int64_t Sq, int64_t T,
                 int64_t past) const {
    constexpr double kNegInf = -std::numeric_limits<double>::infinity();
    Bias r;
    Shape ms{1, 1, 1, T};
    std::vector<double> vals(static_cast<size_t>(T), 0.0);
    if (ctx.has_input(3)) {
      const Tensor& m = ctx.input(3);
      PI_CHECK(m.rank() >= 1 && m.rank() <= 4, ShapeMismatch, who_,
               ": attn_mask must have rank 1 to 4, got ", m.describe());
      ms.assign(static_cast<size_t>(4 - m.rank()), 1);
      ms.insert(ms.end(), m.shape().begin(), m.shape().end());
      const Shape full{B, H, Sq, T};
      PI_CHECK(ms[3] <= T, ShapeMismatch, who_, ": attn_mask ", m.describe(),
               " is wider than the total sequence length ", T);
      for (int d = 0; d < 3; ++d)
        PI_CHECK(ms[d] == 1 || ms[d] == full[d], ShapeMismatch, who_, ": attn_mask ", m.describe(),
                 " does not broadcast to ", shape_str(full));
      if (m.dtype() == DType::Bool) {
        const bool* p = m.data<bool>();
        vals.resize(static_cast<size_t>(m.numel()));
        for (size_t i = 0; i < vals.size(); ++i) vals[i] = p[i] ? 0.0 : kNegInf;
      } else {
        vals = dispatch(NumericTypes{}, m.dtype(), who_.c_str(), [&](auto tag) {
          using M = typename decltype(tag)::type;
          const M* p = m.data<M>();
          std::vector<double> v(static_cast<size_t>(m.numel()));
          for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(compute_t<M>(p[i]));
          return v;
        });
      }
    }
    const int64_t width = ms[3];
    r.mb = ms[0];
    r.mh = ms[1];
    r.v.resize(static_cast<size_t>(r.mb * r.mh * Sq * T));
    for (int64_t b = 0; b < r.mb; ++b)
      for (int64_t h = 0; h < r.mh; ++h)
        for (int64_t i = 0; i < Sq; ++i) {
          const int64_t src = ((b * ms[1] + h) * ms[2] + (ms[2] == 1 ? 0 : i)) * width;
          double* dst = r.v.data() + ((b * r.mh + h) * Sq + i) * T;
          for (int64_t j = 0; j < T; ++j)
            dst[j] = (j < width ? vals[src + j] : kNegInf) + causal_bias(i, j, past);
        }
    return r;
  }

  // In-place softmax; a row that is all -inf becomes NaN, as exp(-inf - -inf) is.
  static void softmax(std::vector<double>& row) {
    if (row.empty()) return;
    double mx = -std::numeric_limits<double>::infinity();
    for (double x : row) mx = std::max(mx, x);
    double sum = 0;
    for (double& x : row) {
      x = std::exp(x - mx);
      sum += x;
    }
    for (double& x : row) x /= sum;
  }

  bool has_scale_;
  float scale_;
  bool causal_;
  int64_t q_heads_, kv_heads_;
  float softcap_;
  int64_t mode_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(Attention, 23, 28, AttentionKernel);

}  // namespace polyinfer
