// The com.microsoft CPU kernels (src/providers/cpu/contrib/) against naive references written
// here, in double, from ONNX Runtime's semantics. Each reference's form was first checked with
// numpy against ONNX Runtime 1.32's CPU kernels on the same cases (the masks' additive -10000,
// GroupQueryAttention's prompt and cache rules, MatMulNBits' packing); ONNX Runtime's own
// outputs for whole models and single-operator cases are in tests/data/contrib/, run by
// tests/e2e/contrib_models_test.cpp.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "infer/infer.h"
#include "model_builder.h"
#include "onnx/import.h"
#include "polyinfer/session.h"
#include "providers/cpu/fast/avx2_util.h"

namespace polyinfer {
namespace {

using Vec = std::vector<float>;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

Tensor rnd(const Shape& s, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  return Tensor::from_vector<float>(s, test::random_values(shape_numel(s), seed, lo, hi));
}
Tensor i32(const Shape& s, std::vector<int32_t> v) { return Tensor::from_vector<int32_t>(s, v); }
Tensor i64(const Shape& s, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(s, v); }

// A one-node model of a com.microsoft operator (or another domain's), its inputs given either at
// run time or as initializers (the fast kernels prepack those).
class MsModel {
 public:
  explicit MsModel(std::string op, std::string domain = "com.microsoft", int opset = 1)
      : op_(std::move(op)), domain_(std::move(domain)), opset_(opset) {}
  MsModel& in(Tensor t) {
    inputs_.push_back({std::move(t), false});
    return *this;
  }
  MsModel& constant(Tensor t) {
    inputs_.push_back({std::move(t), true});
    return *this;
  }
  MsModel& none() {
    inputs_.push_back({Tensor(), false});
    return *this;
  }
  MsModel& attr(const std::string& k, int64_t v) {
    auto& a = add(k, onnx::AttributeProto::INT);
    a.set_i(v);
    return *this;
  }
  MsModel& attr(const std::string& k, int v) { return attr(k, int64_t{v}); }
  MsModel& attr(const std::string& k, float v) {
    add(k, onnx::AttributeProto::FLOAT).set_f(v);
    return *this;
  }
  MsModel& attr(const std::string& k, const std::vector<int64_t>& v) {
    auto& a = add(k, onnx::AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
    return *this;
  }
  // Which outputs the node has (false: left out), in order.
  MsModel& outputs(std::vector<bool> which) {
    outputs_ = std::move(which);
    return *this;
  }

  std::string bytes() const {
    onnx::ModelProto m;
    m.set_ir_version(8);
    auto* d = m.add_opset_import();
    d->set_domain("");
    d->set_version(domain_.empty() ? opset_ : 17);
    if (!domain_.empty()) {
      auto* o = m.add_opset_import();
      o->set_domain(domain_);
      o->set_version(opset_);
    }
    auto* g = m.mutable_graph();
    g->set_name("contrib");
    auto* n = g->add_node();
    n->set_op_type(op_);
    n->set_domain(domain_);
    n->set_name("node");
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Tensor& t = inputs_[i].t;
      if (!t.defined()) {
        n->add_input("");
        continue;
      }
      const std::string name = "in" + std::to_string(i);
      n->add_input(name);
      if (inputs_[i].constant) {
        auto* p = g->add_initializer();
        p->set_name(name);
        p->set_data_type(static_cast<int>(t.dtype()));
        for (int64_t x : t.shape()) p->add_dims(x);
        p->set_raw_data(std::string(static_cast<const char*>(t.raw_data()), t.nbytes()));
        continue;
      }
      auto* v = g->add_input();
      v->set_name(name);
      auto* tt = v->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(static_cast<int>(t.dtype()));
      auto* sh = tt->mutable_shape();
      for (int64_t x : t.shape()) sh->add_dim()->set_dim_value(x);
    }
    for (size_t o = 0; o < outputs_.size(); ++o) {
      if (!outputs_[o]) {
        n->add_output("");
        continue;
      }
      n->add_output("out" + std::to_string(o));
      g->add_output()->set_name("out" + std::to_string(o));
    }
    for (const auto& a : attrs_) *n->add_attribute() = a;
    return m.SerializeAsString();
  }

  // The outputs the node has, in order. `impl`: the node's implementation name.
  std::vector<Tensor> run(const std::string& provider = "cpu", int threads = 2,
                          std::string* impl = nullptr) const {
    const std::string b = bytes();
    SessionOptions o;
    o.providers = {provider};
    o.threads = threads;
    Session s = Session::load_bytes(b.data(), b.size(), o);
    std::map<std::string, Value> feeds;
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (inputs_[i].t.defined() && !inputs_[i].constant)
        feeds["in" + std::to_string(i)] = Value(inputs_[i].t);
    const std::vector<Value> got = s.run(feeds);
    if (impl && !s.placement().nodes.empty()) *impl = s.placement().nodes[0].impl;
    std::vector<Tensor> out;
    for (const Value& v : got) out.push_back(v.tensor());
    return out;
  }

