// SVMClassifier and SVMRegressor (ai.onnx.ml opset 1): support vector machines as libsvm
// evaluates them (scikit-learn's SVC, SVR, NuSVC, OneClassSVM), or linear ones (liblinear).
//
// SVMClassifier with support vectors is libsvm's one-against-one scheme: for each pair of classes
// i < j, a decision value from the two classes' support vectors and rho; a positive value is a
// vote for i. The label is the class with most votes (the first on a tie). With prob_a/prob_b the
// scores are libsvm's probability estimates: each decision value through Platt's sigmoid, then
// the pairwise probabilities coupled (Wu, Lin and Weng's method, libsvm's multiclass_probability),
// in double as libsvm computes them.
#include <cmath>

#include "providers/cpu/ml/ml_common.h"

namespace polyinfer::ml {
namespace {

enum class SvmKernel { Linear, Poly, Rbf, Sigmoid };

struct KernelFn {
  SvmKernel type = SvmKernel::Linear;
  double gamma = 0, coef0 = 0, degree = 0;

  static KernelFn read(const KernelInfo& info) {
    KernelFn k;
    const std::string t = info.attr_string("kernel_type", "LINEAR");
    if (t == "LINEAR") k.type = SvmKernel::Linear;
    else if (t == "POLY")
      k.type = SvmKernel::Poly;
    else if (t == "RBF")
      k.type = SvmKernel::Rbf;
    else if (t == "SIGMOID")
      k.type = SvmKernel::Sigmoid;
    else
      fail(ErrorCode::InvalidModel, info.node().label(), ": kernel_type '", t,
           "' is not one of LINEAR, POLY, RBF, SIGMOID");
    const std::vector<float> p = info.attr_floats("kernel_params");
    if (p.size() > 0) k.gamma = p[0];
    if (p.size() > 1) k.coef0 = p[1];
    if (p.size() > 2) k.degree = p[2];
    return k;
  }

  double operator()(const double* x, const double* v, int64_t c) const {
    if (type == SvmKernel::Rbf) {
      double s = 0;
      for (int64_t j = 0; j < c; ++j) {
        const double d = x[j] - v[j];
        s += d * d;
      }
      return std::exp(-gamma * s);
    }
    double dot = 0;
    for (int64_t j = 0; j < c; ++j) dot += x[j] * v[j];
    switch (type) {
      case SvmKernel::Poly: return std::pow(gamma * dot + coef0, degree);
      case SvmKernel::Sigmoid: return std::tanh(gamma * dot + coef0);
      default: return dot;
    }
  }
};

std::vector<double> doubles(const std::vector<float>& f) {
  return std::vector<double>(f.begin(), f.end());
}

// Rows per thread below which splitting costs more than it saves.
int64_t row_grain(int64_t work_per_row) {
  return std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, work_per_row));
}

// libsvm's sigmoid_predict: 1 - logistic(A f + B), written to keep 1 - p accurate.
double sigmoid_predict(double f, double a, double b) {
  const double v = f * a + b;
  return v >= 0 ? std::exp(-v) / (1.0 + std::exp(-v)) : 1.0 / (1.0 + std::exp(v));
}

