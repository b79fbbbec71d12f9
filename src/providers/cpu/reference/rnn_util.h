// What RNN, GRU and LSTM share: attribute parsing (direction, hidden_size, clip, layout, the
// activation functions), loading the inputs into a canonical layout, the per-direction time loop
// and writing the outputs back.
//
// Canonical layouts (those of layout=0): X [seq][batch][input], Y [seq][dirs][batch][hidden],
// states (initial_h, initial_c, Y_h, Y_c) [dirs][batch][hidden]. layout=1 (opset 14) puts batch
// first: X [batch][seq][input], Y [batch][seq][dirs][hidden], states [batch][dirs][hidden].
//
// Each batch row is run on its own, for sequence_lens[b] steps (backwards from step len-1 for
// the reverse direction); Y stays 0 past a row's length and Y_h is the state after its last
// step (the initial state when its length is 0).
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer::rnn {

// One of the activation functions the recurrent ops accept, with its alpha/beta.
struct Activation {
  enum class Kind {
    Relu,
    Tanh,
    Sigmoid,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    HardSigmoid,
    Elu,
    Softsign,
    Softplus
  };
  Kind kind = Kind::Tanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (kind) {
      case Kind::Relu: return x > 0 ? x : 0;
      case Kind::Tanh: return std::tanh(x);
      case Kind::Sigmoid: return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
      case Kind::Affine: return alpha * x + beta;
      case Kind::LeakyRelu: return x >= 0 ? x : alpha * x;
      case Kind::ThresholdedRelu: return x > alpha ? x : 0;
      case Kind::ScaledTanh: return alpha * std::tanh(beta * x);
      case Kind::HardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
      case Kind::Elu: return x >= 0 ? x : alpha * (std::exp(x) - 1);
      case Kind::Softsign: return x / (1 + std::fabs(x));
      case Kind::Softplus: return x > 30 ? x : std::log1p(std::exp(x));
    }
    return x;
  }
};

// Attributes common to RNN, GRU and LSTM.
struct Attrs {
  std::string label;
  int num_directions = 1;
  bool bidirectional = false;
  bool reverse = false;
  int64_t hidden_size = -1;  // -1: taken from R's shape
  std::optional<double> clip;
  int layout = 0;
  int acts_per_direction = 0;
  std::vector<Activation> acts;  // acts_per_direction per direction, forward first