 private:
  struct Input {
    Tensor t;
    bool constant = false;
  };
  onnx::AttributeProto& add(const std::string& k, onnx::AttributeProto::AttributeType t) {
    attrs_.emplace_back();
    attrs_.back().set_name(k);
    attrs_.back().set_type(t);
    return attrs_.back();
  }
  std::string op_, domain_;
  int opset_;
  std::vector<Input> inputs_;
  std::vector<onnx::AttributeProto> attrs_;
  std::vector<bool> outputs_ = {true};
};

// got (float32) against want elementwise: |got - want| <= tol * (1 + |want|).
void expect_close(const Tensor& got, const std::vector<double>& want, const Shape& shape,
                  double tol = 2e-5, const std::string& what = "") {
  ASSERT_EQ(got.dtype(), DType::Float32) << what;
  ASSERT_EQ(got.shape(), shape) << what;
  const Vec g = got.to_vector<float>();
  ASSERT_EQ(g.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (!(std::fabs(g[i] - want[i]) <= tol * (1 + std::fabs(want[i]))) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: got " << g[i] << ", want " << want[i];
}

std::vector<double> dbl(const Tensor& t) {
  const Vec v = t.to_vector<float>();
  return std::vector<double>(v.begin(), v.end());
}

// ---- normalization ----

// Skip(Simplified)LayerNormalization's outputs, naively.
struct SkipLnRef {
  std::vector<double> out, mean, inv, sum;
};
SkipLnRef skip_ln(const Tensor& x, const Tensor& skip, const Tensor& gamma, const Tensor* beta,
                  const Tensor* bias, double eps, bool simplified) {
  const int64_t h = x.shape().back(), rows = x.numel() / h, srows = skip.numel() / h;
  const auto xv = dbl(x), sv = dbl(skip), g = dbl(gamma);
  const auto b = beta ? dbl(*beta) : std::vector<double>(h, 0.0);
  const auto c = bias ? dbl(*bias) : std::vector<double>(h, 0.0);
  SkipLnRef r;
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<double> s(h);
    double m = 0, sq = 0;
    for (int64_t i = 0; i < h; ++i) {
      s[i] = xv[row * h + i] + sv[(row % srows) * h + i] + c[i];
      m += s[i];
    }
    m = simplified ? 0 : m / h;
    for (int64_t i = 0; i < h; ++i) sq += (s[i] - m) * (s[i] - m);
    const double inv = 1 / std::sqrt(sq / h + eps);
    for (int64_t i = 0; i < h; ++i) r.out.push_back((s[i] - m) * inv * g[i] + b[i]);
    r.mean.push_back(m);
    r.inv.push_back(inv);
    r.sum.insert(r.sum.end(), s.begin(), s.end());
  }
  return r;
}

TEST(ContribOps, SkipLayerNormalizationWithBetaBiasAndEveryOutput) {
  const Tensor x = rnd({2, 3, 16}, 1), skip = rnd({2, 3, 16}, 2), gamma = rnd({16}, 3),
               beta = rnd({16}, 4), bias = rnd({16}, 5);
  const auto out = MsModel("SkipLayerNormalization")
                       .in(x)
                       .in(skip)
                       .in(gamma)
                       .in(beta)
                       .in(bias)
                       .attr("epsilon", 1e-5f)
                       .outputs({true, true, true, true})
                       .run();
  const SkipLnRef r = skip_ln(x, skip, gamma, &beta, &bias, 1e-5, false);
  expect_close(out[0], r.out, {2, 3, 16}, 2e-5, "output");
  expect_close(out[1], r.mean, {2, 3, 1}, 2e-5, "mean");
  expect_close(out[2], r.inv, {2, 3, 1}, 2e-5, "inv_std_var");
  expect_close(out[3], r.sum, {2, 3, 16}, 1e-6, "input_skip_bias_sum");
}

TEST(ContribOps, SkipLayerNormalizationBroadcastsSkipAnd2DInput) {
  const Tensor x = rnd({2, 3, 8}, 6), gamma = rnd({8}, 7);
  for (const Shape& ss : {Shape{1, 3, 8}, Shape{3, 8}}) {
    const Tensor skip = rnd(ss, 8);
    const auto out =
        MsModel("SkipLayerNormalization").in(x).in(skip).in(gamma).constant(Tensor()).run();
    expect_close(out[0], skip_ln(x, skip, gamma, nullptr, nullptr, 1e-12, false).out, {2, 3, 8});
  }
  // 2-D [tokens, hidden], default epsilon 1e-12.
  const Tensor x2 = rnd({5, 8}, 9), s2 = rnd({5, 8}, 10);
  const auto out = MsModel("SkipLayerNormalization").in(x2).in(s2).in(gamma).run();
  expect_close(out[0], skip_ln(x2, s2, gamma, nullptr, nullptr, 1e-12, false).out, {5, 8});
  // A skip that fits neither form is an error naming it.
  EXPECT_THROW(MsModel("SkipLayerNormalization").in(x).in(rnd({2, 8}, 1)).in(gamma).run(), Error);
}

TEST(ContribOps, SkipSimplifiedLayerNormalizationAddsTheBiasIntoTheSum) {
  const Tensor x = rnd({2, 4, 16}, 11), skip = rnd({2, 4, 16}, 12), gamma = rnd({16}, 13),
               bias = rnd({16}, 14);
  const auto out = MsModel("SkipSimplifiedLayerNormalization")
                       .in(x)
                       .in(skip)
                       .in(gamma)
                       .in(bias)
                       .attr("epsilon", 1e-6f)
                       .outputs({true, true, true, true})
                       .run();
  const SkipLnRef r = skip_ln(x, skip, gamma, nullptr, &bias, 1e-6, true);
  expect_close(out[0], r.out, {2, 4, 16}, 2e-5, "output");
  expect_close(out[1], std::vector<double>(8, 0.0), {2, 4, 1}, 0, "mean (zeros, as ORT)");
  expect_close(out[2], r.inv, {2, 4, 1}, 2e-5, "inv_std_var");
  expect_close(out[3], r.sum, {2, 4, 16}, 1e-6, "input_skip_bias_sum");
}

TEST(ContribOps, SimplifiedLayerNormalizationInBothDomains) {
  const Tensor x = rnd({2, 3, 8}, 15);
  for (const std::string domain : {"", "com.microsoft"}) {
    // axis 1: the last two dimensions together; scale one value per normalized element.
    const Tensor scale = rnd({3, 8}, 16);
    const auto out = MsModel("SimplifiedLayerNormalization", domain, domain.empty() ? 17 : 1)
                         .in(x)
                         .in(scale)
                         .attr("axis", int64_t{1})
                         .outputs({true, true})
                         .run();
    const auto xv = dbl(x), sv = dbl(scale);
    std::vector<double> want, inv;
    for (int b = 0; b < 2; ++b) {
      double sq = 0;
      for (int i = 0; i < 24; ++i) sq += xv[b * 24 + i] * xv[b * 24 + i];
      const double r = 1 / std::sqrt(sq / 24 + 1e-5);
      inv.push_back(r);
      for (int i = 0; i < 24; ++i) want.push_back(xv[b * 24 + i] * r * sv[i]);
    }
    expect_close(out[0], want, {2, 3, 8}, 2e-5, domain);
    expect_close(out[1], inv, {2, 1, 1}, 2e-5, domain);
  }
}

// ---- activations ----

TEST(ContribOps, GeluFamily) {
  const Tensor x = rnd({3, 5, 16}, 17, -6.0f, 6.0f), bias = rnd({16}, 18);
  const auto xv = dbl(x), bv = dbl(bias);
  const auto gelu = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
  const auto fast_gelu = [](double v) {
    return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  };
  std::vector<double> w_fast, w_fast_bias, w_gelu, w_bias_gelu, w_quick;
  for (size_t i = 0; i < xv.size(); ++i) {
    const double v = xv[i], vb = v + bv[i % 16];
    w_fast.push_back(fast_gelu(v));
    w_fast_bias.push_back(fast_gelu(vb));
    w_gelu.push_back(gelu(v));
    w_bias_gelu.push_back(gelu(vb));
    w_quick.push_back(v / (1 + std::exp(-1.5 * v)));
  }
  const Shape s{3, 5, 16};
  expect_close(MsModel("FastGelu").in(x).run()[0], w_fast, s, 1e-5, "FastGelu");
  expect_close(MsModel("FastGelu").in(x).in(bias).run()[0], w_fast_bias, s, 1e-5, "FastGelu+b");
  expect_close(MsModel("Gelu").in(x).run()[0], w_gelu, s, 1e-5, "Gelu");
  expect_close(MsModel("BiasGelu").in(x).in(bias).run()[0], w_bias_gelu, s, 1e-5, "BiasGelu");
  expect_close(MsModel("QuickGelu").in(x).attr("alpha", 1.5f).run()[0], w_quick, s, 1e-5,
               "QuickGelu");
  // BiasAdd: X + bias + skip.
  const Tensor skip = rnd(s, 19);
  const auto sk = dbl(skip);
  std::vector<double> w_add;
  for (size_t i = 0; i < xv.size(); ++i) w_add.push_back(xv[i] + bv[i % 16] + sk[i]);
  expect_close(MsModel("BiasAdd").in(x).in(bias).in(skip).run()[0], w_add, s, 1e-6, "BiasAdd");
  // Float16 in, float16 out.
  std::vector<Float16> h;
  for (float v : x.to_vector<float>()) h.push_back(Float16(v));
  const Tensor got = MsModel("Gelu").in(Tensor::from_vector<Float16>(s, h)).run()[0];
  ASSERT_EQ(got.dtype(), DType::Float16);
  const auto gh = got.to_vector<Float16>();
  for (size_t i = 0; i < gh.size(); ++i)
    EXPECT_NEAR(static_cast<float>(gh[i]), gelu(static_cast<float>(h[i])), 1e-2) << i;
}

// ---- EmbedLayerNormalization ----

TEST(ContribOps, EmbedLayerNormalization) {
  const int64_t B = 2, S = 5, H = 8;
  const Tensor ids = i32({B, S}, {1, 4, 9, 0, 3, 2, 2, 7, 5, 6});
  const Tensor seg = i32({B, S}, {0, 0, 1, 1, 1, 0, 1, 0, 1, 0});
  const Tensor word = rnd({10, H}, 20), pos = rnd({16, H}, 21), segt = rnd({2, H}, 22),
               gamma = rnd({H}, 23), beta = rnd({H}, 24);
  const Tensor mask = i32({B, S}, {1, 1, 1, 0, 0, 1, 0, 1, 1, 0});
  for (bool with_pos : {false, true}) {
    MsModel m("EmbedLayerNormalization");
    m.in(ids).in(seg).in(word).in(pos).in(segt).in(gamma).in(beta).in(mask);
    const std::vector<int32_t> pid = {3, 2, 1, 0, 4};
    if (with_pos) m.in(i32({1, S}, pid));
    const auto out = m.attr("epsilon", 1e-5f).outputs({true, true, true}).run();
    const auto w = dbl(word), p = dbl(pos), sg = dbl(segt), g = dbl(gamma), bt = dbl(beta);
    const auto iv = ids.to_vector<int32_t>(), sv = seg.to_vector<int32_t>();
    std::vector<double> y, sum;
    for (int64_t t = 0; t < B * S; ++t) {
      const int64_t pp = with_pos ? pid[t % S] : t % S;
      std::vector<double> e(H);
      double m0 = 0, v0 = 0;
      for (int64_t i = 0; i < H; ++i) {
        e[i] = w[iv[t] * H + i] + p[pp * H + i] + sg[sv[t] * H + i];
        m0 += e[i] / H;
      }
      for (int64_t i = 0; i < H; ++i) v0 += (e[i] - m0) * (e[i] - m0) / H;
      for (int64_t i = 0; i < H; ++i)
        y.push_back((e[i] - m0) / std::sqrt(v0 + 1e-5) * g[i] + bt[i]);
      sum.insert(sum.end(), e.begin(), e.end());
    }
    expect_close(out[0], y, {B, S, H}, 2e-5, "output");
    expect_close(out[2], sum, {B, S, H}, 1e-6, "embedding_sum");
    EXPECT_EQ(out[1].to_vector<int32_t>(), (std::vector<int32_t>{3, 3}));
  }
  // An id outside the table is an error, not a read past it.
  EXPECT_THROW(MsModel("EmbedLayerNormalization")
                   .in(i32({1, 2}, {1, 10}))
                   .none()
                   .in(word)
                   .in(pos)
                   .none()
                   .in(gamma)
                   .in(beta)
                   .run(),
               Error);
}

// ---- RotaryEmbedding ----

// x rotated per head (pairs (2i, 2i+1) or (i, i + rot/2)) at position pos, in double.
void rotate(std::vector<double>& x, int64_t off, int64_t rot, const std::vector<double>& cos,
            const std::vector<double>& sin, int64_t pos, int64_t half, bool interleaved) {
  for (int64_t i = 0; i < rot / 2; ++i) {
    const int64_t a = off + (interleaved ? 2 * i : i),
                  b = off + (interleaved ? 2 * i + 1 : i + rot / 2);
    const double c = cos[pos * half + i], s = sin[pos * half + i], xa = x[a], xb = x[b];
    x[a] = xa * c - xb * s;
    x[b] = xb * c + xa * s;
  }
}

TEST(ContribOps, RotaryEmbeddingFormsAndPositions) {
  const int64_t B = 2, S = 3, N = 2, H = 8, M = 16;
  const Tensor cos = rnd({M, H / 2}, 25), sin = rnd({M, H / 2}, 26);
  const auto cv = dbl(cos), sv = dbl(sin);
  const Tensor x = rnd({B, S, N * H}, 27);
  for (bool il : {false, true}) {
    // position_ids [1]: p0 + s for every batch entry.
    auto want = dbl(x);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t n = 0; n < N; ++n)
          rotate(want, ((b * S + s) * N + n) * H, H, cv, sv, 2 + s, H / 2, il);
    const auto got = MsModel("RotaryEmbedding")
                         .in(x)
                         .in(i64({1}, {2}))
                         .in(cos)
                         .in(sin)
                         .attr("interleaved", int64_t{il})
                         .run();
    expect_close(got[0], want, {B, S, N * H}, 1e-5, il ? "interleaved p0" : "p0");
    // position_ids [B, S]; 4-D [B, N, S, H] input.
    const std::vector<int64_t> pid = {5, 0, 15, 3, 3, 9};
    const Tensor x4 = rnd({B, N, S, H}, 28);
    auto want4 = dbl(x4);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s)
          rotate(want4, ((b * N + n) * S + s) * H, H, cv, sv, pid[b * S + s], H / 2, il);
    const auto got4 = MsModel("RotaryEmbedding")
                          .in(x4)
                          .in(i64({B, S}, pid))
                          .in(cos)
                          .in(sin)
                          .attr("interleaved", int64_t{il})
                          .run();
    expect_close(got4[0], want4, {B, N, S, H}, 1e-5, "4-D");
    // Partial: rotary_embedding_dim 4 of heads of 8 (num_heads needed).
    const Tensor c2 = rnd({M, 2}, 29), s2 = rnd({M, 2}, 30);
    auto want2 = dbl(x);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t n = 0; n < N; ++n)
          rotate(want2, ((b * S + s) * N + n) * H, 4, dbl(c2), dbl(s2), pid[b * S + s], 2, il);
    const auto got2 = MsModel("RotaryEmbedding")
                          .in(x)
                          .in(i64({B, S}, pid))
                          .in(c2)
                          .in(s2)
                          .attr("interleaved", int64_t{il})
                          .attr("rotary_embedding_dim", 4)
                          .attr("num_heads", 2)
                          .run();
    expect_close(got2[0], want2, {B, S, N * H}, 1e-5, "partial");
  }
  EXPECT_THROW(MsModel("RotaryEmbedding").in(x).in(i64({1}, {15})).in(cos).in(sin).run(), Error);
}

