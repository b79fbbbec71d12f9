// Linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, the quantized
// products QLinearMatMul and QLinearConv, and ai.polyinfer QLinearAdd and QLinearGemm.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/dispatch.h"
#include "core/low_precision.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/conv_direct.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

using QuantTypes = TypeList<uint8_t, int8_t, uint16_t, int16_t>;

// round(v) + zp, saturated to Q; rounding is half to even (the default floating-point mode).
template <class Q> Q saturate_round(double v, double zp) {
  const double r = std::nearbyint(v) + zp;
  if (std::isnan(r)) return Q(0);
  return Q(
      std::clamp(r, double(std::numeric_limits<Q>::min()), double(std::numeric_limits<Q>::max())));
}

// Element values as doubles: the numeric types, and the low-precision ones (float8 scales and
// zero points, int4 inputs).
std::vector<double> as_doubles(const Tensor& t, const std::string& who) {
  if (is_low_precision_float(t.dtype()) || is_low_precision_integer(t.dtype())) {
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = lowp::get_value(t.dtype(), t.raw_data(), static_cast<int64_t>(i));
    return v;
  }
  return dispatch(NumericTypes{}, t.dtype(), who.c_str(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = double(compute_t<T>(t.data<T>()[i]));
    return v;
  });
}

// Where per-element parameters (scale, zero point) come from: a single value, one per position
// along the axis, or (blocked) one per `block` consecutive positions along the axis and per
// position of every other axis. param_index(i) gives the parameter of flat element i.
struct ParamLayout {
  enum class Kind { Tensor, Axis, Blocked } kind = Kind::Tensor;
  int64_t inner = 1;  // elements after the axis
  int64_t dim = 1;    // x's size along the axis
  int64_t count = 1;  // parameters along the axis
  int64_t block = 1;
  int64_t param_index(int64_t i) const {
    switch (kind) {
      case Kind::Tensor: return 0;
      case Kind::Axis: return (i / inner) % dim;
      case Kind::Blocked:
        return ((i / (dim * inner)) * count + ((i / inner) % dim) / block) * inner + i % inner;
    }
    return 0;
  }
};

ParamLayout param_layout(const Tensor& x, const Tensor& scale, int64_t axis_attr,
                         int64_t block_size, const std::string& who) {
  ParamLayout l;
  if (block_size <= 0 && scale.numel() == 1 && scale.rank() <= 1) return l;
  const int64_t axis = normalize_axis(axis_attr, x.rank(), who.c_str());
  l.dim = x.dim(static_cast<int>(axis));
  for (int d = static_cast<int>(axis) + 1; d < x.rank(); ++d) l.inner *= x.dim(d);
  if (block_size <= 0) {
    PI_CHECK(scale.rank() == 1, ShapeMismatch, who, ": scale must be a scalar or 1-D, got ",
             scale.describe(), " (blocked quantization needs the block_size attribute)");
    PI_CHECK(scale.numel() == l.dim, ShapeMismatch, who, ": scale ", scale.describe(),
             " must have one value per index of axis ", axis, " of ", x.describe());
    l.kind = ParamLayout::Kind::Axis;
    l.count = l.dim;
    return l;
  }
  // Blocked: the scale has x's shape but ceil(D / block_size) along the axis.
  bool ok = scale.rank() == x.rank();
  for (int d = 0; ok && d < x.rank(); ++d)
    if (d != axis) ok = scale.dim(d) == x.dim(d);
  l.count = ok ? scale.dim(static_cast<int>(axis)) : 0;
  PI_CHECK(ok && l.count == (l.dim + block_size - 1) / block_size, ShapeMismatch, who,
           ": blocked quantization with block_size ", block_size, " along axis ", axis, " of ",
           x.describe(), " needs a scale of its shape with ", (l.dim + block_size - 1) / block_size,
           " along that axis, got ", scale.describe());
  l.kind = ParamLayout::Kind::Blocked;
  l.block = block_size;
  return l;
}

