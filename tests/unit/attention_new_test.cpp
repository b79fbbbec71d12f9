// The attention operators of opsets 24-27 against naive loops written here: Attention's sliding
// window (opset 25), nonpad_kv_seqlen (the external cache, opset 24), fully masked query rows,
// softcap before the mask, grouped heads with a window and a cache; LinearAttention's four update
// rules; CausalConvWithState. The loops compute in double from the same float32 inputs, so the
// kernels may differ from them only by float32 rounding (of the inputs' products, scores and
// outputs: a few units in 1e-7 relative on values of order 1); the tolerance 1e-5 leaves room for
// that and for accumulation over a few dozen terms, and no more: a wrong mask, window edge or
// state update moves an output by far more.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "infer/infer.h"
#include "onnx/import.h"
#include "oracle.h"
#include "polyinfer/session.h"
#include "polyinfer/status.h"

namespace polyinfer {
namespace {

using test::OracleOp;

constexpr double kTol = 1e-5;

// Runs the one-node model `op` describes on `provider` and returns its outputs; the outputs
// listed in `absent` are left out of the node (an optional output nobody asked for).
std::vector<Tensor> run_on(const OracleOp& op, const std::vector<Tensor>& inputs,
                           const std::string& provider = "cpu-ref",
                           const std::vector<int>& absent = {}) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(op.model()));
  auto* g = m.mutable_graph();
  for (int o : absent) {
    g->mutable_node(0)->set_output(o, "");
    for (int i = 0; i < g->output_size(); ++i)
      if (g->output(i).name() == "out" + std::to_string(o))
        g->mutable_output()->DeleteSubrange(i, 1);
  }
  const std::string bytes = m.SerializeAsString();
  SessionOptions opts;
  opts.providers = {provider};
  opts.optimization_level = 0;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), opts);
  std::map<std::string, Value> feeds;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined()) feeds["in" + std::to_string(i)] = Value(inputs[i]);
  std::vector<Tensor> out;
  for (const Value& v : s.run(feeds)) out.push_back(v.tensor());
  return out;
}

// An OracleOp with `inputs` added in order (undefined tensors are left-out optional inputs).
OracleOp node(const std::string& op, int opset, const std::vector<Tensor>& inputs, int outputs) {
  OracleOp n(op, opset);
  for (const Tensor& t : inputs) n.input(t);
  n.outputs(outputs);
  return n;
}

Tensor f32(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  return test::random_tensor(shape, seed, lo, hi);
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want,
                     const std::string& what, double tol = kTol) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]))) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", want " << want[i];
}

// ---- Attention ----

// Naive scaled dot-product attention over 4-D [B, H, S, D] data: key j is visible to query i of
// batch b when it passes every rule; scores of visible keys are softcapped, biased by the float
// mask and softmaxed; a query that sees no key gives zeros.
struct Naive {
  int64_t B = 1, Hq = 1, Hkv = 1, Sq = 1, T = 1, D = 1, Dv = 1;
  std::vector<float> q, k, v;  // [B, Hq, Sq, D], [B, Hkv, T, D], [B, Hkv, T, Dv]
  bool causal = false;
  int64_t left = -1, right = -1;
  std::vector<int64_t> offset;   // per batch: the query block's absolute position (default 0)
  std::vector<int64_t> valid;    // per batch: keys below it exist (default T)
  std::vector<uint8_t> visible;  // [Sq, T] boolean mask, empty for none
  std::vector<float> bias;       // [Sq, T] float mask, empty for none
  double scale = 0;              // 0: 1/sqrt(D)
  double softcap = 0;

  bool sees(int64_t b, int64_t i, int64_t j) const {
    const int64_t pos = (offset.empty() ? 0 : offset[size_t(b)]) + i;
    if (j >= (valid.empty() ? T : valid[size_t(b)])) return false;
    if (causal && j > pos) return false;
    if (left >= 0 && j < pos - left) return false;
    if (right >= 0 && j > pos + right) return false;
    return visible.empty() || visible[size_t(i * T + j)];
  }