// ---- MatMulNBits and GatherBlockQuantized ----

// Values < 2^bits packed low bits first into bytes, `per_row` values per row of `rows`.
std::vector<uint8_t> pack_bits(const std::vector<int>& q, int64_t rows, int64_t per_row, int bits) {
  const int64_t bytes = (per_row * bits + 7) / 8;
  std::vector<uint8_t> out(static_cast<size_t>(rows * bytes), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < per_row; ++i) {
      const int64_t bit = i * bits;
      out[r * bytes + bit / 8] |= static_cast<uint8_t>(q[r * per_row + i] << (bit % 8));
    }
  return out;
}

std::vector<int> random_codes(int64_t n, int bits, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<int> q(static_cast<size_t>(n));
  for (int& v : q) v = static_cast<int>(gen() % (1u << bits));
  return q;
}

struct NBitsCase {
  int64_t K, N, block;
  int bits;
  enum { NoZp, PackedZp, FloatZp } zp;
  bool bias, g_idx;
};

// Runs MatMulNBits with constant weights on `provider` and compares with A x W^T in double.
void check_nbits(const NBitsCase& c, const std::string& provider, bool expect_packed) {
  SCOPED_TRACE("K=" + std::to_string(c.K) + " N=" + std::to_string(c.N) +
               " block=" + std::to_string(c.block) + " bits=" + std::to_string(c.bits) +
               " zp=" + std::to_string(int(c.zp)) + " " + provider);
  const int64_t kb = (c.K + c.block - 1) / c.block;
  const std::vector<int> q = random_codes(c.N * kb * c.block, c.bits, 31);
  const std::vector<uint8_t> b = pack_bits(q, c.N * kb, c.block, c.bits);
  const Tensor scales = rnd({c.N, kb}, 32, 0.01f, 0.1f);
  const auto sc = dbl(scales);
  std::vector<double> zp(static_cast<size_t>(c.N * kb), double(1 << (c.bits - 1)));
  Tensor zp_t;
  if (c.zp == NBitsCase::PackedZp) {
    const std::vector<int> z = random_codes(c.N * kb, c.bits, 33);
    for (size_t i = 0; i < z.size(); ++i) zp[i] = z[i];
    const std::vector<uint8_t> zb = pack_bits(z, c.N, kb, c.bits);
    zp_t = Tensor::from_vector<uint8_t>({c.N, static_cast<int64_t>(zb.size()) / c.N}, zb);
  } else if (c.zp == NBitsCase::FloatZp) {
    zp_t = rnd({c.N, kb}, 34, 0.0f, float(1 << c.bits));
    zp = dbl(zp_t);
  }
  // g_idx: a permutation of the blocks' scales (k's block reversed).
  std::vector<int32_t> g(static_cast<size_t>(c.K));
  for (int64_t k = 0; k < c.K; ++k) g[k] = static_cast<int32_t>(kb - 1 - k / c.block);
  const Tensor bias = rnd({c.N}, 35);
  const Tensor a = rnd({3, 5, c.K}, 36);
  MsModel m("MatMulNBits");
  m.in(a)
      .constant(Tensor::from_vector<uint8_t>({c.N, kb, c.block * c.bits / 8}, b))
      .constant(scales);
  if (c.zp != NBitsCase::NoZp) m.constant(zp_t);
  else
    m.none();
  if (c.g_idx) m.constant(i32({c.K}, g));
  else
    m.none();
  if (c.bias) m.constant(bias);
  m.attr("K", c.K).attr("N", c.N).attr("bits", int64_t{c.bits}).attr("block_size", c.block);
  std::string impl;
  const Tensor y = m.run(provider, 2, &impl)[0];
  EXPECT_EQ(impl.find("packed") != std::string::npos, expect_packed) << impl;
  const auto av = dbl(a), bv = dbl(bias);
  std::vector<double> want;
  for (int64_t p = 0; p < 15; ++p)
    for (int64_t n = 0; n < c.N; ++n) {
      double acc = c.bias ? bv[n] : 0.0;
      for (int64_t k = 0; k < c.K; ++k) {
        const int64_t blk = c.g_idx ? g[k] : k / c.block, s = n * kb + blk;
        acc +=
            av[p * c.K + k] * (q[(n * kb + k / c.block) * c.block + k % c.block] - zp[s]) * sc[s];
      }
      want.push_back(acc);
    }
  expect_close(y, want, {3, 5, c.N}, 2e-5);
}

