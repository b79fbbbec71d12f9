// What the reference attention kernels (Attention, FlexAttention) share: their float tensors
// held as doubles, rounding a double to a float dtype's precision, and a softmax computed at
// such a precision step by step.
//
// The spec's references compute in the tensors' own dtypes: every elementary step of a float16
// or bfloat16 computation is rounded to that type. Holding values in double and rounding them at
// the same steps reproduces those results to the last place (rounding only once, at the end, puts
// about a quarter of the bfloat16 attention outputs of the ONNX tests one unit away).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/dispatch.h"
#include "polyinfer/dtype.h"
#include "polyinfer/tensor.h"

namespace polyinfer::attention_math {

// The float types attention's T1/T2 allow (all_float_types_ir4), spelled out so that a type
// added to FloatTypes later is refused here rather than half-supported.
using Floats = TypeList<float, double, Float16, BFloat16>;

// A float tensor's values as doubles, and back (rounded once to the tensor's dtype).
inline std::vector<double> to_double(const Tensor& t, const char* who) {
  return dispatch(Floats{}, t.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(compute_t<T>(p[i]));
    return v;
  });
}
inline void from_double(Tensor& t, const std::vector<double>& v, const char* who) {
  dispatch(Floats{}, t.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(static_cast<compute_t<T>>(v[i]));
  });
}

// x rounded to a float dtype's precision, as a double (double itself: unchanged).
using Round = double (*)(double);
inline double exact(double x) { return x; }
inline double as_f32(double x) { return static_cast<float>(x); }
inline double as_f16(double x) { return static_cast<float>(Float16(static_cast<float>(x))); }
inline double as_bf16(double x) { return static_cast<float>(BFloat16(static_cast<float>(x))); }
inline Round rounding(DType t) {
  switch (t) {
    case DType::Float32: return as_f32;
    case DType::Float16: return as_f16;
    case DType::BFloat16: return as_bf16;
    default: return exact;
  }
}

// In-place softmax of `row` at the precision of dtype `t`, each step rounded to it: the
// maximum's difference, its exponential, the sum and the quotient. bfloat16 arithmetic rounds
// every partial sum; the other types sum in double and round once (as numpy's float16 and float32
// reductions, which accumulate wider, come out). A row whose maximum is -inf gives zeros.
inline void softmax(std::vector<double>& row, DType t) {
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  const Round rp = rounding(t);
  const bool round_partial_sums = t == DType::BFloat16;
  double mx = kNegInf;
  for (double& x : row) {
    x = rp(x);
    mx = std::max(mx, x);
  }
  if (mx == kNegInf) mx = 0;
  double sum = 0;
  for (double& x : row) {
    x = rp(std::exp(rp(x - mx)));
    sum = round_partial_sums ? rp(sum + x) : sum + x;
  }
  sum = rp(sum);
  if (sum == 0) sum = 1;
  for (double& x : row) x = rp(x / sum);
}

}  // namespace polyinfer::attention_math
