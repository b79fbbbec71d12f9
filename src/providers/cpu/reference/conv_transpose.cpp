// ConvTranspose: the gradient of Conv with respect to its input, computed by scattering each
// input element times the kernel into the output.
#include <algorithm>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "ops/window.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {

namespace {

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const KernelInfo& info)
      : attrs_(ConvTransposeAttrs::parse(info)), who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    PI_CHECK(w.dtype() == x.dtype(), InvalidArgument, who_, ": X and W dtypes differ");
    const ConvTransposeGeometry g = conv_transpose_geometry(attrs_, x.shape(), w.shape(), who_);
    const int64_t group = g.group, N = g.N, C = g.C, mg = w.dim(1), M = g.M;
    const size_t r = g.in.size();
    const Shape& in = g.in;
    const Shape& kernel = g.kernel;
    const Shape& out = g.out;
    const std::vector<int64_t>& strides = g.strides;
    const std::vector<int64_t>& dil = g.dilations;
    const std::vector<int64_t>& pb = g.pad_begin;

    const Tensor* b = nullptr;
    if (ctx.has_input(2)) {
      b = &ctx.input(2);
      PI_CHECK(b->dtype() == x.dtype() && b->shape() == Shape{M}, ShapeMismatch, who_,
               ": bias must be ", dtype_name(x.dtype()), "[", M, "], got ", b->describe());
    }
    Shape ys{N, M};
    ys.insert(ys.end(), out.begin(), out.end());
    Tensor& y = ctx.output(0, x.dtype(), ys);
    const int64_t isz = shape_numel(in), ksz = shape_numel(kernel), osz = shape_numel(out);
    const int64_t cg = C / group;

    // The output offset each kernel tap of input position `a` lands on, or -1.
    std::vector<int64_t> dest(static_cast<size_t>(ksz)), ii(r), kk(r);
    const auto targets = [&](int64_t a) {
      unflatten(a, in, ii);
      for (int64_t k = 0; k < ksz; ++k) {
        unflatten(k, kernel, kk);
        int64_t off = 0;
        for (size_t d = 0; d < r; ++d) {
          const int64_t p = ii[d] * strides[d] - pb[d] + kk[d] * dil[d];
          if (p < 0 || p >= out[d]) {
            off = -1;
            break;
          }
          off = off * out[d] + p;
        }
        dest[k] = off;
      }
    };

    dispatch(FloatTypes{}, x.dtype(), "ConvTranspose", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const T* xp = x.data<T>();
      const T* wp = w.data<T>();
      std::vector<A> acc(static_cast<size_t>(y.numel()), A(0));
      for (int64_t a = 0; a < isz; ++a) {
        targets(a);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t c = 0; c < C; ++c) {
            const int64_t m0 = (c / cg) * mg;
            const A xv = A(xp[(n * C + c) * isz + a]);
            for (int64_t m = 0; m < mg; ++m) {
              A* yo = acc.data() + (n * M + m0 + m) * osz;
              const T* wk = wp + (c * mg + m) * ksz;
              for (int64_t k = 0; k < ksz; ++k)
                if (dest[k] >= 0) yo[dest[k]] += xv * A(wk[k]);
            }
          }
      }
      T* yp = y.data<T>();
      for (int64_t i = 0; i < y.numel(); ++i) {
        A v = acc[i];
        if (b) v += A(b->data<T>()[(i / osz) % M]);
        yp[i] = T(v);
      }
    });
  }

 private:
  ConvTransposeAttrs attrs_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(ConvTranspose, 1, 28, ConvTransposeKernel);

}  // namespace polyinfer::cpu
