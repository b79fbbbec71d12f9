// Run-time dtype → compile-time type dispatch for kernels.
//
//   dispatch(NumericTypes{}, x.dtype(), "Abs", [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     const T* in = x.data<T>();
//     ...
//   });
//
// A dtype outside the list throws UnsupportedOp "<who>: dtype <name> is not supported".
#pragma once

#include <string>

#include "polyinfer/dtype.h"
#include "polyinfer/status.h"

namespace polyinfer {

template <class T> struct Tag { using type = T; };

template <class... Ts> struct TypeList {};

template <class... A, class... B>
constexpr TypeList<A..., B...> operator+(TypeList<A...>, TypeList<B...>) {
  return {};
}

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                              uint8_t, uint16_t, uint32_t, uint64_t>;
// Every element type a tensor can hold except complex.
using AllTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                          uint8_t, uint16_t, uint32_t, uint64_t, bool, std::string>;

namespace detail {
template <class F> [[noreturn]] decltype(auto) dispatch_fail(DType t, const char* who, F&&) {
  fail(ErrorCode::UnsupportedOp, who, ": dtype ", dtype_name(t), " is not supported");
}
template <class T, class... Rest, class F>
decltype(auto) dispatch_impl(DType t, const char* who, F&& f) {
  if (t == dtype_of<T>()) return f(Tag<T>{});
  if constexpr (sizeof...(Rest) == 0) {
    fail(ErrorCode::UnsupportedOp, who, ": dtype ", dtype_name(t), " is not supported");
  } else {
    return dispatch_impl<Rest...>(t, who, std::forward<F>(f));
  }
}
}  // namespace detail

template <class... Ts, class F>
decltype(auto) dispatch(TypeList<Ts...>, DType t, const char* who, F&& f) {
  return detail::dispatch_impl<Ts...>(t, who, std::forward<F>(f));
}

// Arithmetic type for T: float for the 16-bit floats, T itself otherwise.
template <class T> struct compute_type { using type = T; };
template <> struct compute_type<Float16> { using type = float; };
template <> struct compute_type<BFloat16> { using type = float; };
template <class T> using compute_t = typename compute_type<T>::type;

}  // namespace polyinfer