// libsvm's multiclass_probability: p ([k]) from the pairwise probabilities r ([k, k]). Two
// classes go through the iteration too, as in the libsvm scikit-learn bundles (later libsvm
// versions copy r's pair instead, which differs by up to the iteration's tolerance).
void multiclass_probability(int64_t k, const double* r, double* p) {
  const size_t n = static_cast<size_t>(k);
  std::vector<double> q(n * n, 0.0), qp(n);
  for (size_t t = 0; t < n; ++t) {
    p[t] = 1.0 / static_cast<double>(k);
    for (size_t j = 0; j < t; ++j) {
      q[t * n + t] += r[j * n + t] * r[j * n + t];
      q[t * n + j] = q[j * n + t];
    }
    for (size_t j = t + 1; j < n; ++j) {
      q[t * n + t] += r[j * n + t] * r[j * n + t];
      q[t * n + j] = -r[j * n + t] * r[t * n + j];
    }
  }
  const int64_t max_iter = std::max<int64_t>(100, k);
  const double eps = 0.005 / static_cast<double>(k);
  for (int64_t iter = 0; iter < max_iter; ++iter) {
    double pqp = 0;
    for (size_t t = 0; t < n; ++t) {
      qp[t] = 0;
      for (size_t j = 0; j < n; ++j) qp[t] += q[t * n + j] * p[j];
      pqp += p[t] * qp[t];
    }
    double max_error = 0;
    for (size_t t = 0; t < n; ++t) max_error = std::max(max_error, std::fabs(qp[t] - pqp));
    if (max_error < eps) break;
    for (size_t t = 0; t < n; ++t) {
      const double diff = (-qp[t] + pqp) / q[t * n + t];
      p[t] += diff;
      pqp = (pqp + diff * (diff * q[t * n + t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
      for (size_t j = 0; j < n; ++j) {
        qp[j] = (qp[j] + diff * q[t * n + j]) / (1 + diff);
        p[j] /= 1 + diff;
      }
    }
  }
}

class SVMClassifierKernel final : public Kernel {
 public:
  explicit SVMClassifierKernel(const KernelInfo& info) {
    const std::string who = info.node().label();
    labels_ = ClassLabels::read(info, "classlabels_ints", "classlabels_strings");
    kernel_ = KernelFn::read(info);
    per_class_ = info.attr_ints("vectors_per_class");
    sv_ = doubles(info.attr_floats("support_vectors"));
    coef_ = doubles(info.attr_floats("coefficients"));
    rho_ = doubles(info.attr_floats("rho"));
    prob_a_ = doubles(info.attr_floats("prob_a"));
    prob_b_ = doubles(info.attr_floats("prob_b"));
    post_ = post_transform_attr(info);
    k_ = labels_.size();
    PI_CHECK(!coef_.empty(), InvalidModel, who, ": coefficients are required");
    PI_CHECK(!rho_.empty(), InvalidModel, who, ": rho is required");
    PI_CHECK(prob_a_.size() == prob_b_.size(), InvalidModel, who, ": prob_a has ", prob_a_.size(),
             " values but prob_b ", prob_b_.size());
    check_range(info, per_class_, 0, std::numeric_limits<int32_t>::max(), "vectors_per_class");
    for (int64_t v : per_class_) {
      start_.push_back(vectors_);
      vectors_ += v;
    }
    all_positive_ = std::all_of(coef_.begin(), coef_.end(), [](double v) { return v >= 0; });
    // (Bounds that keep the size arithmetic below from overflowing; a model near them would not
    // fit in memory anyway.)
    PI_CHECK(k_ <= (int64_t{1} << 20) && vectors_ <= (int64_t{1} << 40), InvalidModel, who, ": ",
             k_, " classes and ", vectors_, " support vectors are more than it takes");
    if (vectors_ > 0) {
      const int64_t pairs = k_ * (k_ - 1) / 2;
      PI_CHECK(static_cast<int64_t>(per_class_.size()) == k_, InvalidModel, who,
               ": vectors_per_class has ", per_class_.size(), " entries for ", k_, " classes");
      PI_CHECK(static_cast<int64_t>(sv_.size()) % vectors_ == 0 && !sv_.empty(), InvalidModel, who,
               ": ", sv_.size(), " support vector values do not make ", vectors_, " vectors");
      features_ = static_cast<int64_t>(sv_.size()) / vectors_;
      PI_CHECK(static_cast<int64_t>(coef_.size()) == (k_ - 1) * vectors_, InvalidModel, who, ": ",
               coef_.size(),
               " coefficients, expected (classes - 1) * vectors = ", (k_ - 1) * vectors_);
      PI_CHECK(static_cast<int64_t>(rho_.size()) == pairs, InvalidModel, who, ": rho has ",
               rho_.size(), " values for ", pairs, " pairs of classes");
      PI_CHECK(prob_a_.empty() || static_cast<int64_t>(prob_a_.size()) == pairs, InvalidModel, who,
               ": prob_a has ", prob_a_.size(), " values for ", pairs, " pairs of classes");
    } else {
      // liblinear: a row of coefficients per class, the kernel linear whatever the attribute.
      kernel_.type = SvmKernel::Linear;
      PI_CHECK(static_cast<int64_t>(coef_.size()) % k_ == 0, InvalidModel, who, ": ", coef_.size(),
               " coefficients do not make ", k_, " classes' rows");
      features_ = static_cast<int64_t>(coef_.size()) / k_;
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
    const Rows r = rows_of(x, ctx.node());
    PI_CHECK(r.c == features_, ShapeMismatch, ctx.node().label(), ": the input has ", r.c,
             " features per row but the model's vectors have ", features_);
    const bool svc = vectors_ > 0, proba = svc && !prob_a_.empty();
    const int64_t pairs = k_ * (k_ - 1) / 2;
    // Score columns: probabilities (k); pairwise decision values (two columns for two
    // classes: [-s, s], as the ONNX reference writes them); per-class scores without vectors.
    const int64_t cols = !svc || proba ? k_ : (k_ == 2 ? 2 : pairs);
    Tensor& y = ctx.output(0, labels_.dtype(), {r.n});
    std::vector<double> scores(count_of(r.n, cols));
    std::vector<int64_t> label(static_cast<size_t>(r.n));
    const int64_t work = (svc ? vectors_ : k_) * features_ + k_ * k_;
    fast::parallel_for(r.n, ctx.threads(), row_grain(work), [&](int64_t b, int64_t e) {
      std::vector<double> row(static_cast<size_t>(features_)), kv(static_cast<size_t>(vectors_));
      std::vector<double> dec(svc ? static_cast<size_t>(pairs) : 0);
      std::vector<double> pw(proba ? static_cast<size_t>(k_ * k_) : 0);
      std::vector<int64_t> votes(static_cast<size_t>(k_));
      for (int64_t i = b; i < e; ++i) {
        read_as<double>(x, i * features_, features_, row.data());
        double* out = scores.data() + i * cols;
        if (svc) {
          for (int64_t v = 0; v < vectors_; ++v)
            kv[static_cast<size_t>(v)] = kernel_(row.data(), sv_.data() + v * features_, features_);
          std::fill(votes.begin(), votes.end(), 0);
          int64_t idx = 0;
          for (int64_t ci = 0; ci < k_; ++ci)
            for (int64_t cj = ci + 1; cj < k_; ++cj, ++idx) {
              double s = rho_[static_cast<size_t>(idx)];
              const double* a = coef_.data() + (cj - 1) * vectors_ + start_[ci];
              for (int64_t m = 0; m < per_class_[ci]; ++m) s += a[m] * kv[start_[ci] + m];
              const double* bb = coef_.data() + ci * vectors_ + start_[cj];
              for (int64_t m = 0; m < per_class_[cj]; ++m) s += bb[m] * kv[start_[cj] + m];
              dec[static_cast<size_t>(idx)] = s;
              ++votes[static_cast<size_t>(s > 0 ? ci : cj)];
            }
          label[i] = std::max_element(votes.begin(), votes.end()) - votes.begin();
          if (proba) {
            idx = 0;
            for (int64_t ci = 0; ci < k_; ++ci)
              for (int64_t cj = ci + 1; cj < k_; ++cj, ++idx) {
                const double p =
                    std::min(std::max(sigmoid_predict(dec[idx], prob_a_[idx], prob_b_[idx]), 1e-7),
                             1 - 1e-7);
                pw[ci * k_ + cj] = p;
                pw[cj * k_ + ci] = 1 - p;
              }
            multiclass_probability(k_, pw.data(), out);
          } else if (k_ == 2) {
            out[0] = -dec[0];
            out[1] = dec[0];
          } else {
            std::copy(dec.begin(), dec.end(), out);
          }
        } else {
          for (int64_t c = 0; c < k_; ++c)
            out[c] = kernel_(row.data(), coef_.data() + c * features_, features_) + rho_[0];
          const int64_t best = std::max_element(out, out + k_) - out;
          // Two classes, weights all >= 0, a winning score of at least 0.5: the second class
          // (ONNX Runtime and the reference agree on this one).
          label[i] = k_ == 2 && prob_a_.empty() && all_positive_ && out[best] >= 0.5 ? 1 : best;
        }
        apply_transform(post_, out, cols);
      }
    });
    for (int64_t i = 0; i < r.n; ++i) labels_.write(y, i, label[static_cast<size_t>(i)]);
    if (ctx.wants_output(1)) {
      float* z = ctx.output(1, DType::Float32, {r.n, cols}).data<float>();
      for (size_t i = 0; i < scores.size(); ++i) z[i] = static_cast<float>(scores[i]);
    }
  }

 private:
  ClassLabels labels_;
  KernelFn kernel_;
  std::vector<int64_t> per_class_, start_;
  std::vector<double> sv_, coef_, rho_, prob_a_, prob_b_;
  PostTransform post_ = PostTransform::None;
  int64_t k_ = 0, vectors_ = 0, features_ = 0;
  bool all_positive_ = true;
};

class SVMRegressorKernel final : public Kernel {
 public:
  explicit SVMRegressorKernel(const KernelInfo& info) {
    const std::string who = info.node().label();
    kernel_ = KernelFn::read(info);
    sv_ = doubles(info.attr_floats("support_vectors"));
    coef_ = doubles(info.attr_floats("coefficients"));
    rho_ = doubles(info.attr_floats("rho"));
    vectors_ = info.attr_int("n_supports", 0);
    one_class_ = info.attr_int("one_class", 0) != 0;
    post_ = post_transform_attr(info);
    PI_CHECK(!rho_.empty(), InvalidModel, who, ": rho is required");
    PI_CHECK(vectors_ >= 0, InvalidModel, who, ": n_supports must be >= 0, not ", vectors_);
    if (vectors_ > 0) {
      PI_CHECK(static_cast<int64_t>(sv_.size()) % vectors_ == 0 && !sv_.empty(), InvalidModel, who,
               ": ", sv_.size(), " support vector values do not make ", vectors_, " vectors");
      features_ = static_cast<int64_t>(sv_.size()) / vectors_;
      PI_CHECK(static_cast<int64_t>(coef_.size()) == vectors_, InvalidModel, who, ": ",
               coef_.size(), " coefficients for ", vectors_, " support vectors");
    } else {
      kernel_.type = SvmKernel::Linear;
      features_ = static_cast<int64_t>(coef_.size());
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
    const Rows r = rows_of(x, ctx.node());
    PI_CHECK(r.c == features_, ShapeMismatch, ctx.node().label(), ": the input has ", r.c,
             " features per row but the model's vectors have ", features_);
    float* out = ctx.output(0, DType::Float32, {r.n, 1}).data<float>();
    const int64_t work = std::max<int64_t>(1, vectors_) * features_;
    fast::parallel_for(r.n, ctx.threads(), row_grain(work), [&](int64_t b, int64_t e) {
      std::vector<double> row(static_cast<size_t>(features_));
      for (int64_t i = b; i < e; ++i) {
        read_as<double>(x, i * features_, features_, row.data());
        double s = rho_[0];
        if (vectors_ > 0) {
          for (int64_t v = 0; v < vectors_; ++v)
            s += coef_[static_cast<size_t>(v)] *
                 kernel_(row.data(), sv_.data() + v * features_, features_);
        } else {
          s += kernel_(row.data(), coef_.data(), features_);
        }
        if (one_class_) s = s > 0 ? 1.0 : -1.0;
        else
          apply_transform(post_, &s, 1);
        out[i] = static_cast<float>(s);
      }
    });
  }

 private:
  KernelFn kernel_;
  std::vector<double> sv_, coef_, rho_;
  int64_t vectors_ = 0, features_ = 0;
  bool one_class_ = false;
  PostTransform post_ = PostTransform::None;
};

}  // namespace

PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", SVMClassifier, 1, 5, SVMClassifierKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", SVMRegressor, 1, 5, SVMRegressorKernel);

}  // namespace polyinfer::ml