  std::vector<double> y() const {
    const double s = scale > 0 ? scale : 1.0 / std::sqrt(double(D));
    std::vector<double> out(size_t(B * Hq * Sq * Dv), 0.0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t kh = h / (Hq / Hkv);
        for (int64_t i = 0; i < Sq; ++i) {
          std::vector<double> w(size_t(T), 0.0);
          double mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j < T; ++j) {
            if (!sees(b, i, j)) continue;
            double dot = 0;
            for (int64_t d = 0; d < D; ++d)
              dot += double(q[size_t(((b * Hq + h) * Sq + i) * D + d)]) *
                     k[size_t(((b * Hkv + kh) * T + j) * D + d)];
            dot *= s;
            if (softcap > 0) dot = softcap * std::tanh(dot / softcap);
            if (!bias.empty()) dot += bias[size_t(i * T + j)];
            w[size_t(j)] = dot;
            mx = std::max(mx, dot);
          }
          for (int64_t j = 0; j < T; ++j)
            if (sees(b, i, j)) sum += w[size_t(j)] = std::exp(w[size_t(j)] - mx);
          for (int64_t j = 0; j < T; ++j) {
            if (!sees(b, i, j)) continue;
            for (int64_t e = 0; e < Dv; ++e)
              out[size_t(((b * Hq + h) * Sq + i) * Dv + e)] +=
                  w[size_t(j)] / sum * v[size_t(((b * Hkv + kh) * T + j) * Dv + e)];
          }
        }
      }
    return out;
  }
};

// [B, H, S, D] → [B, S, H·D]
std::vector<float> merge_heads(const std::vector<float>& x, int64_t B, int64_t H, int64_t S,
                               int64_t D) {
  std::vector<float> r(x.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d)
          r[size_t(((b * S + s) * H + h) * D + d)] = x[size_t(((b * H + h) * S + s) * D + d)];
  return r;
}

// Sequence positions [from, to) of a [B, H, S, D] tensor's batch entry b.
Tensor slice_seq(const Tensor& t, int64_t b, int64_t from, int64_t to) {
  const int64_t H = t.dim(1), S = t.dim(2), D = t.dim(3);
  const std::vector<float> x = t.to_vector<float>();
  std::vector<float> r;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t s = from; s < to; ++s)
      for (int64_t d = 0; d < D; ++d) r.push_back(x[size_t(((b * H + h) * S + s) * D + d)]);
  return Tensor::from_vector<float>({1, H, to - from, D}, r);
}

TEST(AttentionWindow, MatchesNaiveMaskForEachWindowShape) {
  struct Window {
    int64_t left, right;
    bool causal;
  };
  for (const Window w : {Window{2, 0, false}, Window{2, 1, false}, Window{0, 0, false},
                         Window{1, -1, true}, Window{-1, 2, false}, Window{3, 3, true}}) {
    SCOPED_TRACE("left " + std::to_string(w.left) + " right " + std::to_string(w.right) +
                 (w.causal ? " causal" : ""));
    Naive n;
    n.B = 2, n.Hq = n.Hkv = 2, n.Sq = 5, n.T = 7, n.D = 4, n.Dv = 3;
    n.left = w.left, n.right = w.right, n.causal = w.causal;
    // Cross attention over 7 keys, the 5 queries at positions 0..4: queries past the window's
    // reach and keys past the queries both occur.
    const Tensor q = f32({2, 2, 5, 4}, 1), k = f32({2, 2, 7, 4}, 2), v = f32({2, 2, 7, 3}, 3);
    n.q = q.to_vector<float>(), n.k = k.to_vector<float>(), n.v = v.to_vector<float>();
    OracleOp op = node("Attention", 25, {q, k, v}, 1);
    op.attr("left_window_size", w.left).attr("right_window_size", w.right);
    if (w.causal) op.attr("is_causal", int64_t{1});
    expect_near_all(run_on(op, {q, k, v})[0].to_vector<float>(), n.y(), "Y");
  }
}

// The form the fast CPU kernel takes (float32, 3-D, as many kv heads as q heads, head size 8,
// no mask): with a window it must hand the node to the reference kernel, not ignore the window.
TEST(AttentionWindow, CpuProviderHonoursTheWindow) {
  const int64_t B = 1, H = 2, S = 9, D = 8;
  const Tensor q = f32({B, S, H * D}, 4), k = f32({B, S, H * D}, 5), v = f32({B, S, H * D}, 6);
  OracleOp op = node("Attention", 25, {q, k, v}, 1);
  op.attr("q_num_heads", H).attr("kv_num_heads", H);
  op.attr("left_window_size", int64_t{1}).attr("right_window_size", int64_t{1});
  Naive n;
  n.B = B, n.Hq = n.Hkv = H, n.Sq = n.T = S, n.D = n.Dv = D, n.left = n.right = 1;
  // Naive works on [B, H, S, D]: split the heads of the packed inputs.
  const auto split = [&](const Tensor& t) {
    const std::vector<float> x = t.to_vector<float>();
    std::vector<float> r(x.size());
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d)
          r[size_t((h * S + s) * D + d)] = x[size_t((s * H + h) * D + d)];
    return r;
  };
  n.q = split(q), n.k = split(k), n.v = split(v);
  const std::vector<double> want4 = n.y();
  std::vector<float> want4f(want4.begin(), want4.end());
  const std::vector<float> want = merge_heads(want4f, B, H, S, D);
  expect_near_all(run_on(op, {q, k, v}, "cpu")[0].to_vector<float>(),
                  std::vector<double>(want.begin(), want.end()), "Y on cpu");
}

