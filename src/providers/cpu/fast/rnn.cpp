// Fast float32 RNN, GRU and LSTM (every opset): forward, reverse and bidirectional, layout 0 and
// 1, sequence_lens, initial states, clip, every activation the reference kernels take (with
// alpha/beta), LSTM peepholes and input_forget, GRU linear_before_reset.
//
// The computation, for weights packed once (constant W, R, B, P: at creation, read in place
// with peek_bytes; weights computed at run time: packed by each run):
//   1. One GEMM for the input projection of every time step and direction:
//      XW [seq * batch rows, dirs * gates * H] = X x [W_fwd; W_bwd]^T + Wb + Rb. X's rows are
//      used in their own order (layout 0 or 1), so nothing is transposed first.
//   2. Per direction and step, one small GEMM for the recurrence, Ht-1 [batch, H] x R^T, on the
//      same packed tiles (packed_gemm.h), then the gate math in vectorized passes over each row
//      (fast_util.h's sigmoid and tanh). GRU without linear_before_reset takes a second GEMM,
//      (rt (.) Ht-1) x Rh^T, after the reset gate; with it, Rb stays in the recurrent GEMM's
//      bias since rt multiplies Rbh.
// Rows whose sequence ended are skipped (their state is Y_h; Y stays 0 there). With two threads
// or more, a bidirectional node runs its directions side by side on one thread each; otherwise a
// step's GEMM takes the threads when it is large enough to pay for the fork.
//
// Declined at creation (the reference kernel takes them): a CPU without AVX2+FMA, a statically
// non-float32 input, constant weights of another type or shape, and on the AVX2 tile (16-wide
// panels) a hidden_size that is not a multiple of 8. At run time a non-float32 input with weights
// not prepacked goes to the reference kernel.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "core/unaligned.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"
#include "providers/cpu/fast/packed_gemm.h"
#include "providers/cpu/reference/rnn_util.h"

namespace polyinfer::fast {
namespace {

using Kind = rnn::Activation::Kind;

PI_FAST_MATH_BEGIN

PI_FAST_INLINE float clamp_to(float v, float lo, float hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// x = act(x) for n floats, the reference's formulas (rnn_util.h) in float.
PI_FAST_CLONES void activate(Kind k, float a, float b, float* __restrict x, int64_t n) {
  switch (k) {
    case Kind::Relu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
      return;
    case Kind::Tanh:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = fast_tanh(x[i]);
      return;
    case Kind::Sigmoid:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = fast_sigmoid(x[i]);
      return;
    case Kind::Affine:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = a * x[i] + b;
      return;
    case Kind::LeakyRelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.0f ? x[i] : a * x[i];
      return;
    case Kind::ThresholdedRelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > a ? x[i] : 0.0f;
      return;
    case Kind::ScaledTanh:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = a * fast_tanh(b * x[i]);
      return;
    case Kind::HardSigmoid:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = clamp_to(a * x[i] + b, 0.0f, 1.0f);
      return;
    case Kind::Elu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.0f ? x[i] : a * (fast_exp(x[i]) - 1.0f);
      return;
    case Kind::Softsign:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + (x[i] < 0.0f ? -x[i] : x[i]));
      return;
    case Kind::Softplus:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 30.0f ? x[i] : __builtin_log1pf(fast_exp(x[i]));
      return;
  }
}

// out[j] = clamp(a[j] + b[j]) (clip bounds, +-inf without clip).
PI_FAST_CLONES void add_clamped(const float* __restrict a, const float* b, float* out, int64_t n,
                                float lo, float hi) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) out[j] = clamp_to(a[j] + b[j], lo, hi);
}

// LSTM before its activations, over g = Ht-1 x R^T in gate order i, o, f, c: the i, f and c
// pre-activations (peepholes on Ct-1), in place.
PI_FAST_CLONES void lstm_pre(const float* __restrict xw, float* __restrict g,
                             const float* __restrict p, const float* __restrict c, int64_t H,
                             float lo, float hi) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    g[j] = clamp_to(xw[j] + g[j] + p[j] * c[j], lo, hi);
    g[2 * H + j] = clamp_to(xw[2 * H + j] + g[2 * H + j] + p[2 * H + j] * c[j], lo, hi);
    g[3 * H + j] = clamp_to(xw[3 * H + j] + g[3 * H + j], lo, hi);
  }
}