  Attrs(const KernelInfo& info, const std::vector<std::string>& default_acts)
      : label(info.node().label()), acts_per_direction(static_cast<int>(default_acts.size())) {
    const std::string dir = info.attr_string("direction", "forward");
    if (dir == "bidirectional") bidirectional = true;
    else if (dir == "reverse")
      reverse = true;
    else if (dir != "forward")
      info.unsupported("direction='" + dir + "'");
    num_directions = bidirectional ? 2 : 1;
    if (info.has_attr("hidden_size")) {
      hidden_size = info.attr_int("hidden_size");
      PI_CHECK(hidden_size > 0, InvalidModel, label, ": hidden_size must be positive, got ",
               hidden_size);
    }
    if (info.has_attr("clip")) {
      clip = info.attr_float("clip");
      PI_CHECK(*clip > 0, InvalidModel, label, ": clip must be positive, got ", *clip);
    }
    layout = static_cast<int>(info.attr_int("layout", 0));
    if (layout != 0 && layout != 1) info.unsupported("layout=" + std::to_string(layout));

    std::vector<std::string> names = info.attr_strings("activations");
    if (names.empty())
      for (int d = 0; d < num_directions; ++d)
        names.insert(names.end(), default_acts.begin(), default_acts.end());
    // One list for both directions is accepted too (ONNX Runtime does the same).
    if (bidirectional && static_cast<int>(names.size()) == acts_per_direction)
      names.insert(names.end(), names.begin(), names.end());
    PI_CHECK(static_cast<int>(names.size()) == acts_per_direction * num_directions, InvalidModel,
             label, ": activations lists ", names.size(), " functions, expected ",
             acts_per_direction * num_directions);
    // alpha and beta values are consumed in order, only by the functions that take them.
    const std::vector<float> alphas = info.attr_floats("activation_alpha");
    const std::vector<float> betas = info.attr_floats("activation_beta");
    size_t ai = 0, bi = 0;
    for (const std::string& name : names) {
      std::string n;
      for (char ch : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      using K = Activation::Kind;
      Activation a;
      double def_alpha = 0, def_beta = 0;
      bool uses_alpha = false, uses_beta = false;
      if (n == "relu") a.kind = K::Relu;
      else if (n == "tanh")
        a.kind = K::Tanh;
      else if (n == "sigmoid")
        a.kind = K::Sigmoid;
      else if (n == "softsign")
        a.kind = K::Softsign;
      else if (n == "softplus")
        a.kind = K::Softplus;
      else if (n == "affine")
        a.kind = K::Affine, def_alpha = 1, uses_alpha = uses_beta = true;
      else if (n == "leakyrelu")
        a.kind = K::LeakyRelu, def_alpha = 0.01, uses_alpha = true;
      else if (n == "thresholdedrelu")
        a.kind = K::ThresholdedRelu, def_alpha = 1, uses_alpha = true;
      else if (n == "scaledtanh")
        a.kind = K::ScaledTanh, def_alpha = def_beta = 1, uses_alpha = uses_beta = true;
      else if (n == "hardsigmoid")
        a.kind = K::HardSigmoid, def_alpha = 0.2, def_beta = 0.5, uses_alpha = uses_beta = true;
      else if (n == "elu")
        a.kind = K::Elu, def_alpha = 1, uses_alpha = true;
      else
        info.unsupported("activation '" + name + "'");
      a.alpha = uses_alpha && ai < alphas.size() ? alphas[ai++] : def_alpha;
      a.beta = uses_beta && bi < betas.size() ? betas[bi++] : def_beta;
      acts.push_back(a);
    }
  }

  bool reversed(int dir) const { return bidirectional ? dir == 1 : reverse; }
  const Activation& act(int dir, int k) const { return acts[dir * acts_per_direction + k]; }
  // Clipping bounds the input of the gate activations.
  double clipped(double v) const { return clip ? std::clamp(v, -*clip, *clip) : v; }
};

// The inputs of one run, in canonical layout and compute type C.
template <class C> struct Problem {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int dirs = 1, gates = 1;
  std::vector<C> x;           // [seq][batch][input]
  std::vector<C> w;           // [dirs][gates * hidden][input]
  std::vector<C> r;           // [dirs][gates * hidden][hidden]
  std::vector<C> b;           // [dirs][2 * gates * hidden]: Wb then Rb; zeros when absent
  std::vector<int64_t> lens;  // [batch]

  const C* w_of(int d) const { return w.data() + d * gates * hidden * input; }
  const C* r_of(int d) const { return r.data() + d * gates * hidden * hidden; }
  const C* wb_of(int d) const { return b.data() + d * 2 * gates * hidden; }
  const C* rb_of(int d) const { return wb_of(d) + gates * hidden; }
};

template <class T> std::vector<compute_t<T>> to_compute(const Tensor& t) {
  const T* p = t.data<T>();
  std::vector<compute_t<T>> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<compute_t<T>>(p[i]);
  return v;
}

inline void check_input(const Attrs& a, const char* name, const Tensor& t, DType dtype,
                        const Shape& shape) {
  PI_CHECK(t.dtype() == dtype, InvalidArgument, a.label, ": ", name, " ", t.describe(),
           " must have X's dtype ", dtype_name(dtype));
  PI_CHECK(t.shape() == shape, ShapeMismatch, a.label, ": ", name, " ", t.describe(),
           " must have shape ", shape_str(shape));
}

// Loads X (0), W (1), R (2), B (3) and sequence_lens (4) for an op with `gates` gates.
template <class T>
Problem<compute_t<T>> load_problem(KernelContext& ctx, const Attrs& a, int gates) {
  using C = compute_t<T>;
  const Tensor& X = ctx.input(0);
  const Tensor& W = ctx.input(1);
  const Tensor& R = ctx.input(2);
  PI_CHECK(X.rank() == 3, ShapeMismatch, a.label, ": X must be 3-D, got ", X.describe());
  PI_CHECK(R.rank() == 3, ShapeMismatch, a.label, ": R must be 3-D, got ", R.describe());
  Problem<C> p;
  p.dirs = a.num_directions;
  p.gates = gates;
  p.seq = X.dim(a.layout == 0 ? 0 : 1);
  p.batch = X.dim(a.layout == 0 ? 1 : 0);
  p.input = X.dim(2);
  p.hidden = a.hidden_size > 0 ? a.hidden_size : R.dim(2);
  const int64_t gh = gates * p.hidden;
  check_input(a, "W", W, X.dtype(), {p.dirs, gh, p.input});
  check_input(a, "R", R, X.dtype(), {p.dirs, gh, p.hidden});

  p.x.resize(static_cast<size_t>(X.numel()));
  const T* xs = X.data<T>();
  for (int64_t t = 0; t < p.seq; ++t)
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t i = 0; i < p.input; ++i) {
        const int64_t src =
            a.layout == 0 ? (t * p.batch + b) * p.input + i : (b * p.seq + t) * p.input + i;
        p.x[(t * p.batch + b) * p.input + i] = static_cast<C>(xs[src]);
      }
  p.w = to_compute<T>(W);
  p.r = to_compute<T>(R);
  if (ctx.has_input(3)) {
    check_input(a, "B", ctx.input(3), X.dtype(), {p.dirs, 2 * gh});
    p.b = to_compute<T>(ctx.input(3));
  } else {
    p.b.assign(static_cast<size_t>(p.dirs * 2 * gh), C(0));
  }
  if (ctx.has_input(4)) {
    const Tensor& L = ctx.input(4);
    PI_CHECK(L.shape() == Shape{p.batch}, ShapeMismatch, a.label, ": sequence_lens ", L.describe(),
             " must have shape [", p.batch, "]");
    p.lens = read_int_list(L, a.label.c_str());
    for (int64_t len : p.lens)
      PI_CHECK(len >= 0 && len <= p.seq, InvalidArgument, a.label, ": sequence length ", len,
               " is outside [0, ", p.seq, "]");
  } else {
    p.lens.assign(static_cast<size_t>(p.batch), p.seq);
  }
  return p;
}

