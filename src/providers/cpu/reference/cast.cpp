// Cast and CastLike: element type conversion between every non-complex dtype, strings included.
//
// Conversion rules (numpy's, which generate the ONNX test data, where the spec leaves room):
// - float → integer truncates toward zero and saturates at the target's range; NaN becomes 0.
//   (C++ leaves out-of-range conversions undefined; numpy's result there is platform-specific.)
// - integer → integer wraps modulo 2^bits; anything → bool is `!= 0` (NaN is true).
// - double and 64-bit integers → float16/bfloat16 round once, correctly (via round-to-odd).
// - number → string is the shortest text that reads back to the same value, positional for
//   1e-4 <= |x| < 1e16 and scientific otherwise ("0.1", "100.0", "1e-05", "nan", "-inf");
//   bool → "True"/"False".
// - string → number accepts decimal and scientific text and, case-insensitively, "INF", "+INF",
//   "-INF" and "NaN"; "100.5" → integer gives 100. Other text is an InvalidArgument error.
// - the low-precision types (src/core/low_precision.h) convert through double (float for
//   float8e8m0, as ONNX's reference does): the 8-, 6- and 4-bit floats round to nearest even,
//   and `saturate` (opset 19+, default on) maps out-of-range values to the largest finite one
//   instead of infinity/NaN; float8e8m0 rounds by `round_mode` (opset 24+, default "up"); a
//   float → int4/uint4/int2/uint2 truncates and gives 0 outside the range (ml_dtypes, which
//   computes ONNX's expected outputs); integer → int4 and friends wraps like other integers.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "core/dispatch.h"
#include "core/low_precision.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <class T> constexpr bool is_floaty_v = std::is_floating_point_v<T> || is_half_v<T>;

// double → float rounded to odd: truncate, then set the lowest mantissa bit when inexact. Rounding
// that float again to a format with at least two fewer mantissa bits (float16, bfloat16) gives the
// same result as rounding the double directly, which a plain double → float → half path does not.
float to_float_round_odd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= 1u;
  std::memcpy(&f, &bits, 4);
  return f;
}

// ---- number → string ----

// Shortest round-trip text of a float or double, formatted as numpy's str() does. numpy picks the
// notation from the exact value (`actual`), so float(1e-4), just below 1e-4, prints "1e-04".
template <class F> std::string format_float(F v, double actual) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double mag = std::fabs(actual);
  const bool scientific = v != 0 && (mag < 1e-4 || mag >= 1e16);
  char buf[64];
  const auto res =
      std::to_chars(buf, buf + sizeof buf, v,
                    scientific ? std::chars_format::scientific : std::chars_format::fixed);
  std::string s(buf, res.ptr);
  if (!scientific && s.find('.') == std::string::npos) s += ".0";
  return s;
}

// The 16-bit floats print with the fewest digits that read back to the same 16-bit value
// ("0.1", not float's "0.099975586").
template <class H> std::string format_half(H v) {
  const float f = static_cast<float>(v);
  if (std::isnan(f) || std::isinf(f) || f == 0.0f) return format_float(f, f);
  char buf[64];
  for (int digits = 1; digits <= 9; ++digits) {
    const auto res =
        std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific, digits - 1);
    double d = 0;
    std::from_chars(buf, res.ptr, d);
    if (H(to_float_round_odd(d)).bits == v.bits) return format_float(d, f);
  }
  return format_float(f, f);
}

template <class S> std::string to_text(const S& v) {
  if constexpr (std::is_same_v<S, bool>) {
    return v ? "True" : "False";
  } else if constexpr (is_half_v<S>) {
    return format_half(v);
  } else if constexpr (std::is_floating_point_v<S>) {
    return format_float(v, static_cast<double>(v));
  } else {
    return std::to_string(v);
  }
}

// ---- string → number ----

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const int ca = std::tolower(static_cast<unsigned char>(a[i]));
    const int cb = std::tolower(static_cast<unsigned char>(b[i]));
    if (ca != cb) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