// Grouped heads (4 query heads on 2 kv heads), 3-D inputs, an internal cache of 3 positions:
// the window is centred on the queries' absolute positions 3 and 4.
TEST(AttentionWindow, GroupedHeadsWithPastAndWindow) {
  const int64_t B = 2, Hq = 4, Hkv = 2, Sq = 2, P = 3, D = 4;
  const Tensor q4 = f32({B, Hq, Sq, D}, 7), k4 = f32({B, Hkv, Sq, D}, 8),
               v4 = f32({B, Hkv, Sq, D}, 9);
  const Tensor pk = f32({B, Hkv, P, D}, 10), pv = f32({B, Hkv, P, D}, 11);
  const auto packed = [](const Tensor& t) {
    const std::vector<float> r =
        merge_heads(t.to_vector<float>(), t.dim(0), t.dim(1), t.dim(2), t.dim(3));
    return Tensor::from_vector<float>({t.dim(0), t.dim(2), t.dim(1) * t.dim(3)}, r);
  };
  const Tensor q = packed(q4), k = packed(k4), v = packed(v4);
  OracleOp op = node("Attention", 25, {q, k, v, Tensor(), pk, pv}, 3);
  op.attr("q_num_heads", Hq).attr("kv_num_heads", Hkv).attr("is_causal", int64_t{1});
  op.attr("left_window_size", int64_t{2});
  const std::vector<Tensor> out = run_on(op, {q, k, v, Tensor(), pk, pv});

  // Naive sees the whole cache: past then new, per batch entry and kv head.
  const auto concat = [&](const Tensor& past, const Tensor& now) {
    std::vector<float> r;
    const std::vector<float> a = past.to_vector<float>(), c = now.to_vector<float>();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hkv; ++h) {
        r.insert(r.end(), a.begin() + ((b * Hkv + h) * P) * D,
                 a.begin() + ((b * Hkv + h) * P + P) * D);
        r.insert(r.end(), c.begin() + ((b * Hkv + h) * Sq) * D,
                 c.begin() + ((b * Hkv + h) * Sq + Sq) * D);
      }
    return r;
  };
  Naive n;
  n.B = B, n.Hq = Hq, n.Hkv = Hkv, n.Sq = Sq, n.T = P + Sq, n.D = n.Dv = D;
  n.causal = true, n.left = 2, n.offset = {P, P};
  n.q = q4.to_vector<float>(), n.k = concat(pk, k4), n.v = concat(pv, v4);
  const std::vector<double> want4 = n.y();
  const std::vector<float> want =
      merge_heads(std::vector<float>(want4.begin(), want4.end()), B, Hq, Sq, D);
  expect_near_all(out[0].to_vector<float>(), std::vector<double>(want.begin(), want.end()), "Y");
  EXPECT_EQ(out[1].shape(), (Shape{B, Hkv, P + Sq, D}));
  EXPECT_EQ(out[1].to_vector<float>(), n.k);  // present_key: the cache, unscaled
  EXPECT_EQ(out[2].to_vector<float>(), n.v);
}

// nonpad_kv_seqlen marks batch entry b's first n[b] cache positions valid, and (causal) places
// its queries last among them. The same follows from the internal cache: past_key = the first
// n[b] - Sq positions, K = the next Sq. Masked keys add exact zeros, so the two agree exactly.
TEST(AttentionNonpad, MatchesTheSameCacheSlicedPerBatch) {
  const int64_t B = 2, H = 2, Sq = 2, T = 6, D = 4;
  const std::vector<int64_t> len = {3, 5};
  const Tensor q = f32({B, H, Sq, D}, 12), k = f32({B, H, T, D}, 13), v = f32({B, H, T, D}, 14);
  const Tensor n = Tensor::from_vector<int64_t>({B}, len);
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    OracleOp op = node("Attention", 24, {q, k, v, Tensor(), Tensor(), Tensor(), n}, 1);
    op.attr("is_causal", int64_t{causal});
    const std::vector<float> y =
        run_on(op, {q, k, v, Tensor(), Tensor(), Tensor(), n})[0].to_vector<float>();
    for (int64_t b = 0; b < B; ++b) {
      const int64_t p = len[size_t(b)] - Sq;
      const Tensor qb = slice_seq(q, b, 0, Sq);
      const std::vector<Tensor> in = {
          qb,       slice_seq(k, b, p, p + Sq), slice_seq(v, b, p, p + Sq),
          Tensor(), slice_seq(k, b, 0, p),      slice_seq(v, b, 0, p)};
      OracleOp ref = node("Attention", 24, in, 1);
      ref.attr("is_causal", int64_t{causal});
      const std::vector<float> yb = run_on(ref, in)[0].to_vector<float>();
      const std::vector<float> got(y.begin() + b * H * Sq * D, y.begin() + (b + 1) * H * Sq * D);
      EXPECT_EQ(got, yb) << "batch " << b;
    }
  }
}