TEST(ContribOps, MatMulNBitsDequantizesEveryLayout) {
  const bool packed = fast::avx2::supported();
  const std::vector<NBitsCase> cases = {
      {64, 24, 32, 4, NBitsCase::NoZp, false, false},
      {48, 16, 32, 4, NBitsCase::PackedZp, true, false},  // K not a multiple of the block
      {256, 32, 128, 4, NBitsCase::FloatZp, false, false},
      {64, 8, 16, 4, NBitsCase::PackedZp, false, false},
      {512, 16, 256, 4, NBitsCase::NoZp, true, false},
      {96, 16, 32, 4, NBitsCase::FloatZp, false, true},  // g_idx
      {64, 24, 32, 8, NBitsCase::PackedZp, true, false},
      {64, 24, 16, 2, NBitsCase::FloatZp, false, false},
  };
  for (const NBitsCase& c : cases) {
    check_nbits(c, "cpu", packed);
    check_nbits(c, "cpu-ref", false);
  }
  // g_idx with packed zero points: ONNX Runtime 1.32 ignores the zero points there; refused.
  try {
    MsModel("MatMulNBits")
        .in(rnd({1, 32}, 1))
        .constant(Tensor::from_vector<uint8_t>({8, 1, 16}, std::vector<uint8_t>(128, 0x11)))
        .constant(rnd({8, 1}, 2))
        .constant(Tensor::from_vector<uint8_t>({8, 1}, std::vector<uint8_t>(8, 3)))
        .constant(i32({32}, std::vector<int32_t>(32, 0)))
        .attr("K", 32)
        .attr("N", 8)
        .attr("block_size", 32)
        .run();
    ADD_FAILURE() << "expected UnsupportedOp";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp) << e.what();
    EXPECT_NE(std::string(e.what()).find("g_idx"), std::string::npos) << e.what();
  }
  // N not a multiple of 8 takes the packed GEMM only where its panels are 32 wide (AVX-512).
  check_nbits({64, 12, 32, 4, NBitsCase::NoZp, false, false}, "cpu-ref", false);
}