// Loads a state input (initial_h, initial_c) into [dirs][batch][hidden]; zeros when absent.
template <class T, class C>
std::vector<C> load_state(KernelContext& ctx, size_t index, const char* name, const Attrs& a,
                          const Problem<C>& p) {
  std::vector<C> s(static_cast<size_t>(p.dirs * p.batch * p.hidden), C(0));
  if (!ctx.has_input(index)) return s;
  const Tensor& t = ctx.input(index);
  check_input(a, name, t, ctx.input(0).dtype(),
              a.layout == 0 ? Shape{p.dirs, p.batch, p.hidden} : Shape{p.batch, p.dirs, p.hidden});
  const T* src = t.data<T>();
  for (int d = 0; d < p.dirs; ++d)
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < p.hidden; ++h) {
        const int64_t from =
            a.layout == 0 ? (d * p.batch + b) * p.hidden + h : (b * p.dirs + d) * p.hidden + h;
        s[(d * p.batch + b) * p.hidden + h] = static_cast<C>(src[from]);
      }
  return s;
}

// Writes a [dirs][batch][hidden] state to output `index` (Y_h, Y_c) when the model wants it.
template <class T, class C>
void store_state(KernelContext& ctx, size_t index, const Attrs& a, const Problem<C>& p,
                 const std::vector<C>& s) {
  if (!ctx.wants_output(index)) return;
  const Shape shape =
      a.layout == 0 ? Shape{p.dirs, p.batch, p.hidden} : Shape{p.batch, p.dirs, p.hidden};
  T* out = ctx.output(index, dtype_of<T>(), shape).template data<T>();
  for (int d = 0; d < p.dirs; ++d)
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < p.hidden; ++h) {
        const int64_t to =
            a.layout == 0 ? (d * p.batch + b) * p.hidden + h : (b * p.dirs + d) * p.hidden + h;
        out[to] = static_cast<T>(s[(d * p.batch + b) * p.hidden + h]);
      }
}

// Writes Y ([seq][dirs][batch][hidden]) to output 0 when the model wants it.
template <class T, class C>
void store_y(KernelContext& ctx, const Attrs& a, const Problem<C>& p, const std::vector<C>& y) {
  if (!ctx.wants_output(0)) return;
  const Shape shape = a.layout == 0 ? Shape{p.seq, p.dirs, p.batch, p.hidden}
                                    : Shape{p.batch, p.seq, p.dirs, p.hidden};
  T* out = ctx.output(0, dtype_of<T>(), shape).template data<T>();
  for (int64_t t = 0; t < p.seq; ++t)
    for (int d = 0; d < p.dirs; ++d)
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t h = 0; h < p.hidden; ++h) {
          const int64_t from = ((t * p.dirs + d) * p.batch + b) * p.hidden + h;
          const int64_t to = a.layout == 0 ? from : ((b * p.seq + t) * p.dirs + d) * p.hidden + h;
          out[to] = static_cast<T>(y[from]);
        }
}

// out[j] = bias[j] + sum_k v[k] * m[j][k] for j < rows: v times the transpose of the row-major
// (rows x cols) matrix m, as the ONNX formulas write Xt*(W^T) and Ht-1*(R^T).
template <class C>
void matvec_t(const C* v, const C* m, int64_t rows, int64_t cols, const C* bias, C* out) {
  for (int64_t j = 0; j < rows; ++j) {
    double acc = bias ? static_cast<double>(bias[j]) : 0.0;
    const C* row = m + j * cols;
    for (int64_t k = 0; k < cols; ++k) acc += static_cast<double>(v[k]) * row[k];
    out[j] = static_cast<C>(acc);
  }
}

// Runs every direction over every batch row. For each step, `step(dir, b, xw)` receives
// xw = X[t][b] * W[dir]^T + Wb[dir] (gates * hidden values) and updates the states of row b in
// place; h ([dirs][batch][hidden]) holds the hidden state, copied into y
// ([seq][dirs][batch][hidden], zero-initialized by the caller) after each step.
template <class C, class Step>
void run_recurrence(const Attrs& a, const Problem<C>& p, std::vector<C>& h, std::vector<C>& y,
                    Step step) {
  const int64_t gh = p.gates * p.hidden;
  std::vector<C> xw(static_cast<size_t>(gh));
  for (int d = 0; d < p.dirs; ++d) {
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = p.lens[b];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = a.reversed(d) ? len - 1 - s : s;
        matvec_t(p.x.data() + (t * p.batch + b) * p.input, p.w_of(d), gh, p.input, p.wb_of(d),
                 xw.data());
        step(d, b, xw.data());
        const C* hr = h.data() + (d * p.batch + b) * p.hidden;
        std::copy(hr, hr + p.hidden, y.data() + ((t * p.dirs + d) * p.batch + b) * p.hidden);
      }
    }
  }
}

}  // namespace polyinfer::rnn
