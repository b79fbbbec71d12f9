// Small helpers shared by the CPU kernels of several operator families.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {

// "[1,-1,0]" for messages; shape_str would print a negative value as "?" (a dynamic dimension).
inline std::string int_list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Product of the dimensions s[from, to).
inline int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

// double → integer T: truncates toward zero and saturates at T's range (NaN → 0), so that no
// input makes the conversion undefined.
template <class T>
T saturate_to_int(double v) {
  if (std::isnan(v)) return T(0);
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::lowest();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Applies f to every element of input 0; the output has the input's shape and dtype. f sees the
// compute type (float for the 16-bit floats).
template <class Types, class F>
void map_same_type(KernelContext& ctx, const F& f) {
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

// Expand's output shape: the broadcast of the input's shape and the requested one (so a
// requested 1 keeps the input's dimension: Expand is bidirectional, unlike numpy.broadcast_to).
inline Shape expand_shape(const Shape& x, const std::vector<int64_t>& requested,
                          const std::string& who) {
  for (int64_t d : requested)
    PI_CHECK(d >= 0, InvalidArgument, who, ": shape ", int_list_str(requested),
             " has a negative dimension");
  return broadcast_shapes(x, requested, who.c_str());
}

// Legacy (opset < 7) broadcasting: B may only be broadcast onto A, and only when broadcast=1;
// B's dimensions line up with A's starting at `axis` (default: B is a suffix of A). Returns B's
// shape padded with ones to A's rank, so that numpy broadcasting does the rest.
inline Shape legacy_b_shape(const Shape& a, const Shape& b, bool broadcast,
                            std::optional<int64_t> axis, const std::string& who) {
  if (!broadcast) {
    PI_CHECK(a == b, ShapeMismatch, who, ": shapes ", shape_str(a), " and ", shape_str(b),
             " differ and broadcast=0");
    return b;
  }
  const int64_t ra = static_cast<int64_t>(a.size());
  const int64_t rb = static_cast<int64_t>(b.size());
  PI_CHECK(rb <= ra, ShapeMismatch, who, ": B ", shape_str(b), " has a higher rank than A ",
           shape_str(a));
  const int64_t start = axis ? normalize_axis(*axis, ra, who.c_str()) : ra - rb;
  PI_CHECK(start + rb <= ra, ShapeMismatch, who, ": B ", shape_str(b), " does not fit into A ",
           shape_str(a), " at axis ", start);
  Shape out(static_cast<size_t>(ra), 1);
  for (int64_t i = 0; i < rb; ++i) {
    PI_CHECK(b[i] == 1 || b[i] == a[start + i], ShapeMismatch, who, ": B ", shape_str(b),
             " does not broadcast onto A ", shape_str(a), " at axis ", start);
    out[start + i] = b[i];
  }
  return out;
}

}  // namespace polyinfer