void check_zero_point(const Tensor& zp, const Tensor& scale, const std::string& who) {
  PI_CHECK(zp.shape() == scale.shape() || (zp.numel() == 1 && scale.numel() == 1), ShapeMismatch,
           who, ": zero point ", zp.describe(), " must have the shape of the scale ",
           scale.describe());
}

// QuantizeLinear's output types, from y_zero_point or output_dtype.
bool quantized_type(DType t) {
  switch (t) {
    case DType::UInt8:
    case DType::Int8:
    case DType::UInt16:
    case DType::Int16: return true;
    default:
      return (is_low_precision_float(t) && t != DType::Float8E8M0) || is_low_precision_integer(t);
  }
}

// `v` rounded to the float type `p` (the precision QuantizeLinear divides in).
double round_to(DType p, double v) {
  switch (p) {
    case DType::Float32: return double(float(v));
    case DType::Float16: return double(float(Float16(float(v))));
    case DType::BFloat16: return double(float(BFloat16(float(v))));
    default: return v;
  }
}

int64_t block_size_attr(const KernelInfo& info) {
  const int64_t b = info.attr_int("block_size", 0);
  PI_CHECK(b >= 0, InvalidModel, info.node().label(), ": block_size ", b, " is negative");
  return b;
}

// y = saturate(round(x / scale) + zero_point) for the integer types, and x / scale + zero_point
// rounded to nearest even for the floats (saturating by `saturate` for float8; the 6- and 4-bit
// floats always saturate). The division rounds to the `precision` attribute's type, else the
// scale's (numpy's float64 for int32 scales), as the spec and its reference do. A NaN gives 0 for
// the integer types. The zero point enters the float formula too (the spec's formula; the
// reference leaves it out for float8, where it must be 0).
class QuantizeLinearKernel final : public Kernel {
 public:
  explicit QuantizeLinearKernel(const KernelInfo& info)
      : axis_(info.attr_int("axis", 1)),
        block_(block_size_attr(info)),
        saturate_(info.attr_int("saturate", 1) != 0),
        who_(info.node().label()) {
    const int64_t od = info.attr_int("output_dtype", 0);
    if (od != 0) {
      if (!is_tensor_dtype_code(od) || !quantized_type(static_cast<DType>(od)))
        info.unsupported("output_dtype " + std::to_string(od));
      output_dtype_ = static_cast<DType>(od);
    }
    const int64_t p = info.attr_int("precision", 0);
    if (p != 0) {
      precision_ = static_cast<DType>(p);
      if (precision_ != DType::Float32 && precision_ != DType::Float16 &&
          precision_ != DType::BFloat16 && precision_ != DType::Float64)
        info.unsupported("precision " + std::to_string(p));
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const ParamLayout l = param_layout(x, scale, axis_, block_, who_);
    const std::vector<double> s = as_doubles(scale, who_);
    std::vector<double> zp(s.size(), 0.0);
    DType qt = output_dtype_ == DType::Undefined ? DType::UInt8 : output_dtype_;
    if (ctx.has_input(2)) {
      const Tensor& z = ctx.input(2);
      check_zero_point(z, scale, who_);
      PI_CHECK(output_dtype_ == DType::Undefined || output_dtype_ == z.dtype(), InvalidArgument,
               who_, ": output_dtype ", dtype_name(output_dtype_),
               " differs from the zero point's ", dtype_name(z.dtype()));
      qt = z.dtype();
      zp = as_doubles(z, who_);
    }
    PI_CHECK(quantized_type(qt), UnsupportedOp, who_, ": cannot quantize to ", dtype_name(qt));
    DType p = precision_;
    if (p == DType::Undefined) {
      const DType st = scale.dtype();
      p = st == DType::Float32 || st == DType::Float16 || st == DType::BFloat16 ? st
          : st == DType::Int32                                                  ? DType::Float64
                                                                                : DType::Float32;
    }
    const std::vector<double> xv = as_doubles(x, who_);
    const auto quotient = [&](int64_t i, int64_t k) {
      return round_to(p, round_to(p, xv[i]) / round_to(p, s[k]));
    };
    Tensor& y = ctx.output(0, qt, x.shape());
    const int64_t n = x.numel();
    if (is_low_precision_float(qt) || is_low_precision_integer(qt)) {
      void* out = y.raw_data();
      if (y.nbytes()) std::memset(out, 0, y.nbytes());  // a packed output's padding bits
      const bool integer = is_low_precision_integer(qt);
      const double lo = integer ? double(lowp::int_min(qt)) : 0;
      const double hi = integer ? double(lowp::int_max(qt)) : 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = l.param_index(i);
        const double q = quotient(i, k);
        uint32_t code;
        if (integer) {
          const double r = std::nearbyint(q) + zp[k];
          code = std::isnan(r) ? 0 : lowp::int_code_wrapped(qt, int64_t(std::clamp(r, lo, hi)));
        } else {
          code = lowp::from_double(qt, q + zp[k], saturate_);
        }
        lowp::set(qt, out, i, code);
      }
      return;
    }
    dispatch(QuantTypes{}, qt, "QuantizeLinear", [&](auto tag) {
      using Q = typename decltype(tag)::type;
      Q* yp = y.data<Q>();
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = l.param_index(i);
        yp[i] = saturate_round<Q>(quotient(i, k), zp[k]);
      }
    });
  }

 private:
  int64_t axis_, block_;
  bool saturate_;
  DType output_dtype_ = DType::Undefined, precision_ = DType::Undefined;
  std::string who_;
};