// Fewer valid keys than queries (causal): the leading queries see no key at all, and their rows
// of Y and of the mode-3 probabilities are zeros, not NaN. A boolean mask row of all false does
// the same; the other rows are ordinary attention.
TEST(AttentionMasking, FullyMaskedRowsAreZero) {
  const int64_t H = 1, Sq = 3, T = 4, D = 2;
  const Tensor q = f32({1, H, Sq, D}, 15), k = f32({1, H, T, D}, 16), v = f32({1, H, T, D}, 17);
  {
    const Tensor n = Tensor::from_vector<int64_t>({1}, {1});
    OracleOp op = node("Attention", 24, {q, k, v, Tensor(), Tensor(), Tensor(), n}, 4);
    op.attr("is_causal", int64_t{1}).attr("qk_matmul_output_mode", int64_t{3});
    const std::vector<Tensor> out =
        run_on(op, {q, k, v, Tensor(), Tensor(), Tensor(), n}, "cpu-ref", {1, 2});
    ASSERT_EQ(out.size(), 2u);  // Y and qk_matmul_output
    const std::vector<float> y = out[0].to_vector<float>(), p = out[1].to_vector<float>();
    // Offset 1 - 3 = -2: query 2 sees key 0 only, queries 0 and 1 nothing.
    const std::vector<float> vv = v.to_vector<float>();
    EXPECT_EQ(y, (std::vector<float>{0, 0, 0, 0, vv[0], vv[1]}));
    EXPECT_EQ(p, (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
  }
  {
    std::vector<uint8_t> visible = {1, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1};
    Tensor mask = Tensor::empty(DType::Bool, {Sq, T});
    for (size_t i = 0; i < visible.size(); ++i) mask.data<bool>()[i] = visible[i] != 0;
    OracleOp op = node("Attention", 23, {q, k, v, mask}, 4);
    op.attr("qk_matmul_output_mode", int64_t{3});
    const std::vector<Tensor> out = run_on(op, {q, k, v, mask});
    Naive n;
    n.Sq = Sq, n.T = T, n.D = n.Dv = D, n.visible = visible;
    n.q = q.to_vector<float>(), n.k = k.to_vector<float>(), n.v = v.to_vector<float>();
    expect_near_all(out[0].to_vector<float>(), n.y(), "Y");
    const std::vector<float> p = out[3].to_vector<float>();
    for (int64_t j = 0; j < T; ++j) EXPECT_EQ(p[size_t(T + j)], 0.0f) << "probability of key " << j;
  }
}

// softcap bounds the scores before the mask is added: a masked key keeps probability 0 (capping
// after the mask would turn its -inf into -softcap and give it weight). Mode 1 shows the capped
// scores, mode 2 the capped scores plus the bias.
TEST(AttentionMasking, SoftcapComesBeforeTheMask) {
  const int64_t Sq = 2, T = 3, D = 4;
  const Tensor q = f32({1, 1, Sq, D}, 18, -3, 3), k = f32({1, 1, T, D}, 19, -3, 3),
               v = f32({1, 1, T, D}, 20);
  const std::vector<float> bias = {0.5f, -INFINITY, 0.25f, -INFINITY, 0.0f, -1.0f};
  const Tensor mask = Tensor::from_vector<float>({Sq, T}, bias);
  Naive n;
  n.Sq = Sq, n.T = T, n.D = n.Dv = D, n.softcap = 2.0, n.bias = bias;
  n.visible = {1, 0, 1, 0, 1, 1};
  n.q = q.to_vector<float>(), n.k = k.to_vector<float>(), n.v = v.to_vector<float>();
  for (const int64_t mode : {int64_t{1}, int64_t{2}}) {
    OracleOp op = node("Attention", 23, {q, k, v, mask}, 4);
    op.attr("softcap", 2.0f).attr("qk_matmul_output_mode", mode);
    const std::vector<Tensor> out = run_on(op, {q, k, v, mask});
    expect_near_all(out[0].to_vector<float>(), n.y(), "Y");
    const std::vector<float> s = out[3].to_vector<float>();
    for (int64_t i = 0; i < Sq; ++i)
      for (int64_t j = 0; j < T; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += double(n.q[size_t(i * D + d)]) * n.k[size_t(j * D + d)] / 2.0;  // scale 1/√4
        double want = 2.0 * std::tanh(dot / 2.0);
        if (mode == 2) want += bias[size_t(i * T + j)];
        if (std::isinf(want)) EXPECT_EQ(s[size_t(i * T + j)], want);
        else
          EXPECT_NEAR(s[size_t(i * T + j)], want, kTol) << "score " << i << "," << j;
      }
  }
}

TEST(AttentionMasking, RefusesInvalidWindowsAndMixedCaches) {
  const Tensor q = f32({1, 1, 2, 2}, 21), k = f32({1, 1, 2, 2}, 22), v = f32({1, 1, 2, 2}, 23);
  OracleOp bad_window = node("Attention", 25, {q, k, v}, 1);
  bad_window.attr("left_window_size", int64_t{-2});
  EXPECT_THROW(run_on(bad_window, {q, k, v}), Error);
  const Tensor n = Tensor::from_vector<int64_t>({1}, {2});
  const std::vector<Tensor> in = {q, k, v, Tensor(), k, v, n};
  EXPECT_THROW(run_on(node("Attention", 24, in, 1), in), Error);
}

// ---- FlexAttention ----

// A one-node modifier graph: y = op(x, c) with c a float32 constant of `shape`.
onnx::GraphProto modifier(const std::string& op, const Shape& shape, const std::vector<float>& c) {
  onnx::GraphProto g;
  g.set_name(op + "_mod");
  for (const char* name : {"x", "y"}) {
    auto* v = std::string(name) == "x" ? g.add_input() : g.add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  auto* t = g.add_initializer();
  t->set_name("c");
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->add_dims(d);
  for (float x : c) t->add_float_data(x);
  auto* n = g.add_node();
  n->set_op_type(op);
  n->add_input("x");
  n->add_input("c");
  n->add_output("y");
  return g;
}

// Grouped heads, a score_mod that adds a mask (-inf where a key is hidden) and a prob_mod that
// doubles the probabilities: Y = 2 · softmax(scale · QKᵀ + mask) · V.
TEST(FlexAttention, ModifierGraphsShapeScoresAndProbabilities) {
  const int64_t B = 2, Hq = 4, Hkv = 2, L = 3, S = 4, D = 4;
  const Tensor q = f32({B, Hq, L, D}, 70), k = f32({B, Hkv, S, D}, 71), v = f32({B, Hkv, S, D}, 72);
  const std::vector<float> bias = {0.0f,  -INFINITY, 0.5f, -1.0f,     -INFINITY, -INFINITY,
                                   0.25f, 0.0f,      1.0f, -INFINITY, 0.0f,      0.0f};
  OracleOp op("FlexAttention", 1, "ai.onnx.preview");
  op.input(q).input(k).input(v).outputs(1);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(op.model()));
  auto* n = m.mutable_graph()->mutable_node(0);
  for (const auto& [name, g] : {std::pair{"score_mod", modifier("Add", {L, S}, bias)},
                                std::pair{"prob_mod", modifier("Mul", {}, {2.0f})}}) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = g;
  }
  const std::string bytes = m.SerializeAsString();
  SessionOptions o;
  o.providers = {"cpu-ref"};
  Session sess = Session::load_bytes(bytes.data(), bytes.size(), o);
  const std::vector<Value> out =
      sess.run({{"in0", Value(q)}, {"in1", Value(k)}, {"in2", Value(v)}});

  Naive nv;
  nv.B = B, nv.Hq = Hq, nv.Hkv = Hkv, nv.Sq = L, nv.T = S, nv.D = nv.Dv = D, nv.bias = bias;
  for (float x : bias) nv.visible.push_back(std::isinf(x) ? 0 : 1);
  nv.q = q.to_vector<float>(), nv.k = k.to_vector<float>(), nv.v = v.to_vector<float>();
  std::vector<double> want = nv.y();
  for (double& x : want) x *= 2;
  expect_near_all(out[0].tensor().to_vector<float>(), want, "Y");
}

// ---- LinearAttention ----

struct LinearCase {
  std::string rule;
  int64_t B = 2, T = 5, Hq = 4, Hkv = 2, dk = 3, dv = 4;
  bool decay_per_key = false;  // decay [B, T, Hkv·dk] rather than [B, T, Hkv]
  bool beta_shared = false;    // beta [B, T, 1] rather than [B, T, Hkv]
};

// Naive recurrence, token by token, straight from the operator's formulas.
void naive_linear(const LinearCase& c, const std::vector<float>& q, const std::vector<float>& k,
                  const std::vector<float>& v, const std::vector<float>& g,
                  const std::vector<float>& beta, std::vector<double>& state,
                  std::vector<double>& out) {
  const bool gated = c.rule == "gated" || c.rule == "gated_delta";
  const bool delta = c.rule == "delta" || c.rule == "gated_delta";
  const double scale = 1.0 / std::sqrt(double(c.dk));
  out.assign(size_t(c.B * c.T * c.Hq * c.dv), 0.0);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t t = 0; t < c.T; ++t)
      for (int64_t h = 0; h < c.Hkv; ++h) {
        const auto S = [&](int64_t d, int64_t m) -> double& {
          return state[size_t(((b * c.Hkv + h) * c.dk + d) * c.dv + m)];
        };
        const auto K = [&](int64_t d) {
          return double(k[size_t(((b * c.T + t) * c.Hkv + h) * c.dk + d)]);
        };
        const auto V = [&](int64_t m) {
          return double(v[size_t(((b * c.T + t) * c.Hkv + h) * c.dv + m)]);
        };
        if (gated)
          for (int64_t d = 0; d < c.dk; ++d) {
            const int64_t gi = c.decay_per_key ? ((b * c.T + t) * c.Hkv + h) * c.dk + d
                                               : (b * c.T + t) * c.Hkv + h;
            for (int64_t m = 0; m < c.dv; ++m) S(d, m) *= std::exp(double(g[size_t(gi)]));
          }
        std::vector<double> add(size_t(c.dv));
        for (int64_t m = 0; m < c.dv; ++m) {
          if (!delta) {
            add[size_t(m)] = V(m);
            continue;
          }
          double ks = 0;
          for (int64_t d = 0; d < c.dk; ++d) ks += S(d, m) * K(d);
          const double bt =
              beta[size_t((b * c.T + t) * (c.beta_shared ? 1 : c.Hkv) + (c.beta_shared ? 0 : h))];
          add[size_t(m)] = bt * (V(m) - ks);
        }
        for (int64_t d = 0; d < c.dk; ++d)
          for (int64_t m = 0; m < c.dv; ++m) S(d, m) += K(d) * add[size_t(m)];
        for (int64_t r = 0; r < c.Hq / c.Hkv; ++r) {
          const int64_t hq = h * (c.Hq / c.Hkv) + r;
          for (int64_t m = 0; m < c.dv; ++m) {
            double o = 0;
            for (int64_t d = 0; d < c.dk; ++d)
              o += double(q[size_t(((b * c.T + t) * c.Hq + hq) * c.dk + d)]) * S(d, m);
            out[size_t(((b * c.T + t) * c.Hq + hq) * c.dv + m)] = scale * o;
          }
        }
      }
}