TEST(ContribOps, MatMulNBitsWithWeightsAtRunTimeAndAnOmittedProjection) {
  const int64_t K = 32, N = 8;
  const std::vector<int> q = random_codes(N * K, 4, 37);
  const std::vector<uint8_t> b = pack_bits(q, N, K, 4);
  const Tensor scales = rnd({N, 1}, 38, 0.01f, 0.1f), a = rnd({2, K}, 39);
  const Tensor y = MsModel("MatMulNBits")
                       .in(a)
                       .in(Tensor::from_vector<uint8_t>({N, 1, 16}, b))
                       .in(scales)
                       .attr("K", K)
                       .attr("N", N)
                       .attr("block_size", K)
                       .run()[0];
  const auto av = dbl(a), sc = dbl(scales);
  std::vector<double> want;
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += av[p * K + k] * (q[n * K + k] - 8) * sc[n];
      want.push_back(acc);
    }
  expect_close(y, want, {2, N});
  // B [0, 1, 16]: an omitted projection is its bias.
  const Tensor bias = rnd({N}, 40);
  const Tensor y0 = MsModel("MatMulNBits")
                        .in(a)
                        .constant(Tensor::from_vector<uint8_t>({0, 1, 16}, {}))
                        .constant(Tensor::from_vector<float>({0}, {}))
                        .none()
                        .none()
                        .in(bias)
                        .attr("K", K)
                        .attr("N", N)
                        .attr("block_size", K)
                        .run("cpu-ref")[0];
  std::vector<double> wb;
  for (int p = 0; p < 2; ++p)
    for (double v : dbl(bias)) wb.push_back(v);
  expect_close(y0, wb, {2, N});
}

TEST(ContribOps, GatherBlockQuantizedUint8) {
  const int64_t V = 10, C = 64, bs = 32, nb = C / bs;
  for (int bits : {4, 8, 2}) {
    for (bool with_zp : {false, true}) {
      const std::vector<int> q = random_codes(V * C, bits, 41);
      const std::vector<uint8_t> data = pack_bits(q, V, C, bits);
      const Tensor scales = rnd({V, nb}, 42, 0.01f, 0.1f);
      const std::vector<int> z = random_codes(V * nb, bits, 43);
      const std::vector<uint8_t> zb = pack_bits(z, V, nb, bits);
      const Tensor idx = i64({2, 3}, {1, 3, -1, 0, 9, 11});
      MsModel m("GatherBlockQuantized");
      m.constant(Tensor::from_vector<uint8_t>({V, C * bits / 8}, data)).in(idx).constant(scales);
      if (with_zp)
        m.constant(Tensor::from_vector<uint8_t>({V, static_cast<int64_t>(zb.size()) / V}, zb));
      const Tensor y =
          m.attr("bits", int64_t{bits}).attr("block_size", bs).attr("quantize_axis", 1).run()[0];
      const auto sc = dbl(scales);
      std::vector<double> want;
      for (int64_t v : idx.to_vector<int64_t>()) {
        if (v < 0) v += V;
        for (int64_t c = 0; c < C; ++c) {
          if (v >= V) {
            want.push_back(0);  // out of range: zeros, as ONNX Runtime
            continue;
          }
          const double zp = with_zp ? z[v * nb + c / bs] : double(1 << (bits - 1));
          want.push_back((q[v * C + c] - zp) * sc[v * nb + c / bs]);
        }
      }
      expect_close(y, want, {2, 3, C}, 1e-6, "bits " + std::to_string(bits));
    }
  }
}

// ---- attention ----

// softmax(scale * q.k (softcapped) + add(b, n, i, j)) v over keys j in [0, T), in double, for
// q [B, N, S, H] and k, v [B, Nk, T, H / Hv] (query head n reads key head n / (N / Nk)); add
// returns -inf to leave a key out. Output [B, S, N * Hv].
struct NaiveAttention {
  int64_t B, N, Nk, S, T, H, Hv;
  std::vector<double> q, k, v;
  double scale;
  std::function<double(int64_t, int64_t, int64_t, int64_t)> add;
  double softcap = 0;
  bool smooth = false;