// Ct = ft (.) Ct-1 + it (.) ct into c, the o pre-activation (peephole on Ct) in place, and Ct
// again into the f slot for h().
PI_FAST_CLONES void lstm_cell(const float* __restrict xw, float* __restrict g,
                              const float* __restrict p, float* __restrict c, int64_t H, float lo,
                              float hi, bool input_forget) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    const float i = g[j], f = input_forget ? 1.0f - i : g[2 * H + j];
    const float cn = f * c[j] + i * g[3 * H + j];
    c[j] = cn;
    g[H + j] = clamp_to(xw[H + j] + g[H + j] + p[H + j] * cn, lo, hi);
    g[2 * H + j] = cn;
  }
}

PI_FAST_CLONES void multiply(const float* __restrict a, const float* __restrict b,
                             float* __restrict out, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) out[j] = a[j] * b[j];
}

// GRU's hidden pre-activation: clamp(xw_h + rt (.) gh) (linear_before_reset) or
// clamp(xw_h + gh).
// out may be gh (same element read, then written).
PI_FAST_CLONES void gru_pre(const float* __restrict xw, const float* gh, const float* __restrict r,
                            float* out, int64_t H, float lo, float hi, bool lbr) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) out[j] = clamp_to(xw[j] + (lbr ? r[j] * gh[j] : gh[j]), lo, hi);
}

// Ht = (1 - zt) (.) ht + zt (.) Ht-1.
PI_FAST_CLONES void gru_mix(const float* __restrict z, const float* __restrict ht,
                            float* __restrict h, int64_t H) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) h[j] = (1.0f - z[j]) * ht[j] + z[j] * h[j];
}

PI_FAST_MATH_END

enum class Op { Rnn, Gru, Lstm };

int gate_count(Op op) { return op == Op::Lstm ? 4 : op == Op::Gru ? 3 : 1; }
const char* op_name(Op op) { return op == Op::Lstm ? "lstm" : op == Op::Gru ? "gru" : "rnn"; }
std::vector<std::string> default_acts(Op op) {
  if (op == Op::Lstm) return {"Sigmoid", "Tanh", "Tanh"};
  if (op == Op::Gru) return {"Sigmoid", "Tanh"};
  return {"Tanh"};
}

// The weights in the form the runs use.
struct Packed {
  int64_t input = 0, hidden = 0;
  PackedGemm proj;              // X rows x [W of each direction]^T + the folded biases
  PackedGemm rec[2], rec_h[2];  // Ht-1 x R^T per direction; rec_h: GRU's Rh (reset first)
  std::vector<float> peep;      // LSTM: [dirs][3H], zeros without P
};

// The per-run work of one direction: its states and scratch rows.
struct Lane {
  std::vector<float> h, c;  // [batch][H]
  std::vector<float> g;     // [batch][rec.N()]: Ht-1 x R^T
  std::vector<float> t1;    // [batch][H]: GRU's rt (.) Ht-1
  std::vector<float> t2;    // [batch][H]: GRU's (rt (.) Ht-1) x Rh^T, then ht
};