TEST(LinearAttention, EveryUpdateRuleMatchesTheRecurrence) {
  for (const LinearCase& c :
       {LinearCase{"linear"}, LinearCase{"gated"}, LinearCase{"gated", 2, 5, 4, 2, 3, 4, true},
        LinearCase{"delta"}, LinearCase{"delta", 2, 5, 4, 2, 3, 4, false, true},
        LinearCase{"gated_delta"}, LinearCase{"gated_delta", 1, 4, 2, 2, 3, 2, true, true}}) {
    SCOPED_TRACE(c.rule + (c.decay_per_key ? " decay per key" : "") +
                 (c.beta_shared ? " shared beta" : ""));
    const bool gated = c.rule == "gated" || c.rule == "gated_delta";
    const bool delta = c.rule == "delta" || c.rule == "gated_delta";
    const Tensor q = f32({c.B, c.T, c.Hq * c.dk}, 30), k = f32({c.B, c.T, c.Hkv * c.dk}, 31),
                 v = f32({c.B, c.T, c.Hkv * c.dv}, 32),
                 past = f32({c.B, c.Hkv, c.dk, c.dv}, 33, -0.5f, 0.5f);
    const Tensor g =
        gated ? f32({c.B, c.T, c.decay_per_key ? c.Hkv * c.dk : c.Hkv}, 34, -0.5f, 0) : Tensor();
    const Tensor beta = delta ? f32({c.B, c.T, c.beta_shared ? 1 : c.Hkv}, 35, 0, 1) : Tensor();
    const std::vector<Tensor> in = {q, k, v, past, g, beta};
    OracleOp op = node("LinearAttention", 27, in, 2);
    op.attr("update_rule", c.rule).attr("q_num_heads", c.Hq).attr("kv_num_heads", c.Hkv);
    const std::vector<Tensor> out = run_on(op, in);
    const std::vector<float> pv = past.to_vector<float>();
    std::vector<double> state(pv.begin(), pv.end()), want;
    naive_linear(c, q.to_vector<float>(), k.to_vector<float>(), v.to_vector<float>(),
                 gated ? g.to_vector<float>() : std::vector<float>{},
                 delta ? beta.to_vector<float>() : std::vector<float>{}, state, want);
    expect_near_all(out[0].to_vector<float>(), want, "output");
    EXPECT_EQ(out[1].shape(), (Shape{c.B, c.Hkv, c.dk, c.dv}));
    expect_near_all(out[1].to_vector<float>(), state, "present_state");
  }
}