[[noreturn]] void unparsable(const std::string& s, const char* what, const std::string& who) {
  const std::string shown = s.size() > 40 ? s.substr(0, 40) + "..." : s;
  fail(ErrorCode::InvalidArgument, who, ": cannot cast the string '", shown, "' to ", what);
}

// Parses the whole of `text` with from_chars (after one optional leading '+'). Returns the error
// code; a value that over- or underflows N is result_out_of_range.
template <class N> std::errc parse_all(std::string_view text, N& out) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  const char* end = text.data() + text.size();
  const auto res = std::from_chars(text.data(), end, out);
  if (res.ec == std::errc() && res.ptr != end) return std::errc::invalid_argument;
  return res.ec;
}

// Text → F (float or double), with the spec's special values.
template <class F> F parse_floating(const std::string& s, const std::string& who) {
  const std::string_view t = trim(s);
  if (iequals(t, "inf") || iequals(t, "+inf")) return std::numeric_limits<F>::infinity();
  if (iequals(t, "-inf")) return -std::numeric_limits<F>::infinity();
  if (iequals(t, "nan") || iequals(t, "+nan") || iequals(t, "-nan"))
    return std::numeric_limits<F>::quiet_NaN();
  F v = 0;
  const std::errc ec = parse_all(t, v);
  if (ec == std::errc()) return v;
  if (ec == std::errc::result_out_of_range) {
    // Valid text whose value over- or underflows F: strtod/strtof (same grammar, C locale)
    // give the ±inf or tiny value that from_chars will not.
    const std::string copy(t);
    if constexpr (std::is_same_v<F, float>) return std::strtof(copy.c_str(), nullptr);
    else
      return std::strtod(copy.c_str(), nullptr);
  }
  unparsable(s, "a number", who);
}

template <class D> D parse_text(const std::string& s, const std::string& who) {
  if constexpr (std::is_same_v<D, bool>) {
    const std::string_view t = trim(s);
    if (iequals(t, "true")) return true;
    if (iequals(t, "false")) return false;
    return parse_floating<double>(s, who) != 0.0;
  } else if constexpr (std::is_floating_point_v<D>) {
    return parse_floating<D>(s, who);
  } else if constexpr (is_half_v<D>) {
    return D(to_float_round_odd(parse_floating<double>(s, who)));
  } else {
    // Integers parse exactly when the text is an integer; "100.5" or "1e3" go through double.
    D v = 0;
    if (parse_all(trim(s), v) == std::errc()) return v;
    return saturate_to_int<D>(parse_floating<double>(s, who));
  }
}

// ---- number → number ----

template <class D, class S> D convert_number(S v) {
  using CS = compute_t<S>;
  if constexpr (std::is_same_v<D, bool>) {
    return static_cast<CS>(v) != CS(0);
  } else if constexpr (std::is_same_v<S, bool>) {
    return static_cast<D>(static_cast<compute_t<D>>(v ? 1 : 0));
  } else if constexpr (is_half_v<D>) {
    if constexpr (std::is_same_v<S, float> || is_half_v<S>) {
      return D(static_cast<float>(v));
    } else {
      return D(to_float_round_odd(static_cast<double>(v)));
    }
  } else if constexpr (std::is_floating_point_v<D>) {
    return static_cast<D>(static_cast<CS>(v));
  } else if constexpr (is_floaty_v<S>) {
    return saturate_to_int<D>(static_cast<double>(static_cast<CS>(v)));
  } else {
    return static_cast<D>(v);  // integer → integer wraps (C++20 defines it)
  }
}

template <class D, class S> D convert(const S& v, const std::string& who) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (std::is_same_v<D, std::string>) {
    return to_text(v);
  } else if constexpr (std::is_same_v<S, std::string>) {
    return parse_text<D>(v, who);
  } else {
    return convert_number<D>(v);
  }
}

// ---- the low-precision types ----

struct LowpOptions {
  bool saturate = true;
  lowp::E8M0Rounding rounding = lowp::E8M0Rounding::Up;
};

bool is_lowp(DType t) { return is_low_precision_float(t) || is_low_precision_integer(t); }