class FastRecurrent : public Kernel {
 public:
  FastRecurrent(const KernelInfo& info, Op op)
      : op_(op), attrs_(info, default_acts(op)), ref_(info) {
    const std::string who = std::string("fast ") + op_name(op);
    require_avx2_kernel(info, who.c_str());
    require_float_input(info, 0);
    wide_ = PackedGemm::wide(info.options().cpu);
    options_ = info.options().cpu;
    if (op == Op::Lstm) input_forget_ = info.attr_int("input_forget", 0) != 0;
    if (op == Op::Gru) lbr_ = info.attr_int("linear_before_reset", 0) != 0;
    if (attrs_.clip)
      lo_ = static_cast<float>(-*attrs_.clip), hi_ = static_cast<float>(*attrs_.clip);
    const Tensor* w = info.constant_input(1);
    const Tensor* r = info.constant_input(2);
    const Tensor* b = info.has_input(3) ? info.constant_input(3) : nullptr;
    const Tensor* p = op == Op::Lstm && info.has_input(7) ? info.constant_input(7) : nullptr;
    prepacked_ = w && r && (!info.has_input(3) || b) && (op != Op::Lstm || !info.has_input(7) || p);
    if (!prepacked_) return;
    std::string why = check_weights(*w, *r, b, p);
    if (!why.empty()) info.unsupported(who + ": " + why);
    packed_ = pack(w->shape()[2], hidden_of(*r), w->peek_bytes(), r->peek_bytes(),
                   b ? b->peek_bytes() : nullptr, p ? p->peek_bytes() : nullptr);
  }

  bool prepacked(size_t i) const override {
    return prepacked_ && (i == 1 || i == 2 || i == 3 || (op_ == Op::Lstm && i == 7));
  }
  std::string impl() const override {
    if (ref_.impl() != impl_name()) return ref_.impl();
    return std::string("fast:") + (wide_ ? "avx512-" : "avx2-") + op_name(op_);
  }

  void run(KernelContext& ctx) override {
    const Tensor& X = ctx.input(0);
    Packed local;
    const Packed* pk = &packed_;
    if (!prepacked_) {
      if (X.dtype() != DType::Float32 || !weights_usable(ctx)) return ref_.run(ctx);
      const Tensor& w = ctx.input(1);
      const Tensor& r = ctx.input(2);
      const bool has_p = op_ == Op::Lstm && ctx.has_input(7);
      local = pack(w.shape()[2], hidden_of(r), w.data<float>(), r.data<float>(),
                   ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr,
                   has_p ? ctx.input(7).data<float>() : nullptr);
      pk = &local;
    }
    PI_CHECK(X.dtype() == DType::Float32, InvalidArgument, attrs_.label, ": X ", X.describe(),
             " must be float32, as its weights are");
    run_packed(ctx, *pk);
  }

 private:
  int64_t hidden_of(const Tensor& r) const {
    return attrs_.hidden_size > 0 ? attrs_.hidden_size : r.shape()[2];
  }

  // Why the weights are not the fast path's ("" when they are): dtype, shape, the AVX2 tile.
  std::string check_weights(const Tensor& w, const Tensor& r, const Tensor* b,
                            const Tensor* p) const {
    const bool f32 = w.dtype() == DType::Float32 && r.dtype() == DType::Float32 &&
                     (!b || b->dtype() == DType::Float32) && (!p || p->dtype() == DType::Float32);
    if (!f32) return "float32 weights only";
    if (w.rank() != 3 || r.rank() != 3) return "W and R must be 3-D";
    const int64_t D = attrs_.num_directions, H = hidden_of(r), GH = gate_count(op_) * H;
    if (H <= 0 || w.shape() != Shape{D, GH, w.shape()[2]} || r.shape() != Shape{D, GH, H} ||
        (b && b->shape() != Shape{D, 2 * GH}) || (p && p->shape() != Shape{D, 3 * H}))
      return "weights of an unexpected shape";
    if (!wide_ && H % 8 != 0) return "hidden_size a multiple of 8 on the AVX2 tile";
    if (w.shape()[2] == 0) return "an empty input size";
    return "";
  }

  bool weights_usable(KernelContext& ctx) const {
    const bool has_p = op_ == Op::Lstm && ctx.has_input(7);
    return check_weights(ctx.input(1), ctx.input(2), ctx.has_input(3) ? &ctx.input(3) : nullptr,
                         has_p ? &ctx.input(7) : nullptr)
        .empty();
  }