// y = (x - zero_point) * scale in float, then rounded to the output type: output_dtype (opset
// 23+), else the scale's type.
class DequantizeLinearKernel final : public Kernel {
 public:
  explicit DequantizeLinearKernel(const KernelInfo& info)
      : axis_(info.attr_int("axis", 1)), block_(block_size_attr(info)), who_(info.node().label()) {
    const int64_t od = info.attr_int("output_dtype", 0);
    if (od != 0) {
      output_dtype_ = static_cast<DType>(od);
      if (output_dtype_ != DType::Float32 && output_dtype_ != DType::Float16 &&
          output_dtype_ != DType::BFloat16)
        info.unsupported("output_dtype " + std::to_string(od));
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    PI_CHECK(is_float(scale.dtype()) || scale.dtype() == DType::Float8E8M0, InvalidArgument, who_,
             ": scale must be a float tensor, got ", scale.describe());
    const DType yt = output_dtype_ != DType::Undefined ? output_dtype_ : scale.dtype();
    PI_CHECK(yt == DType::Float32 || yt == DType::Float16 || yt == DType::BFloat16, InvalidArgument,
             who_, ": the output type ", dtype_name(yt),
             " (the scale's) is not float32, float16 or bfloat16; set output_dtype");
    const ParamLayout l = param_layout(x, scale, axis_, block_, who_);
    const std::vector<double> s = as_doubles(scale, who_);
    std::vector<double> zp(s.size(), 0.0);
    if (ctx.has_input(2)) {
      check_zero_point(ctx.input(2), scale, who_);
      PI_CHECK(ctx.input(2).dtype() == x.dtype(), InvalidArgument, who_,
               ": zero point dtype differs from the input's");
      zp = as_doubles(ctx.input(2), who_);
    }
    const std::vector<double> xv = as_doubles(x, who_);
    Tensor& y = ctx.output(0, yt, x.shape());
    dispatch(FloatTypes{}, yt, "DequantizeLinear", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* yp = y.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t k = l.param_index(i);
        yp[i] = T(float(xv[i] - zp[k]) * float(s[k]));
      }
    });
  }

 private:
  int64_t axis_, block_;
  DType output_dtype_ = DType::Undefined;
  std::string who_;
};