  std::vector<double> run() const {
    std::vector<double> out(static_cast<size_t>(B * S * N * Hv), 0.0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t n = 0; n < N; ++n) {
        const int64_t kn = n / (N / Nk);
        for (int64_t i = 0; i < S; ++i) {
          std::vector<double> s(T);
          double m = smooth ? 0 : kNegInf;
          for (int64_t j = 0; j < T; ++j) {
            double d = 0;
            for (int64_t e = 0; e < H; ++e)
              d += q[((b * N + n) * S + i) * H + e] * k[((b * Nk + kn) * T + j) * H + e];
            d *= scale;
            if (softcap > 0) d = softcap * std::tanh(d / softcap);
            s[j] = d + (add ? add(b, n, i, j) : 0.0);
            m = std::max(m, s[j]);
          }
          if (m == kNegInf) continue;
          double den = smooth ? std::exp(-m) : 0;
          for (double& x : s) den += (x = std::exp(x - m));
          for (int64_t j = 0; j < T; ++j)
            for (int64_t e = 0; e < Hv; ++e)
              out[((b * S + i) * N + n) * Hv + e] +=
                  s[j] / den * v[((b * Nk + kn) * T + j) * Hv + e];
        }
      }
    return out;
  }
};

// [B, L, N * h] rows (row stride `stride`, column offset `col`) as [B, N, L, h] in double.
std::vector<double> split_heads(const std::vector<double>& x, int64_t B, int64_t L, int64_t N,
                                int64_t h, int64_t stride, int64_t col) {
  std::vector<double> out(static_cast<size_t>(B * N * L * h));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t l = 0; l < L; ++l)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t e = 0; e < h; ++e)
          out[((b * N + n) * L + l) * h + e] = x[(b * L + l) * stride + col + n * h + e];
  return out;
}

// past [B, N, P, h] then new [B, N, L, h] along the sequence.
std::vector<double> concat_seq(const std::vector<double>& past, const std::vector<double>& now,
                               int64_t BN, int64_t P, int64_t L, int64_t h) {
  std::vector<double> out;
  for (int64_t i = 0; i < BN; ++i) {
    out.insert(out.end(), past.begin() + i * P * h, past.begin() + (i + 1) * P * h);
    out.insert(out.end(), now.begin() + i * L * h, now.begin() + (i + 1) * L * h);
  }
  return out;
}