  // Packs W, R, B (null: zeros) and P (null: zeros), each at any alignment.
  Packed pack(int64_t I, int64_t H, const void* w, const void* r, const void* b,
              const void* p) const {
    Packed k;
    k.input = I, k.hidden = H;
    const int D = attrs_.num_directions, G = gate_count(op_);
    const int64_t GH = G * H;
    // Wb, plus Rb except where GRU's reset multiplies it (linear_before_reset).
    const bool rb_in_proj = !(op_ == Op::Gru && lbr_);
    const UnalignedFloats bias(b);
    std::vector<float> proj_bias(static_cast<size_t>(D * GH), 0.0f), rec_bias;
    if (b)
      for (int d = 0; d < D; ++d)
        for (int64_t j = 0; j < GH; ++j)
          proj_bias[d * GH + j] =
              bias[d * 2 * GH + j] + (rb_in_proj ? bias[d * 2 * GH + GH + j] : 0.0f);
    k.proj = PackedGemm(options_, w, I, D * GH, true, 1.0f, proj_bias.data(), 1.0f);
    const UnalignedFloats rs(r);
    for (int d = 0; d < D; ++d) {
      const void* rd = rs.at(d * GH * H);
      if (op_ == Op::Gru && !lbr_) {
        k.rec[d] = PackedGemm(options_, rd, H, 2 * H, true, 1.0f, nullptr, 1.0f);
        k.rec_h[d] =
            PackedGemm(options_, rs.at((d * GH + 2 * H) * H), H, H, true, 1.0f, nullptr, 1.0f);
        continue;
      }
      rec_bias.assign(static_cast<size_t>(GH), 0.0f);
      if (b && !rb_in_proj)
        for (int64_t j = 0; j < GH; ++j) rec_bias[j] = bias[d * 2 * GH + GH + j];
      k.rec[d] = PackedGemm(options_, rd, H, GH, true, 1.0f, rec_bias.data(), 1.0f);
    }
    if (op_ == Op::Lstm) {
      k.peep.assign(static_cast<size_t>(D * 3 * H), 0.0f);
      if (p) std::memcpy(k.peep.data(), p, k.peep.size() * sizeof(float));
    }
    return k;
  }