class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  explicit DynamicQuantizeLinearKernel(const KernelInfo&) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.dtype() == DType::Float32, UnsupportedOp,
             "DynamicQuantizeLinear: input must be float, got ", x.describe());
    const float* xp = x.data<float>();
    // The range always includes 0 so that 0 is exactly representable.
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      lo = std::min(lo, xp[i]);
      hi = std::max(hi, xp[i]);
    }
    const float scale = (hi - lo) / 255.0f;
    const uint8_t zp = scale == 0 ? 0 : saturate_round<uint8_t>(double(0.0f - lo / scale), 0);
    Tensor& y = ctx.output(0, DType::UInt8, x.shape());
    uint8_t* yp = y.data<uint8_t>();
    for (int64_t i = 0; i < x.numel(); ++i)
      yp[i] = scale == 0 ? zp : saturate_round<uint8_t>(double(xp[i] / scale), zp);
    if (ctx.wants_output(1)) ctx.output(1, DType::Float32, {}).data<float>()[0] = scale;
    if (ctx.wants_output(2)) ctx.output(2, DType::UInt8, {}).data<uint8_t>()[0] = zp;
  }
};

// A quantization parameter pair (scale, zero point) of a QLinear op's operand: one value or one
// per channel (`per` > 0 allows that many).
struct QParams {
  std::vector<double> scale, zp;
  double s(int64_t i) const { return scale[scale.size() == 1 ? 0 : i]; }
  int32_t z(int64_t i) const { return int32_t(zp[zp.size() == 1 ? 0 : i]); }
};

QParams read_qparams(const KernelContext& ctx, size_t si, size_t zi, DType qtype, int64_t per,
                     const std::string& who) {
  const Tensor& s = ctx.input(si);
  const Tensor& z = ctx.input(zi);
  const auto ok = [&](const Tensor& t) {
    return t.numel() == 1 || (per > 0 && t.rank() == 1 && t.numel() == per);
  };
  PI_CHECK(ok(s) && ok(z) && is_float(s.dtype()) && z.dtype() == qtype, ShapeMismatch, who,
           ": scale ", s.describe(), " / zero point ", z.describe(), " must be a float and a ",
           dtype_name(qtype), ", each with 1", per > 0 ? " or " + std::to_string(per) : "",
           " values");
  return {as_doubles(s, who), as_doubles(z, who)};
}