TEST(ContribOps, AttentionMaskFormsPastAndUnidirectional) {
  const int64_t B = 2, S = 4, E = 16, N = 2, H = 8, P = 3, D = 3 * E;
  const Tensor x = rnd({B, S, E}, 44), w = rnd({E, D}, 45, -0.5f, 0.5f), bias = rnd({D}, 46);
  const Tensor past = rnd({2, B, N, P, H}, 47);
  const auto xv = dbl(x), wv = dbl(w), bv = dbl(bias), pv = dbl(past);
  std::vector<double> qkv(static_cast<size_t>(B * S * D));
  for (int64_t r = 0; r < B * S; ++r)
    for (int64_t d = 0; d < D; ++d) {
      double acc = bv[d];
      for (int64_t e = 0; e < E; ++e) acc += xv[r * E + e] * wv[e * D + d];
      qkv[r * D + d] = acc;
    }
  const double filter = -10000;
  struct Case {
    std::string name;
    Tensor mask;
    bool past, uni;
    std::function<double(int64_t, int64_t, int64_t, int64_t)> add;
  };
  const std::vector<Case> cases = {
      {"plain", Tensor(), false, false, nullptr},
      {"lengths", i32({B}, {3, 2}), false, false,
       [&](int64_t b, int64_t, int64_t, int64_t j) { return j >= (b ? 2 : 3) ? filter : 0.0; }},
      {"end/start", i32({2 * B}, {3, 4, 1, 0}), false, false,
       [&](int64_t b, int64_t, int64_t, int64_t j) {
         const int64_t end = b ? 4 : 3, start = b ? 0 : 1;
         return j >= end || j < start ? filter : 0.0;
       }},
      {"raw 2-D", i32({B, S}, {1, 1, 0, 1, 1, 0, 0, 0}), false, false,
       [&](int64_t b, int64_t, int64_t, int64_t j) {
         static const int m[2][4] = {{1, 1, 0, 1}, {1, 0, 0, 0}};
         return m[b][j] ? 0.0 : filter;
       }},
      {"unidirectional", Tensor(), false, true,
       [&](int64_t, int64_t, int64_t i, int64_t j) { return j > i ? filter : 0.0; }},
      {"past + unidirectional + raw", i32({B, P + S}, {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}),
       true, true,
       [&](int64_t b, int64_t, int64_t i, int64_t j) {
         const bool masked = (b == 0 && j == 0) || (b == 1 && j == P + S - 1);
         return (masked ? filter : 0.0) + (j > P + i ? filter : 0.0);
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t Pc = c.past ? P : 0, T = Pc + S;
    NaiveAttention ref{B,
                       N,
                       N,
                       S,
                       T,
                       H,
                       H,
                       split_heads(qkv, B, S, N, H, D, 0),
                       {},
                       {},
                       1 / std::sqrt(double(H)),
                       c.add};
    ref.k = split_heads(qkv, B, S, N, H, D, E);
    ref.v = split_heads(qkv, B, S, N, H, D, 2 * E);
    if (c.past) {
      ref.k = concat_seq(std::vector<double>(pv.begin(), pv.begin() + B * N * P * H), ref.k, B * N,
                         P, S, H);
      ref.v = concat_seq(std::vector<double>(pv.begin() + B * N * P * H, pv.end()), ref.v, B * N, P,
                         S, H);
    }
    for (const std::string provider : {"cpu", "cpu-ref"})
      for (bool constant : {false, true}) {
        MsModel m("Attention");
        m.in(x);
        if (constant) m.constant(w).constant(bias);
        else
          m.in(w).in(bias);
        if (c.mask.defined()) m.in(c.mask);
        else
          m.none();
        if (c.past) m.in(past);
        m.attr("num_heads", N).attr("unidirectional", int64_t{c.uni}).outputs({true, true});
        std::string impl;
        const auto out = m.run(provider, 2, &impl);
        expect_close(out[0], ref.run(), {B, S, E}, 2e-5, provider + " output " + impl);
        std::vector<double> present = ref.k;
        present.insert(present.end(), ref.v.begin(), ref.v.end());
        expect_close(out[1], present, {2, B, N, T, H}, 2e-5, "present");
        if (provider == "cpu" && constant && fast::avx2::supported()) {
          EXPECT_NE(impl.find("packed"), std::string::npos) << impl;
        }
      }
  }
}

TEST(ContribOps, AttentionBiasScaleAndHiddenSizes) {
  const int64_t B = 1, S = 3, E = 8, N = 2;
  // Q and K of 8, V of 4 (qkv_hidden_sizes): heads of 4 and 2.
  const Tensor x = rnd({B, S, E}, 48), w = rnd({E, 20}, 49, -0.5f, 0.5f);
  const Tensor ab = rnd({1, N, S, S}, 50);
  const auto xv = dbl(x), wv = dbl(w), abv = dbl(ab);
  std::vector<double> qkv(static_cast<size_t>(S * 20));
  for (int64_t r = 0; r < S; ++r)
    for (int64_t d = 0; d < 20; ++d)
      for (int64_t e = 0; e < E; ++e) qkv[r * 20 + d] += xv[r * E + e] * wv[e * 20 + d];
  NaiveAttention ref{
      B,
      N,
      N,
      S,
      S,
      4,
      2,
      split_heads(qkv, B, S, N, 4, 20, 0),
      split_heads(qkv, B, S, N, 4, 20, 8),
      split_heads(qkv, B, S, N, 2, 20, 16),
      0.3,
      [&](int64_t, int64_t n, int64_t i, int64_t j) { return abv[(n * S + i) * S + j]; }};
  const auto out = MsModel("Attention")
                       .in(x)
                       .constant(w)
                       .none()
                       .none()
                       .none()
                       .in(ab)
                       .attr("num_heads", N)
                       .attr("scale", 0.3f)
                       .attr("qkv_hidden_sizes", std::vector<int64_t>{8, 8, 4})
                       .run();
  expect_close(out[0], ref.run(), {B, S, 4});
}

TEST(ContribOps, MultiHeadAttentionForms) {
  const int64_t B = 2, S = 3, L = 5, N = 2, H = 4, D = N * H, P = 2;
  const Tensor q = rnd({B, S, D}, 51), k = rnd({B, L, D}, 52), v = rnd({B, L, D}, 53),
               bias = rnd({3 * D}, 54), pk = rnd({B, N, P, H}, 55), pv = rnd({B, N, P, H}, 56);
  const auto bv = dbl(bias);
  const auto with_bias = [&](const Tensor& t, int64_t off) {
    auto x = dbl(t);
    for (size_t i = 0; i < x.size(); ++i) x[i] += bv[off + static_cast<int64_t>(i) % D];
    return x;
  };
  const double scale = 1 / std::sqrt(double(H));
  // Cross attention with bias and a [B, L] key padding mask; past and present.
  {
    const Tensor kpm = i32({B, P + L}, {1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0});
    const auto m = kpm.to_vector<int32_t>();
    NaiveAttention ref{
        B,
        N,
        N,
        S,
        P + L,
        H,
        H,
        split_heads(with_bias(q, 0), B, S, N, H, D, 0),
        concat_seq(dbl(pk), split_heads(with_bias(k, D), B, L, N, H, D, 0), B * N, P, L, H),
        concat_seq(dbl(pv), split_heads(with_bias(v, 2 * D), B, L, N, H, D, 0), B * N, P, L, H),
        scale,
        [&](int64_t b, int64_t, int64_t, int64_t j) {
          return m[b * (P + L) + j] ? 0.0 : -10000.0;
        }};
    const auto out = MsModel("MultiHeadAttention")
                         .in(q)
                         .in(k)
                         .in(v)
                         .in(bias)
                         .in(kpm)
                         .none()
                         .in(pk)
                         .in(pv)
                         .attr("num_heads", N)
                         .outputs({true, true, true})
                         .run();
    expect_close(out[0], ref.run(), {B, S, D}, 2e-5, "output");
    expect_close(out[1], ref.k, {B, N, P + L, H}, 1e-6, "present_key");
    expect_close(out[2], ref.v, {B, N, P + L, H}, 1e-6, "present_value");
  }
  // Key and value already split into heads (no bias on them), unidirectional self attention.
  {
    const Tensor kh = rnd({B, N, L, H}, 57), vh = rnd({B, N, L, H}, 58);
    NaiveAttention ref{B,       N,       N,     S,
                       L,       H,       H,     split_heads(with_bias(q, 0), B, S, N, H, D, 0),
                       dbl(kh), dbl(vh), scale, nullptr};
    const auto out =
        MsModel("MultiHeadAttention").in(q).in(kh).in(vh).in(bias).attr("num_heads", N).run();
    expect_close(out[0], ref.run(), {B, S, D}, 2e-5, "heads");
  }
  // Packed QKV [B, S, N, 3, H] (ONNX Runtime's CPU kernel refuses it; the layout is its CUDA
  // kernel's), causal.
  {
    const Tensor qkv = rnd({B, S, N, 3, H}, 59);
    const auto p = dbl(qkv);
    std::vector<double> qq, kk, vv;
    for (int which = 0; which < 3; ++which) {
      std::vector<double>& dst = which == 0 ? qq : which == 1 ? kk : vv;
      dst.resize(static_cast<size_t>(B * N * S * H));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t n = 0; n < N; ++n)
            for (int64_t e = 0; e < H; ++e)
              dst[((b * N + n) * S + s) * H + e] = p[(((b * S + s) * N + n) * 3 + which) * H + e];
    }
    NaiveAttention ref{
        B,  N,     N,
        S,  S,     H,
        H,  qq,    kk,
        vv, scale, [](int64_t, int64_t, int64_t i, int64_t j) {
                         return j > i ? -10000.0 : 0.0; }};
    const auto out =
        MsModel("MultiHeadAttention").in(qkv).attr("num_heads", N).attr("unidirectional", 1).run();
    expect_close(out[0], ref.run(), {B, S, D}, 2e-5, "packed qkv");
  }
}

// GroupQueryAttention's reference: the cache rules of gqa.cpp's header, in double.
struct GqaCase {
  std::string name;
  int64_t B, S, Pbuf;
  std::vector<int32_t> seqlens;
  int32_t total;
  int64_t window = -1;
  float softcap = 0;
  bool rotary = false, interleaved = false, packed = false, smooth = false;
};

void check_gqa(const GqaCase& c) {
  SCOPED_TRACE(c.name);
  const int64_t B = c.B, S = c.S, N = 4, Nk = 2, H = 16, Pbuf = c.Pbuf, M = 32;
  const Tensor q = rnd({B, S, N * H}, 60), k = rnd({B, S, Nk * H}, 61), v = rnd({B, S, Nk * H}, 62);
  const Tensor pk = rnd({B, Nk, Pbuf, H}, 63), pv = rnd({B, Nk, Pbuf, H}, 64);
  const Tensor cos = rnd({M, H / 2}, 65), sin = rnd({M, H / 2}, 66);
  const bool prompt = S == c.total;
  const int64_t Tp = std::max<int64_t>(Pbuf, c.total);
  auto qh = split_heads(dbl(q), B, S, N, H, N * H, 0);
  auto kn = split_heads(dbl(k), B, S, Nk, H, Nk * H, 0);
  const auto vn = split_heads(dbl(v), B, S, Nk, H, Nk * H, 0);
  std::vector<int64_t> past(B);
  for (int64_t b = 0; b < B; ++b) past[b] = prompt ? 0 : c.seqlens[b] + 1 - S;
  if (c.rotary)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s) {
        for (int64_t n = 0; n < N; ++n)
          rotate(qh, ((b * N + n) * S + s) * H, H, dbl(cos), dbl(sin), past[b] + s, H / 2,
                 c.interleaved);
        for (int64_t n = 0; n < Nk; ++n)
          rotate(kn, ((b * Nk + n) * S + s) * H, H, dbl(cos), dbl(sin), past[b] + s, H / 2,
                 c.interleaved);
      }
  std::vector<double> kp(static_cast<size_t>(B * Nk * Tp * H), 0.0), vp = kp;
  const auto pkv = dbl(pk), pvv = dbl(pv);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < Nk; ++n) {
      for (int64_t j = 0; j < past[b]; ++j)
        for (int64_t e = 0; e < H; ++e) {
          kp[((b * Nk + n) * Tp + j) * H + e] = pkv[((b * Nk + n) * Pbuf + j) * H + e];
          vp[((b * Nk + n) * Tp + j) * H + e] = pvv[((b * Nk + n) * Pbuf + j) * H + e];
        }
      for (int64_t s = 0; s < S; ++s)
        for (int64_t e = 0; e < H; ++e) {
          kp[((b * Nk + n) * Tp + past[b] + s) * H + e] = kn[((b * Nk + n) * S + s) * H + e];
          vp[((b * Nk + n) * Tp + past[b] + s) * H + e] = vn[((b * Nk + n) * S + s) * H + e];
        }
    }
  NaiveAttention ref{B,
                     N,
                     Nk,
                     S,
                     Tp,
                     H,
                     H,
                     qh,
                     kp,
                     vp,
                     1 / std::sqrt(double(H)),
                     [&](int64_t b, int64_t, int64_t i, int64_t j) {
                       const int64_t p = past[b] + i, tb = c.seqlens[b] + 1;
                       if (j > p || j >= tb) return kNegInf;
                       if (c.window > 0 && j <= p - c.window) return kNegInf;
                       return 0.0;
                     },
                     c.softcap,
                     c.smooth};
  MsModel m("GroupQueryAttention");
  if (c.packed) {
    std::vector<float> all;
    const Vec qv = q.to_vector<float>(), kv = k.to_vector<float>(), vv = v.to_vector<float>();
    for (int64_t r = 0; r < B * S; ++r) {
      all.insert(all.end(), qv.begin() + r * N * H, qv.begin() + (r + 1) * N * H);
      all.insert(all.end(), kv.begin() + r * Nk * H, kv.begin() + (r + 1) * Nk * H);
      all.insert(all.end(), vv.begin() + r * Nk * H, vv.begin() + (r + 1) * Nk * H);
    }
    m.in(Tensor::from_vector<float>({B, S, (N + 2 * Nk) * H}, all)).none().none();
  } else {
    m.in(q).in(k).in(v);
  }
  if (Pbuf > 0) m.in(pk).in(pv);
  else
    m.none().none();
  m.in(i32({B}, c.seqlens)).in(Tensor::from_vector<int32_t>({}, {c.total}));
  if (c.rotary) m.in(cos).in(sin);
  m.attr("num_heads", N).attr("kv_num_heads", Nk).outputs({true, true, true});
  if (c.window > 0) m.attr("local_window_size", c.window);
  if (c.softcap > 0) m.attr("softcap", c.softcap);
  if (c.rotary) m.attr("do_rotary", 1).attr("rotary_interleaved", int64_t{c.interleaved});
  if (c.smooth) m.attr("smooth_softmax", 1);
  const auto out = m.run();
  expect_close(out[0], ref.run(), {B, S, N * H}, 2e-5, "output");
  expect_close(out[1], kp, {B, Nk, Tp, H}, 1e-5, "present_key");
  expect_close(out[2], vp, {B, Nk, Tp, H}, 1e-6, "present_value");
}