  void run_packed(KernelContext& ctx, const Packed& pk) const {
    const Tensor& X = ctx.input(0);
    const std::string& label = attrs_.label;
    PI_CHECK(X.rank() == 3 && X.dim(2) == pk.input, ShapeMismatch, label, ": X ", X.describe(),
             " must be 3-D with ", pk.input, " inputs, as W says");
    const bool l1 = attrs_.layout == 1;
    const int64_t seq = X.dim(l1 ? 1 : 0), batch = X.dim(l1 ? 0 : 1), H = pk.hidden;
    const int D = attrs_.num_directions;
    const int64_t GH = gate_count(op_) * H;
    std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
    bool ragged = false;
    if (ctx.has_input(4)) {
      const Tensor& L = ctx.input(4);
      PI_CHECK(L.shape() == Shape{batch}, ShapeMismatch, label, ": sequence_lens ", L.describe(),
               " must have shape [", batch, "]");
      lens = read_int_list(L, label.c_str());
      for (int64_t len : lens) {
        PI_CHECK(len >= 0 && len <= seq, InvalidArgument, label, ": sequence length ", len,
                 " is outside [0, ", seq, "]");
        ragged |= len != seq;
      }
    }
    const Shape state_shape = l1 ? Shape{batch, D, H} : Shape{D, batch, H};
    auto state_index = [&](int d, int64_t b) { return (l1 ? b * D + d : d * batch + b) * H; };

    // 1. The input projection of every step and direction.
    std::vector<float> xw(static_cast<size_t>(seq * batch * D * GH));
    if (!xw.empty())
      pk.proj.run(X.data<float>(), nullptr, xw.data(), seq * batch, FusedActivation{},
                  ctx.threads());

    float* y = nullptr;
    if (ctx.wants_output(0)) {
      const Shape ys = l1 ? Shape{batch, seq, D, H} : Shape{seq, D, batch, H};
      Tensor& yt = ctx.output(0, DType::Float32, ys);
      y = yt.data<float>();
      if (ragged) std::fill(y, y + yt.numel(), 0.0f);
    }
    std::vector<Lane> lanes(static_cast<size_t>(D));
    auto load = [&](size_t index, const char* name, std::vector<float> Lane::*member) {
      const Tensor* t = ctx.has_input(index) ? &ctx.input(index) : nullptr;
      if (t)
        PI_CHECK(t->dtype() == DType::Float32 && t->shape() == state_shape, ShapeMismatch, label,
                 ": ", name, " ", t->describe(), " must be float32 ", shape_str(state_shape));
      for (int d = 0; d < D; ++d) {
        std::vector<float>& s = lanes[d].*member;
        s.assign(static_cast<size_t>(batch * H), 0.0f);
        if (t)
          for (int64_t b = 0; b < batch; ++b)
            std::memcpy(s.data() + b * H, t->data<float>() + state_index(d, b),
                        static_cast<size_t>(H) * sizeof(float));
      }
    };
    load(5, "initial_h", &Lane::h);
    if (op_ == Op::Lstm) load(6, "initial_c", &Lane::c);

    // 2. The recurrence, one direction per thread when there are two of each.
    const int threads = ctx.threads();
    const bool side_by_side = D == 2 && threads >= 2;
    // A step's GEMM forks only past ~256k multiply-adds (a fork and join costs a few us).
    const int step_threads = side_by_side || batch * GH * H < (1 << 18) ? 1 : threads;
    auto direction = [&](int d) {
      Lane& lane = lanes[d];
      const int64_t ng = pk.rec[d].N();
      lane.g.resize(static_cast<size_t>(batch * ng));
      if (op_ == Op::Gru) {
        lane.t1.resize(static_cast<size_t>(batch * H));
        lane.t2.resize(static_cast<size_t>(batch * H));
      }
      const bool rev = attrs_.reversed(d);
      const int64_t steps = batch ? *std::max_element(lens.begin(), lens.end()) : 0;
      std::vector<const float*> rows(static_cast<size_t>(batch));
      std::vector<int64_t> ts(static_cast<size_t>(batch));
      for (int64_t s = 0; s < steps; ++s) {
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t t = rev ? lens[b] - 1 - s : s;
          ts[b] = t;
          rows[b] =
              s < lens[b] ? xw.data() + ((l1 ? b * seq + t : t * batch + b) * D + d) * GH : nullptr;
        }
        pk.rec[d].run(lane.h.data(), nullptr, lane.g.data(), batch, FusedActivation{},
                      step_threads);
        step(pk, d, lane, rows, batch, step_threads);
        if (y)
          for (int64_t b = 0; b < batch; ++b)
            if (rows[b]) {
              const int64_t at = (l1 ? (b * seq + ts[b]) * D + d : (ts[b] * D + d) * batch + b);
              std::memcpy(y + at * H, lane.h.data() + b * H, static_cast<size_t>(H) * 4);
            }
      }
    };
    if (side_by_side) {
#pragma omp parallel for num_threads(2) schedule(static, 1)
      for (int d = 0; d < 2; ++d) direction(d);
    } else {
      for (int d = 0; d < D; ++d) direction(d);
    }