// QLinearMatMul, and ai.polyinfer QLinearGemm (the QDQ pass's Gemm): QLinearMatMul's inputs
// with A 2-D and B [K, N], then an optional int32 bias[N] at scale sa·sb[n], added to each
// accumulator before the requantization as QLinearConv's bias is. Without sy and zy (inputs 6
// and 7 empty) QLinearGemm's Y is float32: (acc + bias)·sa·sb[n] (a classifier's logits).
class QLinearMatMulKernel final : public Kernel {
 public:
  explicit QLinearMatMulKernel(const KernelInfo& info)
      : who_(info.node().label()), gemm_(info.node().op_type == "QLinearGemm") {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    PI_CHECK(a.rank() >= 1 && b.rank() >= 1, ShapeMismatch, who_, ": operands must not be scalars");
    Shape a2 = a.shape(), b2 = b.shape();
    if (a2.size() == 1) a2.insert(a2.begin(), 1);
    if (b2.size() == 1) b2.push_back(1);
    const int64_t M = a2[a2.size() - 2], K = a2.back(), N = b2.back();
    PI_CHECK(b2[b2.size() - 2] == K, ShapeMismatch, who_, ": inner dimensions of ", a.describe(),
             " and ", b.describe(), " differ");
    const QParams qa = read_qparams(ctx, 1, 2, a.dtype(), M, who_);
    const QParams qb = read_qparams(ctx, 4, 5, b.dtype(), N, who_);
    const bool float_y = gemm_ && !ctx.has_input(6);
    const DType yt = float_y ? DType::Float32 : ctx.input(7).dtype();
    const QParams qy = float_y ? QParams{{1.0}, {0.0}} : read_qparams(ctx, 6, 7, yt, 0, who_);
    const Shape ab(a2.begin(), a2.end() - 2), bb(b2.begin(), b2.end() - 2);
    const std::string bwho =
        who_ + " (batch dimensions of " + a.describe() + " and " + b.describe() + ")";
    const Shape batch = broadcast_shapes(ab, bb, bwho.c_str());
    Shape ys = batch;
    if (a.rank() > 1) ys.push_back(M);
    if (b.rank() > 1) ys.push_back(N);
    std::vector<int64_t> aoff, boff;
    const std::vector<int64_t> strides[2] = {broadcast_strides(ab, batch),
                                             broadcast_strides(bb, batch)};
    for_each_broadcast<2>(batch, strides, [&](int64_t, int64_t ao, int64_t bo) {
      aoff.push_back(ao * M * K);
      boff.push_back(bo * K * N);
    });
    PI_CHECK(!gemm_ || (a.rank() == 2 && b.rank() == 2), ShapeMismatch, who_,
             ": QLinearGemm takes 2-D A and B, got ", a.describe(), " and ", b.describe());
    const int32_t* bias = nullptr;
    if (gemm_ && ctx.has_input(8)) {
      const Tensor& c = ctx.input(8);
      PI_CHECK(c.dtype() == DType::Int32 && c.numel() == N, ShapeMismatch, who_,
               ": the bias must be int32 with ", N, " values, got ", c.describe());
      bias = c.data<int32_t>();
    }
    Tensor& y = ctx.output(0, yt, ys);
    using U8 = TypeList<uint8_t, int8_t>;
    using YT = TypeList<uint8_t, int8_t, float>;
    dispatch(U8{}, a.dtype(), "QLinearMatMul", [&](auto atag) {
      using TA = typename decltype(atag)::type;
      dispatch(U8{}, b.dtype(), "QLinearMatMul", [&](auto btag) {
        using TB = typename decltype(btag)::type;
        dispatch(YT{}, yt, "QLinearMatMul", [&](auto ytag) {
          using TY = typename decltype(ytag)::type;
          const TA* ap = a.data<TA>();
          const TB* bp = b.data<TB>();
          TY* yp = y.data<TY>();
          for (size_t bi = 0; bi < aoff.size(); ++bi)
            for (int64_t i = 0; i < M; ++i)
              for (int64_t j = 0; j < N; ++j) {
                int32_t acc = bias ? bias[j] : 0;
                for (int64_t k = 0; k < K; ++k)
                  acc += (int32_t(ap[aoff[bi] + i * K + k]) - qa.z(i)) *
                         (int32_t(bp[boff[bi] + k * N + j]) - qb.z(j));
                const double mult = qa.s(i) * qb.s(j) / qy.s(0);
                TY& out = yp[static_cast<int64_t>(bi) * M * N + i * N + j];
                if constexpr (std::is_same_v<TY, float>)
                  out = static_cast<float>(double(acc) * mult);
                else
                  out = saturate_round<TY>(double(acc) * mult, qy.z(0));
              }
        });
      });
    });
  }

 private:
  std::string who_;
  bool gemm_;
};