// A real value as the code of low-precision type `to`.
uint32_t lowp_from_value(DType to, double v, const LowpOptions& o) {
  if (is_low_precision_integer(to)) return lowp::int_code_from_double(to, v);
  if (to == DType::Float8E8M0)
    return lowp::e8m0_from_float(static_cast<float>(v), o.saturate, o.rounding);
  return lowp::from_double(to, v, o.saturate);
}

template <class S>
uint32_t to_lowp(const S& v, DType to, const LowpOptions& o, const std::string& who) {
  if constexpr (std::is_same_v<S, std::string>) {
    int64_t i = 0;
    if (is_low_precision_integer(to) && parse_all(trim(v), i) == std::errc())
      return lowp::int_code_wrapped(to, i);
    return lowp_from_value(to, parse_floating<double>(v, who), o);
  } else if constexpr (std::is_same_v<S, bool>) {
    return lowp_from_value(to, v ? 1.0 : 0.0, o);
  } else if constexpr (std::is_integral_v<S>) {
    if (is_low_precision_integer(to)) return lowp::int_code_wrapped(to, static_cast<int64_t>(v));
    // float8e8m0 reads the value as a float; one rounding, as numpy's int → float32.
    if (to == DType::Float8E8M0)
      return lowp::e8m0_from_float(static_cast<float>(v), o.saturate, o.rounding);
    return lowp_from_value(to, static_cast<double>(v), o);
  } else {
    return lowp_from_value(to, static_cast<double>(static_cast<compute_t<S>>(v)), o);
  }
}

// Element i of low-precision tensor x (type t) as D.
template <class D> D from_lowp(DType t, const void* x, int64_t i, const std::string& who) {
  const uint32_t code = lowp::get(t, x, i);
  if (is_low_precision_integer(t)) return convert<D>(lowp::int_value(t, code), who);
  const float f = lowp::to_float(t, code);
  if constexpr (std::is_same_v<D, std::string>) {
    if (std::isnan(f) || std::isinf(f) || f == 0.0f || t == DType::Float8E8M0)
      return format_float(f, f);
    // The fewest digits that read back to the same code, as the 16-bit floats print.
    char buf[64];
    for (int digits = 1; digits <= 9; ++digits) {
      const auto res =
          std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific, digits - 1);
      double d = 0;
      std::from_chars(buf, res.ptr, d);
      if (lowp::from_double(t, d, true) == code) return format_float(d, f);
    }
    return format_float(f, f);
  } else {
    return convert<D>(f, who);
  }
}

void cast_lowp(const Tensor& x, DType to, const LowpOptions& o, KernelContext& ctx,
               const std::string& who) {
  const DType from = x.dtype();
  Tensor& y = ctx.output(0, to, x.shape());
  const int64_t n = x.numel();
  if (!is_lowp(to)) {
    dispatch(AllTypes{}, to, who.c_str(), [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      D* out = y.data<D>();
      const void* in = x.raw_data();
      for (int64_t i = 0; i < n; ++i) out[i] = from_lowp<D>(from, in, i, who);
    });
    return;
  }
  void* out = y.raw_data();
  if (y.nbytes()) std::memset(out, 0, y.nbytes());  // a packed output's padding bits are zero
  if (is_lowp(from)) {
    const void* in = x.raw_data();
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t code = lowp::get(from, in, i);
      const uint32_t r = is_low_precision_integer(from) && is_low_precision_integer(to)
                             ? lowp::int_code_wrapped(to, lowp::int_value(from, code))
                             : lowp_from_value(to, lowp::get_value(from, in, i), o);
      lowp::set(to, out, i, r);
    }
    return;
  }
  dispatch(AllTypes{}, from, who.c_str(), [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    const S* in = x.data<S>();
    for (int64_t i = 0; i < n; ++i) lowp::set(to, out, i, to_lowp(in[i], to, o, who));
  });
}