    auto store = [&](size_t index, std::vector<float> Lane::*member) {
      if (!ctx.wants_output(index)) return;
      float* out = ctx.output(index, DType::Float32, state_shape).data<float>();
      for (int d = 0; d < D; ++d)
        for (int64_t b = 0; b < batch; ++b)
          std::memcpy(out + state_index(d, b), (lanes[d].*member).data() + b * H,
                      static_cast<size_t>(H) * sizeof(float));
    };
    store(1, &Lane::h);
    if (op_ == Op::Lstm) store(2, &Lane::c);
  }

  // The gate math of one step of direction d over its live rows (rows[b] = that row's XW, null
  // past its length), after lane.g = Ht-1 x R^T.
  void step(const Packed& pk, int d, Lane& lane, const std::vector<const float*>& rows,
            int64_t batch, int threads) const {
    const int64_t H = pk.hidden, ng = pk.rec[d].N();
    const rnn::Activation& f = attrs_.act(d, 0);
    auto act = [](const rnn::Activation& a, float* x, int64_t n) {
      activate(a.kind, static_cast<float>(a.alpha), static_cast<float>(a.beta), x, n);
    };
    if (op_ == Op::Rnn) {
      for (int64_t b = 0; b < batch; ++b) {
        if (!rows[b]) continue;
        float* h = lane.h.data() + b * H;
        add_clamped(rows[b], lane.g.data() + b * ng, h, H, lo_, hi_);
        act(f, h, H);
      }
      return;
    }
    if (op_ == Op::Lstm) {
      const rnn::Activation &g = attrs_.act(d, 1), &ha = attrs_.act(d, 2);
      const float* P = pk.peep.data() + d * 3 * H;
      for (int64_t b = 0; b < batch; ++b) {
        if (!rows[b]) continue;
        float* gr = lane.g.data() + b * ng;
        float* c = lane.c.data() + b * H;
        lstm_pre(rows[b], gr, P, c, H, lo_, hi_);
        act(f, gr, H);
        if (!input_forget_) act(f, gr + 2 * H, H);
        act(g, gr + 3 * H, H);
        lstm_cell(rows[b], gr, P, c, H, lo_, hi_, input_forget_);
        act(f, gr + H, H);
        act(ha, gr + 2 * H, H);
        multiply(gr + H, gr + 2 * H, lane.h.data() + b * H, H);
      }
      return;
    }
    // GRU: z and r, then (without linear_before_reset) the second GEMM on rt (.) Ht-1.
    const rnn::Activation& g = attrs_.act(d, 1);
    for (int64_t b = 0; b < batch; ++b) {
      if (!rows[b]) continue;
      float* gr = lane.g.data() + b * ng;
      add_clamped(rows[b], gr, gr, 2 * H, lo_, hi_);
      act(f, gr, 2 * H);
      if (!lbr_) multiply(gr + H, lane.h.data() + b * H, lane.t1.data() + b * H, H);
    }
    if (!lbr_)
      pk.rec_h[d].run(lane.t1.data(), nullptr, lane.t2.data(), batch, FusedActivation{}, threads);
    for (int64_t b = 0; b < batch; ++b) {
      if (!rows[b]) continue;
      const float* gr = lane.g.data() + b * ng;
      float* ht = lane.t2.data() + b * H;
      gru_pre(rows[b] + 2 * H, lbr_ ? gr + 2 * H : ht, gr + H, ht, H, lo_, hi_, lbr_);
      act(g, ht, H);
      gru_mix(gr, ht, lane.h.data() + b * H, H);
    }
  }

  Op op_;
  rnn::Attrs attrs_;
  RefFallback ref_;
  CpuProviderOptions options_;
  bool wide_ = false;
  bool input_forget_ = false;  // LSTM
  bool lbr_ = false;           // GRU linear_before_reset
  float lo_ = -std::numeric_limits<float>::infinity();
  float hi_ = std::numeric_limits<float>::infinity();
  bool prepacked_ = false;  // W, R (B, P) packed at creation
  Packed packed_;
};

struct FastRnn final : FastRecurrent {
  explicit FastRnn(const KernelInfo& i) : FastRecurrent(i, Op::Rnn) {}
};
struct FastGru final : FastRecurrent {
  explicit FastGru(const KernelInfo& i) : FastRecurrent(i, Op::Gru) {}
};
struct FastLstm final : FastRecurrent {
  explicit FastLstm(const KernelInfo& i) : FastRecurrent(i, Op::Lstm) {}
};

}  // namespace

PI_CPU_FAST_KERNEL("", RNN, 1, 28, FastRnn);
PI_CPU_FAST_KERNEL("", GRU, 1, 28, FastGru);
PI_CPU_FAST_KERNEL("", LSTM, 1, 28, FastLstm);

}  // namespace polyinfer::fast