// Prefill of 3 tokens, then 2 more from its present_state, gives what 5 tokens at once give.
TEST(LinearAttention, StateCarriesAcrossCalls) {
  const int64_t B = 1, T = 5, H = 2, dk = 3, dv = 2;
  const Tensor q = f32({B, T, H * dk}, 40), k = f32({B, T, H * dk}, 41),
               v = f32({B, T, H * dv}, 42), g = f32({B, T, H}, 43, -0.5f, 0),
               beta = f32({B, T, H}, 44, 0, 1);
  const auto part = [](const Tensor& t, int64_t from, int64_t to) {
    const int64_t w = t.dim(2);
    const std::vector<float> x = t.to_vector<float>();
    return Tensor::from_vector<float>({1, to - from, w},
                                      std::vector<float>(x.begin() + from * w, x.begin() + to * w));
  };
  const auto run = [&](int64_t from, int64_t to, const Tensor& past) {
    const std::vector<Tensor> in = {part(q, from, to), part(k, from, to),   part(v, from, to), past,
                                    part(g, from, to), part(beta, from, to)};
    OracleOp op = node("LinearAttention", 27, in, 2);
    op.attr("q_num_heads", H).attr("kv_num_heads", H);  // the default rule: gated_delta
    return run_on(op, in);
  };
  const std::vector<Tensor> all = run(0, T, Tensor());
  const std::vector<Tensor> first = run(0, 3, Tensor());
  const std::vector<Tensor> second = run(3, T, first[1]);
  std::vector<float> joined = first[0].to_vector<float>();
  for (float x : second[0].to_vector<float>()) joined.push_back(x);
  const std::vector<float> whole = all[0].to_vector<float>();
  expect_near_all(joined, std::vector<double>(whole.begin(), whole.end()), "output");
  const std::vector<float> s = all[1].to_vector<float>();
  expect_near_all(second[1].to_vector<float>(), std::vector<double>(s.begin(), s.end()), "state");
}