// QLinearConv, and ai.polyinfer QLinearConvAdd(X, sx, zx, W, sw, zw, sc, zc, B, Z, zs, zz, sy,
// zy): the convolution with its output saturation to (sc, zc) kept but not its rounding, plus
// a quantized residual Z, rounded once (docs/optimizer.md):
//   c = clamp((acc + B)·sx·sw, (qmin - zc)·sc, (qmax - zc)·sc)
//   y = saturate(round((c + (Z - zz)·zs) / sy) + zy)
class QLinearConvKernel final : public Kernel {
 public:
  explicit QLinearConvKernel(const KernelInfo& info)
      : attrs_(WindowAttrs::parse(info)),
        who_(info.node().label()),
        residual_(info.node().op_type == "QLinearConvAdd") {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(3);
    const WindowGeometry g = conv_geometry(attrs_, x.shape(), w.shape(), who_);
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
    const QParams qx = read_qparams(ctx, 1, 2, x.dtype(), 0, who_);
    const QParams qw = read_qparams(ctx, 4, 5, w.dtype(), M, who_);
    // QLinearConvAdd: (6, 7) quantize the convolution's own output (its saturation bounds),
    // (12, 13) the sum; QLinearConv: (6, 7) quantize Y.
    const DType yt = ctx.input(residual_ ? 13 : 7).dtype();
    const QParams qy = read_qparams(ctx, residual_ ? 12 : 6, residual_ ? 13 : 7, yt, 0, who_);
    const int32_t* bias = nullptr;
    if (ctx.has_input(8)) {
      const Tensor& b = ctx.input(8);
      PI_CHECK(b.dtype() == DType::Int32 && b.shape() == Shape{M}, ShapeMismatch, who_,
               ": bias must be int32[", M, "], got ", b.describe());
      bias = b.data<int32_t>();
    }
    Shape ys{N, M};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    std::vector<int32_t> acc(static_cast<size_t>(shape_numel(ys)));
    using U8 = TypeList<uint8_t, int8_t>;
    dispatch(U8{}, x.dtype(), "QLinearConv", [&](auto xtag) {
      using TX = typename decltype(xtag)::type;
      dispatch(U8{}, w.dtype(), "QLinearConv", [&](auto wtag) {
        using TW = typename decltype(wtag)::type;
        const TX* xp = x.data<TX>();
        const TW* wp = w.data<TW>();
        const int64_t isz = g.in_size(), ksz = g.kernel_size(), cg = C / attrs_.group;
        // Padding holds the zero point, i.e. a real zero: padded taps contribute nothing.
        conv_direct<int32_t>(
            g, N, C, M, attrs_.group,
            [&](int64_t n, int64_t c, int64_t off) {
              return int32_t(xp[(n * C + c) * isz + off]) - qx.z(0);
            },
            [&](int64_t m, int64_t c, int64_t k) {
              return int32_t(wp[(m * cg + c) * ksz + k]) - qw.z(m);
            },
            acc.data());
      });
    });
    // The residual in units of Y's scale (zero without one), and the convolution's bounds.
    std::vector<double> res(residual_ ? acc.size() : 0);
    double lo = -HUGE_VAL, hi = HUGE_VAL;
    if (residual_) {
      const DType ct = ctx.input(7).dtype();
      const QParams qc = read_qparams(ctx, 6, 7, ct, 0, who_);
      dispatch(U8{}, ct, "QLinearConvAdd", [&](auto ctag) {
        using TC = typename decltype(ctag)::type;
        lo = (double(std::numeric_limits<TC>::min()) - qc.z(0)) * qc.s(0) / qy.s(0);
        hi = (double(std::numeric_limits<TC>::max()) - qc.z(0)) * qc.s(0) / qy.s(0);
      });
      const Tensor& z = ctx.input(9);
      PI_CHECK(z.shape() == ys, ShapeMismatch, who_, ": Z ", z.describe(),
               " must have the output's shape ", shape_str(ys));
      const QParams qz = read_qparams(ctx, 10, 11, z.dtype(), 0, who_);
      dispatch(U8{}, z.dtype(), "QLinearConvAdd", [&](auto ztag) {
        using TZ = typename decltype(ztag)::type;
        for (size_t i = 0; i < res.size(); ++i)
          res[i] = double(int32_t(z.data<TZ>()[i]) - qz.z(0)) * (qz.s(0) / qy.s(0));
      });
    }
    Tensor& y = ctx.output(0, yt, ys);
    const int64_t osz = g.out_size();
    dispatch(U8{}, yt, "QLinearConv", [&](auto ytag) {
      using TY = typename decltype(ytag)::type;
      TY* yp = y.data<TY>();
      for (int64_t i = 0; i < y.numel(); ++i) {
        const int64_t m = (i / osz) % M;
        const double v = double(acc[i] + (bias ? bias[m] : 0));
        const double c = v * (qx.s(0) * qw.s(m) / qy.s(0));
        yp[i] = residual_ ? saturate_round<TY>(std::clamp(c, lo, hi) + res[i], qy.z(0))
                          : saturate_round<TY>(c, qy.z(0));
      }
    });
  }

