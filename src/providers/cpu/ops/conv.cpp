// Conv and ConvInteger: direct N-D grouped convolution, plus the window arithmetic
// (conv_util.h) that pooling, ConvTranspose and QLinearConv share.
#include <algorithm>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/ops/conv_util.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {

WindowAttrs WindowAttrs::parse(const KernelInfo& info) {
  WindowAttrs a;
  a.auto_pad = info.attr_string("auto_pad", "NOTSET");
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" &&
      a.auto_pad != "SAME_LOWER")
    info.unsupported("auto_pad=" + a.auto_pad);
  a.kernel_shape = info.attr_ints("kernel_shape");
  a.strides = info.attr_ints("strides");
  a.dilations = info.attr_ints("dilations");
  a.pads = info.attr_ints("pads");
  a.group = info.attr_int("group", 1);
  a.ceil_mode = info.attr_int("ceil_mode", 0) != 0;
  PI_CHECK(a.group >= 1, InvalidModel, info.node().label(), ": group must be positive, got ",
           a.group);
  return a;
}

int64_t WindowGeometry::in_size() const { return shape_numel(in); }
int64_t WindowGeometry::out_size() const { return shape_numel(out); }
int64_t WindowGeometry::kernel_size() const { return shape_numel(kernel); }

static std::vector<int64_t> or_fill(const std::vector<int64_t>& v, size_t n, int64_t def,
                                    const char* name, const std::string& who) {
  if (v.empty()) return std::vector<int64_t>(n, def);
  PI_CHECK(v.size() == n, InvalidModel, who, ": ", name, " has ", v.size(), " values, expected ",
           n);
  return v;
}

WindowGeometry window_geometry(const WindowAttrs& a, const Shape& in, const Shape& kernel,
                               const std::string& who, bool pool) {
  WindowGeometry g;
  g.rank = static_cast<int>(in.size());
  const size_t r = in.size();
  PI_CHECK(kernel.size() == r, ShapeMismatch, who, ": kernel has ", kernel.size(),
           " spatial dimensions but the input has ", r);
  g.in = in;
  g.kernel = kernel;
  g.strides = or_fill(a.strides, r, 1, "strides", who);
  g.dilations = or_fill(a.dilations, r, 1, "dilations", who);
  const std::vector<int64_t> pads = or_fill(a.pads, 2 * r, 0, "pads", who);
  g.pad_begin.assign(r, 0);
  g.pad_end.assign(r, 0);
  g.out.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    PI_CHECK(g.strides[i] >= 1 && g.dilations[i] >= 1, InvalidModel, who,
             ": strides and dilations must be positive");
    PI_CHECK(kernel[i] >= 1, InvalidModel, who, ": kernel size must be positive");
    const int64_t s = g.strides[i];
    const int64_t eff = (kernel[i] - 1) * g.dilations[i] + 1;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      g.out[i] = (in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + eff - in[i]);
      g.pad_begin[i] = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    if (a.auto_pad == "NOTSET") {
      g.pad_begin[i] = pads[i];
      g.pad_end[i] = pads[i + r];
      PI_CHECK(pads[i] >= 0 && pads[i + r] >= 0, InvalidModel, who, ": pads must be >= 0");
    }
    const int64_t span = in[i] + g.pad_begin[i] + g.pad_end[i] - eff;
    PI_CHECK(span >= 0, ShapeMismatch, who, ": window of ", eff, " does not fit input size ", in[i],
             " with its padding");
    if (pool && a.ceil_mode && a.auto_pad == "NOTSET") {
      g.out[i] = (span + s - 1) / s + 1;
      // A last window that would start in the end padding is dropped (as PyTorch and ORT do).
      if ((g.out[i] - 1) * s >= in[i] + g.pad_begin[i]) --g.out[i];
    } else {
      g.out[i] = span / s + 1;
    }
  }
  return g;
}