void cast_into(const Tensor& x, DType to, const LowpOptions& o, KernelContext& ctx,
               const std::string& who) {
  if (x.dtype() == to) {
    ctx.set_output(0, x);  // outputs may share an input's memory: kernels never write inputs
    return;
  }
  if (is_lowp(x.dtype()) || is_lowp(to)) return cast_lowp(x, to, o, ctx, who);
  dispatch(AllTypes{}, x.dtype(), who.c_str(), [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    dispatch(AllTypes{}, to, who.c_str(), [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      Tensor& y = ctx.output(0, to, x.shape());
      const S* in = x.data<S>();
      D* out = y.data<D>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = convert<D>(in[i], who);
    });
  });
}

bool castable(DType t) {
  return is_float(t) || is_integer(t) || t == DType::Bool || t == DType::String || is_lowp(t);
}

LowpOptions lowp_options(const KernelInfo& info) {
  LowpOptions o;
  o.saturate = info.attr_int("saturate", 1) != 0;
  const std::string mode = info.attr_string("round_mode", "up");
  if (!lowp::parse_e8m0_rounding(mode.c_str(), &o.rounding))
    fail(ErrorCode::InvalidModel, info.node().label(), ": round_mode '", mode,
         "' is not one of up, down, nearest");
  return o;
}

// Cast-1 names its target with TensorProto's enum names.
DType dtype_from_proto_name(const std::string& name) {
  static const struct {
    const char* name;
    DType t;
  } kNames[] = {
      {"FLOAT", DType::Float32},   {"UINT8", DType::UInt8},       {"INT8", DType::Int8},
      {"UINT16", DType::UInt16},   {"INT16", DType::Int16},       {"INT32", DType::Int32},
      {"INT64", DType::Int64},     {"STRING", DType::String},     {"BOOL", DType::Bool},
      {"FLOAT16", DType::Float16}, {"DOUBLE", DType::Float64},    {"UINT32", DType::UInt32},
      {"UINT64", DType::UInt64},   {"BFLOAT16", DType::BFloat16},
  };
  for (const auto& n : kNames)
    if (iequals(name, n.name)) return n.t;
  return DType::Undefined;
}

class CastKernel final : public Kernel {
 public:
  explicit CastKernel(const KernelInfo& info) : lowp_(lowp_options(info)) {
    const ir::Attribute* to = info.node().attr("to");
    PI_CHECK(to != nullptr, InvalidModel, info.node().label(), ": attribute 'to' is missing");
    if (to->type == ir::Attribute::Type::String) {
      to_ = dtype_from_proto_name(to->s);
      if (to_ == DType::Undefined) info.unsupported("cast to '" + to->s + "'");
    } else {
      const int64_t code = info.attr_int("to");
      to_ = static_cast<DType>(code);
      if (!is_tensor_dtype_code(code) || !castable(to_))
        info.unsupported("cast to element type " + std::to_string(code));
    }
  }

  void run(KernelContext& ctx) override {
    cast_into(ctx.input(0), to_, lowp_, ctx, ctx.node().label());
  }

 private:
  DType to_ = DType::Undefined;
  LowpOptions lowp_;
};

class CastLikeKernel final : public Kernel {
 public:
  explicit CastLikeKernel(const KernelInfo& info) : lowp_(lowp_options(info)) {
    // When import knows the target type, an unsupported one is a placement reason, not a run-time
    // failure.
    const ir::TypeInfo* like = info.input_type(1);
    if (like != nullptr && like->elem != DType::Undefined && !castable(like->elem))
      info.unsupported(std::string("cast to ") + dtype_name(like->elem));
  }

  void run(KernelContext& ctx) override {
    const std::string who = ctx.node().label();
    const DType to = ctx.input(1).dtype();
    PI_CHECK(castable(to), UnsupportedOp, who, ": cast to ", dtype_name(to), " is not implemented");
    cast_into(ctx.input(0), to, lowp_, ctx, who);
  }

 private:
  LowpOptions lowp_;
};

}  // namespace

PI_CPU_KERNEL(Cast, 1, 28, CastKernel);
PI_CPU_KERNEL(CastLike, 15, 28, CastLikeKernel);

}  // namespace polyinfer