TEST(ContribOps, GroupQueryAttentionPromptAndDecode) {
  check_gqa({"prompt, right padded", 2, 3, 0, {2, 1}, 3});
  check_gqa({"prompt into a buffer", 2, 3, 8, {2, 2}, 3});
  check_gqa({"decode", 2, 1, 5, {5, 3}, 6});
  check_gqa({"decode into a buffer", 2, 1, 8, {5, 3}, 6});
  check_gqa({"chunk after a past", 1, 3, 5, {7}, 8});
  check_gqa({"local window", 1, 3, 5, {7}, 8, 4});
  check_gqa({"softcap", 2, 3, 0, {2, 2}, 3, -1, 2.0f});
  check_gqa({"rotary prompt", 2, 3, 0, {2, 1}, 3, -1, 0, true, false});
  check_gqa({"rotary interleaved decode", 2, 1, 5, {5, 3}, 6, -1, 0, true, true});
  check_gqa({"packed", 2, 3, 0, {2, 2}, 3, -1, 0, false, false, true});
  check_gqa({"smooth softmax", 1, 3, 5, {7}, 8, -1, 0, false, false, false, true});
}

// ---- placement and inference ----

// Before these kernels a com.microsoft node was "no cpu kernel"; the rules give every output a
// type, so the optimizer and planner see the whole graph.
TEST(ContribOps, InferenceKnowsTheOutputs) {
  const std::string b = MsModel("Attention")
                            .in(rnd({2, 4, 16}, 1))
                            .in(rnd({16, 48}, 2))
                            .none()
                            .none()
                            .in(rnd({2, 2, 2, 3, 8}, 3))
                            .attr("num_heads", 2)
                            .outputs({true, true})
                            .bytes();
  Model model = import_onnx_bytes(b.data(), b.size(), "");
  infer::infer_types(model);
  const ir::TypeInfo* y = model.graph->type_of("out0");
  const ir::TypeInfo* present = model.graph->type_of("out1");
  ASSERT_TRUE(y && present);
  EXPECT_EQ(y->str(), "float32[2,4,16]");
  EXPECT_EQ(present->str(), "float32[2,2,2,7,8]");
}

}  // namespace
}  // namespace polyinfer