// ---- CausalConvWithState ----

TEST(CausalConvWithState, MatchesTheDepthwiseConvolutionOfTheCarriedSequence) {
  struct Case {
    int64_t k, L;
    bool past, bias;
    std::string act;
  };
  const int64_t B = 2, C = 3;
  for (const Case& c : {Case{4, 6, true, true, "silu"}, Case{4, 6, false, false, "none"},
                        Case{3, 1, true, false, "swish"}, Case{1, 5, false, true, "none"},
                        Case{5, 2, true, true, "none"}}) {
    SCOPED_TRACE("k " + std::to_string(c.k) + " L " + std::to_string(c.L) + " " + c.act);
    const int64_t carry = c.k - 1;
    const Tensor x = f32({B, C, c.L}, 50), w = f32({C, 1, c.k}, 51), bias = f32({C}, 52),
                 past = f32({B, C, carry}, 53);
    const std::vector<Tensor> in = {x, w, c.bias ? bias : Tensor(), c.past ? past : Tensor()};
    OracleOp op = node("CausalConvWithState", 27, in, 2);
    op.attr("activation", c.act);
    const std::vector<Tensor> out = run_on(op, in);
    const std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>(),
                             bv = bias.to_vector<float>(), pv = past.to_vector<float>();
    std::vector<double> y, state;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t ch = 0; ch < C; ++ch) {
        // Position p of the sequence the carry extends: p < 0 is the carried past.
        const auto at = [&](int64_t p) -> double {
          if (p >= 0) return xv[size_t((b * C + ch) * c.L + p)];
          return c.past ? pv[size_t((b * C + ch) * carry + carry + p)] : 0.0;
        };
        for (int64_t t = 0; t < c.L; ++t) {
          double acc = c.bias ? bv[size_t(ch)] : 0.0;
          for (int64_t m = 0; m < c.k; ++m) acc += wv[size_t(ch * c.k + m)] * at(t - (c.k - 1) + m);
          y.push_back(c.act == "none" ? acc : acc / (1 + std::exp(-acc)));
        }
        for (int64_t t = c.L - carry; t < c.L; ++t) state.push_back(at(t));
      }
    expect_near_all(out[0].to_vector<float>(), y, "output");
    EXPECT_EQ(out[1].shape(), (Shape{B, C, carry}));
    expect_near_all(out[1].to_vector<float>(), state, "present_state");
  }
}