void window_taps(const WindowGeometry& g, int64_t o, std::vector<int64_t>& taps) {
  const int64_t ksz = g.kernel_size();
  taps.resize(static_cast<size_t>(ksz));
  std::vector<int64_t> oi(g.rank), k(g.rank);
  unflatten(o, g.out, oi);
  for (int64_t ki = 0; ki < ksz; ++ki) {
    unflatten(ki, g.kernel, k);
    int64_t off = 0;
    for (int d = 0; d < g.rank; ++d) {
      const int64_t p = oi[d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
      if (p < 0 || p >= g.in[d]) {
        off = -1;
        break;
      }
      off = off * g.in[d] + p;
    }
    taps[ki] = off;
  }
}

WindowGeometry conv_geometry(const WindowAttrs& a, const Shape& x, const Shape& w,
                             const std::string& who) {
  PI_CHECK(x.size() >= 3, ShapeMismatch, who, ": input must be [N, C, D...], got ", shape_str(x));
  PI_CHECK(w.size() == x.size(), ShapeMismatch, who, ": weight ", shape_str(w),
           " must have the input's rank ", x.size());
  PI_CHECK(x[1] % a.group == 0 && w[0] % a.group == 0 && w[1] * a.group == x[1], ShapeMismatch, who,
           ": input ", shape_str(x), " and weight ", shape_str(w),
           " do not agree with group=", a.group);
  const Shape in(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
  if (!a.kernel_shape.empty())
    PI_CHECK(a.kernel_shape == kernel, ShapeMismatch, who, ": kernel_shape ",
             shape_str(a.kernel_shape), " does not match weight ", shape_str(w));
  return window_geometry(a, in, kernel, who);
}

namespace {

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const KernelInfo& info)
      : attrs_(WindowAttrs::parse(info)), who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    PI_CHECK(w.dtype() == x.dtype(), InvalidArgument, who_, ": X and W dtypes differ");
    const WindowGeometry g = conv_geometry(attrs_, x.shape(), w.shape(), who_);
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
    const Tensor* b = nullptr;
    if (ctx.has_input(2)) {
      b = &ctx.input(2);
      PI_CHECK(b->dtype() == x.dtype() && b->shape() == Shape{M}, ShapeMismatch, who_,
               ": bias must be ", dtype_name(x.dtype()), "[", M, "], got ", b->describe());
    }
    Shape ys{N, M};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    Tensor& y = ctx.output(0, x.dtype(), ys);
    dispatch(FloatTypes{}, x.dtype(), "Conv", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const T* xp = x.data<T>();
      const T* wp = w.data<T>();
      const int64_t isz = g.in_size(), ksz = g.kernel_size(), cg = C / attrs_.group;
      std::vector<A> acc(static_cast<size_t>(y.numel()));
      conv_direct<A>(
          g, N, C, M, attrs_.group,
          [&](int64_t n, int64_t c, int64_t off) { return A(xp[(n * C + c) * isz + off]); },
          [&](int64_t m, int64_t c, int64_t k) { return A(wp[(m * cg + c) * ksz + k]); },
          acc.data());
      T* yp = y.data<T>();
      const int64_t osz = g.out_size();
      for (int64_t i = 0; i < y.numel(); ++i) {
        A v = acc[i];
        if (b) v += A(b->data<T>()[(i / osz) % M]);
        yp[i] = T(v);
      }
    });
  }

 private:
  WindowAttrs attrs_;
  std::string who_;
};

// Reads a zero point that is a scalar, or (for W) one value per output channel.
template <class T>
std::vector<int32_t> read_zero_points(const KernelContext& ctx, size_t i, int64_t per,
                                      const std::string& who) {
  if (!ctx.has_input(i)) return std::vector<int32_t>(1, 0);
  const Tensor& z = ctx.input(i);
  PI_CHECK(z.dtype() == dtype_of<T>(), InvalidArgument, who, ": zero point dtype ",
           dtype_name(z.dtype()), " differs from its tensor's");
  PI_CHECK(z.numel() == 1 || (per > 0 && z.rank() == 1 && z.numel() == per), ShapeMismatch, who,
           ": zero point must be a scalar", per > 0 ? " or one per output channel" : "", ", got ",
           z.describe());
  std::vector<int32_t> out(static_cast<size_t>(z.numel()));
  for (size_t k = 0; k < out.size(); ++k) out[k] = static_cast<int32_t>(z.data<T>()[k]);
  return out;
}

class ConvIntegerKernel final : public Kernel {
 public:
  explicit ConvIntegerKernel(const KernelInfo& info)
      : attrs_(WindowAttrs::parse(info)), who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const WindowGeometry g = conv_geometry(attrs_, x.shape(), w.shape(), who_);
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
    Shape ys{N, M};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    using U8 = TypeList<uint8_t, int8_t>;
    dispatch(U8{}, x.dtype(), "ConvInteger", [&](auto xtag) {
      using TX = typename decltype(xtag)::type;
      dispatch(U8{}, w.dtype(), "ConvInteger", [&](auto wtag) {
        using TW = typename decltype(wtag)::type;
        const std::vector<int32_t> xz = read_zero_points<TX>(ctx, 2, 0, who_);
        const std::vector<int32_t> wz = read_zero_points<TW>(ctx, 3, M, who_);
        const TX* xp = x.data<TX>();
        const TW* wp = w.data<TW>();
        const int64_t isz = g.in_size(), ksz = g.kernel_size(), cg = C / attrs_.group;
        Tensor& y = ctx.output(0, DType::Int32, ys);
        conv_direct<int32_t>(
            g, N, C, M, attrs_.group,
            [&](int64_t n, int64_t c, int64_t off) {
              return int32_t(xp[(n * C + c) * isz + off]) - xz[0];
            },
            [&](int64_t m, int64_t c, int64_t k) {
              return int32_t(wp[(m * cg + c) * ksz + k]) - wz[wz.size() == 1 ? 0 : m];
            },
            y.data<int32_t>());
      });
    });
  }

 private:
  WindowAttrs attrs_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(Conv, 1, 22, ConvKernel);
PI_CPU_KERNEL(ConvInteger, 10, 23, ConvIntegerKernel);

}  // namespace polyinfer::cpu
