// Small helpers shared by the CPU reference kernels of several operator families.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "ops/shape_rules.h"
#include "runtime/kernel.h"

namespace polyinfer {

// double → integer T: truncates toward zero and saturates at T's range (NaN → 0), so that no
// input makes the conversion undefined.
template <class T> T saturate_to_int(double v) {
  if (std::isnan(v)) return T(0);
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::lowest();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Applies f to every element of input 0; the output has the input's shape and dtype. f sees the
// compute type (float for the 16-bit floats).
template <class Types, class F> void map_same_type(KernelContext& ctx, const F& f) {
  const Tensor& x = ctx.input(0);
  const std::string who = ctx.node().label();
  dispatch(Types{}, x.dtype(), who.c_str(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i)
      out[i] = static_cast<T>(f(static_cast<C>(in[i])));
  });
}

// The elements of a float tensor (any float dtype) as doubles.
inline std::vector<double> read_doubles(const Tensor& t, const char* who) {
  return dispatch(FloatTypes{}, t.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    std::vector<double> out(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
    return out;
  });
}

// Copies n elements; string tensors hold std::string objects, so they cannot be memcpy'd.
inline void copy_elems(Tensor& dst, int64_t dst_off, const Tensor& src, int64_t src_off,
                       int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DType::String) {
    const std::string* s = src.data<std::string>() + src_off;
    std::copy(s, s + n, dst.data<std::string>() + dst_off);
    return;
  }
  const size_t es = dtype_size(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw_data()) + dst_off * es,
              static_cast<const char*>(src.raw_data()) + src_off * es, static_cast<size_t>(n) * es);
}

}  // namespace polyinfer
