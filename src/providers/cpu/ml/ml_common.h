// What the CPU kernels of the ai.onnx.ml operators share (this folder, one family per file):
// the post transforms of the classifiers and regressors, class labels, the [N,C] view of an
// input, attributes given either as floats or as a double tensor, and a parallel loop.
//
// Semantics follow the ONNX specification; where it is silent (the two-class score columns, the
// one-column transforms) they follow ONNX Runtime, which every converter (skl2onnx, onnxmltools)
// is tested against, and the ONNX reference implementation where the two disagree with
// scikit-learn's own results. Each such choice is commented where it is made.
//
// Arithmetic is in double (scores, kernels, sums), from attributes stored as float: the results
// are then the model's parameters' rounding away from the trained model's, not float
// accumulation's on top of it.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "providers/cpu/fast/fast_util.h"
#include "runtime/kernel.h"

namespace polyinfer::ml {

// ---- post transforms ----

enum class PostTransform { None = 0, Softmax = 1, Logistic = 2, SoftmaxZero = 3, Probit = 4 };

// The string attribute `post_transform` of the opset 1-4 operators ("NONE" when absent).
PostTransform post_transform_attr(const KernelInfo& info);
// TreeEnsemble (ml opset 5) gives it as an integer.
PostTransform post_transform_from_int(const KernelInfo& info, int64_t v);

// 1 / (1 + exp(-v)) without overflow for large |v|.
inline double logistic(double v) {
  const double e = 1.0 / (1.0 + std::exp(-std::fabs(v)));
  return v < 0 ? 1.0 - e : e;
}

// sqrt(2) * erfinv(2v - 1): the normal quantile of v, with the approximation of erfinv (Winitzki,
// a = 0.147, ~1e-3 relative) that ONNX Runtime and the ONNX reference both use, so PROBIT
// scores agree with theirs rather than with the exact quantile.
double probit(double v);

// Softmax over n values in place (max subtracted first).
void softmax(double* v, int64_t n);
// Softmax over the nonzero values only: zeros stay zero (ONNX Runtime's SOFTMAX_ZERO). All zero:
// every value 0.5, as the ONNX reference does (ONNX Runtime divides by zero there).
void softmax_zero(double* v, int64_t n);

// The transform over one row of n scores, in place.
void apply_transform(PostTransform t, double* v, int64_t n);

// ---- class labels ----

// A classifier's labels: int64 (`<prefix>_ints`/`int64s`) or strings (`<prefix>_strings`).
struct ClassLabels {
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  bool is_string = false;

  // Reads `ints_name` and `strings_name`; exactly one must be given and non-empty.
  static ClassLabels read(const KernelInfo& info, const char* ints_name, const char* strings_name);
  int64_t size() const { return static_cast<int64_t>(is_string ? strings.size() : ints.size()); }
  DType dtype() const { return is_string ? DType::String : DType::Int64; }
  // y[row] = label k.
  void write(Tensor& y, int64_t row, int64_t k) const {
    if (is_string) y.data<std::string>()[row] = strings[static_cast<size_t>(k)];
    else
      y.data<int64_t>()[row] = ints[static_cast<size_t>(k)];
  }
};

// ---- inputs ----

// An input read as rows: [C] is one row of C, [N, C] is N rows, and [N, d1, d2, ...] is N rows
// of d1*d2*... (as ONNX Runtime reads it).
struct Rows {
  int64_t n = 0, c = 0;
};
Rows rows_of(const Tensor& x, const ir::Node& node);

// Element types the numeric ai.onnx.ml operators take (float, double, int64, int32).
using MlNumeric = TypeList<float, double, int64_t, int32_t>;

// n * k elements (scores of n rows of k): OutOfMemory when the product overflows or passes
// polyinfer's tensor size limit, as an output of that shape would.
inline size_t count_of(int64_t n, int64_t k) { return static_cast<size_t>(shape_numel({n, k})); }

// Elements [first, first + count) of a numeric tensor converted to C.
template <class C> void read_as(const Tensor& x, int64_t first, int64_t count, C* out) {
  const std::string who = "ai.onnx.ml input";
  dispatch(NumericTypes{}, x.dtype(), who.c_str(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = x.data<T>() + first;
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<C>(static_cast<compute_t<T>>(p[i]));
  });
}

// Fails with InvalidArgument unless x's dtype is one of `allowed` (named in the message).
void require_dtype(const KernelContext& ctx, const Tensor& x, std::initializer_list<DType> allowed);

// ---- attributes ----

// A float list attribute `name`, or its double tensor `name_as_tensor` (opset 3's alternative,
// which takes precedence); empty when neither is given. *is_double tells which was read.
std::vector<double> floats_or_tensor(const KernelInfo& info, const std::string& name,
                                     bool* is_double = nullptr);
// The elements of a tensor attribute of any numeric type, as doubles.
std::vector<double> tensor_values(const Tensor& t);
// The elements of an integer list attribute checked to lie in [lo, hi]; `what` names it.
void check_range(const KernelInfo& info, const std::vector<int64_t>& v, int64_t lo, int64_t hi,
                 const char* what);

// Threads: fast::parallel_for (providers/cpu/fast/fast_util.h): contiguous chunks of at least a
// grain each, serial when one chunk is all there is.

}  // namespace polyinfer::ml