 private:
  WindowAttrs attrs_;
  std::string who_;
  bool residual_;
};

// ai.polyinfer QLinearAdd(A, sa, za, B, sb, zb, sc, zc) → C of A's shape (B the same shape):
// exactly the DequantizeLinear → Add → QuantizeLinear it replaces (docs/optimizer.md), in float
// as those kernels compute: c = saturate(rint((float(a - za)·sa + float(b - zb)·sb) / sc) + zc).
class QLinearAddKernel final : public Kernel {
 public:
  explicit QLinearAddKernel(const KernelInfo& info) : who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    PI_CHECK(a.shape() == b.shape(), ShapeMismatch, who_, ": A ", a.describe(), " and B ",
             b.describe(), " must have the same shape");
    const DType ct = ctx.input(7).dtype();
    const QParams qa = read_qparams(ctx, 1, 2, a.dtype(), 0, who_);
    const QParams qb = read_qparams(ctx, 4, 5, b.dtype(), 0, who_);
    const QParams qc = read_qparams(ctx, 6, 7, ct, 0, who_);
    Tensor& c = ctx.output(0, ct, a.shape());
    using U8 = TypeList<uint8_t, int8_t>;
    dispatch(U8{}, a.dtype(), "QLinearAdd", [&](auto atag) {
      using TA = typename decltype(atag)::type;
      dispatch(U8{}, b.dtype(), "QLinearAdd", [&](auto btag) {
        using TB = typename decltype(btag)::type;
        dispatch(U8{}, ct, "QLinearAdd", [&](auto ctag) {
          using TC = typename decltype(ctag)::type;
          const float sa = float(qa.s(0)), sb = float(qb.s(0)), sc = float(qc.s(0));
          for (int64_t i = 0; i < a.numel(); ++i) {
            const float v = float(int32_t(a.data<TA>()[i]) - qa.z(0)) * sa +
                            float(int32_t(b.data<TB>()[i]) - qb.z(0)) * sb;
            c.data<TC>()[i] = saturate_round<TC>(double(v / sc), qc.z(0));
          }
        });
      });
    });
  }

 private:
  std::string who_;
};

}  // namespace

PI_CPU_INTERNAL_KERNEL(QLinearAdd, 1, 1, QLinearAddKernel);
PI_CPU_INTERNAL_KERNEL(QLinearConvAdd, 1, 1, QLinearConvKernel);
PI_CPU_INTERNAL_KERNEL(QLinearGemm, 1, 1, QLinearMatMulKernel);

// Later opsets add types (19: float8, 21: int4 and blocking, 23: float4, precision and the
// dequantized output_dtype, 24: float8e8m0 scales, 25: int2, 28: float6), all handled here.
PI_CPU_KERNEL(QuantizeLinear, 10, 28, QuantizeLinearKernel);
PI_CPU_KERNEL(DequantizeLinear, 10, 28, DequantizeLinearKernel);
PI_CPU_KERNEL(DynamicQuantizeLinear, 11, 28, DynamicQuantizeLinearKernel);
// QLinearMatMul-21 adds float8 operands (not in polyinfer) and float16 scales (read as floats
// here); QLinearConv has had no new version since 10.
PI_CPU_KERNEL(QLinearMatMul, 10, 28, QLinearMatMulKernel);
PI_CPU_KERNEL(QLinearConv, 10, 28, QLinearConvKernel);

}  // namespace polyinfer::cpu