// Two calls chained through present_state give what one call on the whole sequence gives.
TEST(CausalConvWithState, StreamingEqualsOneCall) {
  const int64_t C = 2, k = 3, L = 7;
  const Tensor x = f32({1, C, L}, 60), w = f32({C, 1, k}, 61);
  const auto part = [&](int64_t from, int64_t to) {
    const std::vector<float> v = x.to_vector<float>();
    std::vector<float> r;
    for (int64_t c = 0; c < C; ++c)
      r.insert(r.end(), v.begin() + c * L + from, v.begin() + c * L + to);
    return Tensor::from_vector<float>({1, C, to - from}, r);
  };
  const auto run = [&](const Tensor& in, const Tensor& past) {
    const std::vector<Tensor> ins = {in, w, Tensor(), past};
    return run_on(node("CausalConvWithState", 27, ins, 2), ins);
  };
  const std::vector<Tensor> whole = run(x, Tensor());
  const std::vector<Tensor> a = run(part(0, 4), Tensor());
  const std::vector<Tensor> b = run(part(4, L), a[1]);
  const std::vector<float> wy = whole[0].to_vector<float>(), ay = a[0].to_vector<float>(),
                           by = b[0].to_vector<float>();
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < L; ++t)
      EXPECT_EQ(wy[size_t(c * L + t)], t < 4 ? ay[size_t(c * 4 + t)] : by[size_t(c * 3 + t - 4)])
          << "channel " << c << " position " << t;
  EXPECT_EQ(b[1].to_vector<float>(), whole[1].to_vector<float>());
}

// ---- Type inference ----

// The types inference gives the node's outputs out0.. (without running it), as text.
std::vector<std::string> inferred(const OracleOp& op) {
  const std::string bytes = op.model();
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(*m.graph);
  std::vector<std::string> r;
  for (const auto& o : m.graph->outputs) {
    const ir::TypeInfo* t = m.graph->type_of(o.name);
    r.push_back(t ? t->str() : "?");
  }
  return r;
}

TEST(AttentionInference, CachesScoresAndRecurrentStates) {
  // Attention, 3-D, 4 query heads on 2 kv heads of size 4, V heads of size 3, past length 3.
  const std::vector<Tensor> att = {f32({2, 5, 16}, 1), f32({2, 5, 8}, 2),    f32({2, 5, 6}, 3),
                                   Tensor(),           f32({2, 2, 3, 4}, 4), f32({2, 2, 3, 3}, 5)};
  OracleOp a = node("Attention", 25, att, 4);
  a.attr("q_num_heads", int64_t{4}).attr("kv_num_heads", int64_t{2});
  EXPECT_EQ(inferred(a), (std::vector<std::string>{"float32[2,5,12]", "float32[2,2,8,4]",
                                                   "float32[2,2,8,3]", "float32[2,4,5,8]"}));
  // LinearAttention: d_k 3, d_v 2; the state takes past_state's type.
  const std::vector<Tensor> lin = {f32({1, 4, 12}, 6), f32({1, 4, 6}, 7), f32({1, 4, 4}, 8)};
  OracleOp l = node("LinearAttention", 27, lin, 2);
  l.attr("q_num_heads", int64_t{4})
      .attr("kv_num_heads", int64_t{2})
      .attr("update_rule", std::string("linear"));
  EXPECT_EQ(inferred(l), (std::vector<std::string>{"float32[1,4,8]", "float32[1,2,3,2]"}));
  // CausalConvWithState: k = 4 carries 3 positions.
  const std::vector<Tensor> conv = {f32({2, 3, 7}, 9), f32({3, 1, 4}, 10)};
  EXPECT_EQ(inferred(node("CausalConvWithState", 27, conv, 2)),
            (std::vector<std::string>{"float32[2,3,7]", "float32[2,3,3]"}));
}

}  // namespace
}  // namespace polyinfer
