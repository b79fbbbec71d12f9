#include "providers/cpu/ml/ml_common.h"

#include <limits>

namespace polyinfer::ml {

PostTransform post_transform_attr(const KernelInfo& info) {
  const std::string s = info.attr_string("post_transform", "NONE");
  if (s == "NONE") return PostTransform::None;
  if (s == "SOFTMAX") return PostTransform::Softmax;
  if (s == "LOGISTIC") return PostTransform::Logistic;
  if (s == "SOFTMAX_ZERO") return PostTransform::SoftmaxZero;
  if (s == "PROBIT") return PostTransform::Probit;
  fail(ErrorCode::InvalidModel, info.node().label(), ": post_transform '", s,
       "' is not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT");
}

PostTransform post_transform_from_int(const KernelInfo& info, int64_t v) {
  PI_CHECK(v >= 0 && v <= 4, InvalidModel, info.node().label(), ": post_transform ", v,
           " is not one of 0 (NONE), 1 (SOFTMAX), 2 (LOGISTIC), 3 (SOFTMAX_ZERO), 4 (PROBIT)");
  return static_cast<PostTransform>(v);
}

double probit(double v) {
  double x = 2 * v - 1;
  const double sgn = x < 0 ? -1.0 : 1.0;
  x = (1 - x) * (1 + x);
  if (x == 0) return sgn * std::numeric_limits<double>::infinity();  // v = 0 or 1
  const double lg = std::log(x);
  const double a = 2 / (3.14159265358979323846 * 0.147) + 0.5 * lg;
  const double b = 1 / 0.147 * lg;
  return 1.41421356237309504880 * sgn * std::sqrt(-a + std::sqrt(a * a - b));
}

void softmax(double* v, int64_t n) {
  if (n <= 0) return;
  const double m = *std::max_element(v, v + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += v[i] = std::exp(v[i] - m);
  for (int64_t i = 0; i < n; ++i) v[i] /= sum;
}

void softmax_zero(double* v, int64_t n) {
  if (n <= 0) return;
  const double m = *std::max_element(v, v + n);
  double sum = 0;
  // ONNX Runtime's test for zero: within 1e-7 of it.
  for (int64_t i = 0; i < n; ++i) {
    if (v[i] > 1e-7 || v[i] < -1e-7) sum += v[i] = std::exp(v[i] - m);
    else
      v[i] *= std::exp(-m);
  }
  for (int64_t i = 0; i < n; ++i) v[i] = sum == 0 ? 0.5 : v[i] / sum;
}

void apply_transform(PostTransform t, double* v, int64_t n) {
  switch (t) {
    case PostTransform::None: return;
    case PostTransform::Softmax: return softmax(v, n);
    case PostTransform::SoftmaxZero: return softmax_zero(v, n);
    case PostTransform::Logistic:
      for (int64_t i = 0; i < n; ++i) v[i] = logistic(v[i]);
      return;
    case PostTransform::Probit:
      for (int64_t i = 0; i < n; ++i) v[i] = probit(v[i]);
      return;
  }
}

ClassLabels ClassLabels::read(const KernelInfo& info, const char* ints_name,
                              const char* strings_name) {
  ClassLabels l;
  l.ints = info.attr_ints(ints_name);
  l.strings = info.attr_strings(strings_name);
  PI_CHECK(l.ints.empty() != l.strings.empty(), InvalidModel, info.node().label(),
           ": exactly one of '", ints_name, "' and '", strings_name,
           "' must list the class labels");
  l.is_string = !l.strings.empty();
  return l;
}

Rows rows_of(const Tensor& x, const ir::Node& node) {
  PI_CHECK(x.rank() >= 1, ShapeMismatch, node.label(),
           ": input X must have rank 1 ([C]) or 2 ([N, C]), not a scalar");
  Rows r;
  if (x.rank() == 1) {
    r.n = 1;
    r.c = x.dim(0);
  } else {
    r.n = x.dim(0);
    r.c = 1;
    for (int i = 1; i < x.rank(); ++i) r.c *= x.dim(i);
  }
  return r;
}

void require_dtype(const KernelContext& ctx, const Tensor& x,
                   std::initializer_list<DType> allowed) {
  for (DType d : allowed)
    if (x.dtype() == d) return;
  std::string names;
  for (DType d : allowed) names += std::string(names.empty() ? "" : ", ") + dtype_name(d);
  fail(ErrorCode::InvalidArgument, ctx.node().label(), ": input of type ", dtype_name(x.dtype()),
       " is not one of the types it takes (", names, ")");
}

std::vector<double> tensor_values(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  read_as<double>(t, 0, t.numel(), out.data());
  return out;
}

std::vector<double> floats_or_tensor(const KernelInfo& info, const std::string& name,
                                     bool* is_double) {
  if (is_double) *is_double = false;
  if (const Tensor* t = info.attr_tensor(name + "_as_tensor")) {
    if (is_double) *is_double = t->dtype() == DType::Float64;
    return tensor_values(*t);
  }
  const std::vector<float> f = info.attr_floats(name);
  return std::vector<double>(f.begin(), f.end());
}

void check_range(const KernelInfo& info, const std::vector<int64_t>& v, int64_t lo, int64_t hi,
                 const char* what) {
  for (size_t i = 0; i < v.size(); ++i)
    PI_CHECK(v[i] >= lo && v[i] <= hi, InvalidModel, info.node().label(), ": ", what, "[", i,
             "] = ", v[i], " is outside [", lo, ", ", hi, "]");
}

}  // namespace polyinfer::ml
