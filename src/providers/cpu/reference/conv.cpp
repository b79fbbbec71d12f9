// Conv and ConvInteger: direct N-D grouped convolution (conv_direct.h).
#include <algorithm>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/conv_direct.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {

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

PI_CPU_KERNEL(Conv, 1, 28, ConvKernel);
PI_CPU_KERNEL(ConvInteger, 10, 28, ConvIntegerKernel);

}  // namespace polyinfer::cpu
