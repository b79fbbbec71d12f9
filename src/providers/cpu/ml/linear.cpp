// LinearClassifier and LinearRegressor (ai.onnx.ml opset 1): scores = X W^T + b, one row of W per
// class or target, then the post transform; the classifier also picks a label.
#include "providers/cpu/ml/ml_common.h"

namespace polyinfer::ml {
namespace {

// Rows of X times the rows of w ([k, c]) plus b (empty, or k values), in double, into
// out ([n, k]); split among threads when there is enough of it.
void linear_scores(const Tensor& x, Rows r, const std::vector<double>& w,
                   const std::vector<double>& b, int64_t k, double* out, int threads) {
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, k * r.c));
  fast::parallel_for(r.n, threads, grain, [&](int64_t begin, int64_t end) {
    std::vector<double> row(static_cast<size_t>(r.c));
    for (int64_t i = begin; i < end; ++i) {
      read_as<double>(x, i * r.c, r.c, row.data());
      for (int64_t t = 0; t < k; ++t) {
        const double* wt = w.data() + t * r.c;
        double s = b.empty() ? 0.0 : b[static_cast<size_t>(t)];
        for (int64_t j = 0; j < r.c; ++j) s += row[static_cast<size_t>(j)] * wt[j];
        out[i * k + t] = s;
      }
    }
  });
}

std::vector<double> doubles(const std::vector<float>& f) {
  return std::vector<double>(f.begin(), f.end());
}

class LinearClassifierKernel final : public Kernel {
 public:
  explicit LinearClassifierKernel(const KernelInfo& info) {
    labels_ = ClassLabels::read(info, "classlabels_ints", "classlabels_strings");
    w_ = doubles(info.attr_floats("coefficients"));
    b_ = doubles(info.attr_floats("intercepts"));
    PI_CHECK(!w_.empty(), InvalidModel, info.node().label(), ": coefficients are required");
    post_ = post_transform_attr(info);
    const int64_t k = static_cast<int64_t>(b_.size());
    PI_CHECK(k == 0 || static_cast<int64_t>(w_.size()) % k == 0, InvalidModel, info.node().label(),
             ": ", w_.size(), " coefficients do not split into ", k, " classes' rows");
    PI_CHECK(k <= 1 || k == labels_.size(), InvalidModel, info.node().label(), ": ", k,
             " rows of coefficients but ", labels_.size(), " class labels");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
    const Rows r = rows_of(x, ctx.node());
    const int64_t w_size = static_cast<int64_t>(w_.size());
    // The classes are the intercepts' count; without intercepts, what the coefficients make.
    const int64_t k = !b_.empty() ? static_cast<int64_t>(b_.size()) : r.c > 0 ? w_size / r.c : 0;
    PI_CHECK(k >= 1 && r.c > 0 && w_size % r.c == 0 && w_size / r.c == k, ShapeMismatch,
             ctx.node().label(), ": ", w_size, " coefficients do not make ", k, " rows of ", r.c,
             " features (the input's)");
    PI_CHECK(k == 1 || k == labels_.size(), InvalidModel, ctx.node().label(), ": ", k,
             " rows of coefficients but ", labels_.size(), " class labels");
    std::vector<double> s(count_of(r.n, k));
    linear_scores(x, r, w_, b_, k, s.data(), ctx.threads());
    Tensor& y = ctx.output(0, labels_.dtype(), {r.n});
    // One row of coefficients for two labels: the score is the second class's, and the scores
    // are [-s, s] before the transform (the ONNX reference's two columns: LOGISTIC then gives
    // [1 - p, p]).
    const bool binary = k == 1 && labels_.size() == 2;
    const int64_t cols = binary ? 2 : k;
    Tensor* z = ctx.wants_output(1) ? &ctx.output(1, DType::Float32, {r.n, cols}) : nullptr;
    std::vector<double> row(static_cast<size_t>(cols));
    for (int64_t i = 0; i < r.n; ++i) {
      const double* si = s.data() + i * k;
      if (binary) {
        labels_.write(y, i, si[0] > 0 ? 1 : 0);
        row[0] = -si[0];
        row[1] = si[0];
      } else if (k == 1) {
        // One row, labels other than two: 1 when the score is positive, else 0 (ONNX Runtime's
        // rule: the labels themselves are not used).
        if (labels_.is_string) y.data<std::string>()[i] = si[0] > 0 ? "1" : "0";
        else
          y.data<int64_t>()[i] = si[0] > 0 ? 1 : 0;
        row[0] = si[0];
      } else {
        int64_t best = 0;
        for (int64_t t = 1; t < k; ++t)
          if (si[t] > si[best]) best = t;
        labels_.write(y, i, best);
        std::copy(si, si + k, row.begin());
      }
      if (!z) continue;
      apply_transform(post_, row.data(), cols);
      for (int64_t t = 0; t < cols; ++t)
        z->data<float>()[i * cols + t] = static_cast<float>(row[static_cast<size_t>(t)]);
    }
  }

 private:
  ClassLabels labels_;
  std::vector<double> w_, b_;
  PostTransform post_ = PostTransform::None;
};

class LinearRegressorKernel final : public Kernel {
 public:
  explicit LinearRegressorKernel(const KernelInfo& info) {
    w_ = doubles(info.attr_floats("coefficients"));
    b_ = doubles(info.attr_floats("intercepts"));
    targets_ = info.attr_int("targets", 1);
    post_ = post_transform_attr(info);
    PI_CHECK(targets_ >= 1, InvalidModel, info.node().label(), ": targets must be >= 1, not ",
             targets_);
    PI_CHECK(b_.empty() || static_cast<int64_t>(b_.size()) == targets_, InvalidModel,
             info.node().label(), ": ", b_.size(), " intercepts for ", targets_, " targets");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
    const Rows r = rows_of(x, ctx.node());
    const int64_t w_size = static_cast<int64_t>(w_.size());
    PI_CHECK(r.c > 0 && w_size % r.c == 0 && w_size / r.c == targets_, ShapeMismatch,
             ctx.node().label(), ": ", w_.size(), " coefficients are not ", targets_,
             " targets' rows of ", r.c, " features (the input's)");
    std::vector<double> s(count_of(r.n, targets_));
    linear_scores(x, r, w_, b_, targets_, s.data(), ctx.threads());
    Tensor& y = ctx.output(0, DType::Float32, {r.n, targets_});
    float* out = y.data<float>();
    for (int64_t i = 0; i < r.n; ++i) {
      // The transform as the specification has it (ONNX Runtime applies only PROBIT to a
      // single target).
      apply_transform(post_, s.data() + i * targets_, targets_);
      for (int64_t t = 0; t < targets_; ++t)
        out[i * targets_ + t] = static_cast<float>(s[static_cast<size_t>(i * targets_ + t)]);
    }
  }

 private:
  std::vector<double> w_, b_;
  int64_t targets_ = 1;
  PostTransform post_ = PostTransform::None;
};

}  // namespace

PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", LinearClassifier, 1, 5, LinearClassifierKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", LinearRegressor, 1, 5, LinearRegressorKernel);

}  // namespace polyinfer::ml
