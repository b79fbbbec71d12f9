// ConvTranspose: the gradient of Conv with respect to its input, computed by scattering each
// input element times the kernel into the output.
#include <algorithm>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/ops/conv_util.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const KernelInfo& info)
      : attrs_(WindowAttrs::parse(info)),
        output_padding_(info.attr_ints("output_padding")),
        output_shape_(info.attr_ints("output_shape")),
        who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    PI_CHECK(w.dtype() == x.dtype(), InvalidArgument, who_, ": X and W dtypes differ");
    PI_CHECK(x.rank() >= 3 && w.rank() == x.rank(), ShapeMismatch, who_, ": input ",
             shape_str(x.shape()), " and weight ", shape_str(w.shape()),
             " must be [N, C, D...] and [C, M/group, k...]");
    const int64_t group = attrs_.group;
    const int64_t N = x.dim(0), C = x.dim(1), mg = w.dim(1), M = mg * group;
    PI_CHECK(w.dim(0) == C && C % group == 0, ShapeMismatch, who_, ": weight ",
             shape_str(w.shape()), " does not match input channels ", C, " with group=", group);
    const size_t r = static_cast<size_t>(x.rank() - 2);
    const Shape in(x.shape().begin() + 2, x.shape().end());
    const Shape kernel(w.shape().begin() + 2, w.shape().end());
    if (!attrs_.kernel_shape.empty())
      PI_CHECK(attrs_.kernel_shape == kernel, ShapeMismatch, who_, ": kernel_shape ",
               shape_str(attrs_.kernel_shape), " does not match weight ", shape_str(w.shape()));
    const auto fill = [&](const std::vector<int64_t>& v, size_t n, int64_t def, const char* name) {
      if (v.empty()) return std::vector<int64_t>(n, def);
      PI_CHECK(v.size() == n, InvalidModel, who_, ": ", name, " has ", v.size(),
               " values, expected ", n);
      return v;
    };
    const auto strides = fill(attrs_.strides, r, 1, "strides");
    const auto dil = fill(attrs_.dilations, r, 1, "dilations");
    const auto pads = fill(attrs_.pads, 2 * r, 0, "pads");
    const auto outpad = fill(output_padding_, r, 0, "output_padding");
    // output_shape may list only the spatial sizes or the whole output shape.
    std::vector<int64_t> oshape = output_shape_;
    if (oshape.size() == r + 2) oshape.erase(oshape.begin(), oshape.begin() + 2);
    if (!oshape.empty())
      PI_CHECK(oshape.size() == r, InvalidModel, who_, ": output_shape has ", oshape.size(),
               " values, expected ", r);

    Shape out(r);
    std::vector<int64_t> pb(r);
    for (size_t i = 0; i < r; ++i) {
      PI_CHECK(strides[i] >= 1 && dil[i] >= 1 && kernel[i] >= 1, InvalidModel, who_,
               ": strides, dilations and kernel sizes must be positive");
      const int64_t eff = (kernel[i] - 1) * dil[i] + 1;
      const int64_t full = strides[i] * (in[i] - 1) + outpad[i] + eff;
      const bool same = attrs_.auto_pad == "SAME_UPPER" || attrs_.auto_pad == "SAME_LOWER";
      if (!oshape.empty() || same) {
        out[i] = !oshape.empty() ? oshape[i] : in[i] * strides[i];
        // An output larger than the full result is zero-extended at the end.
        const int64_t total = std::max<int64_t>(0, full - out[i]);
        pb[i] = attrs_.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      } else if (attrs_.auto_pad == "VALID") {
        out[i] = full;
        pb[i] = 0;
      } else {
        PI_CHECK(pads[i] >= 0 && pads[i + r] >= 0, InvalidModel, who_, ": pads must be >= 0");
        out[i] = full - pads[i] - pads[i + r];
        pb[i] = pads[i];
      }
      PI_CHECK(out[i] >= 0, ShapeMismatch, who_, ": padding leaves a negative output size");
    }

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
  WindowAttrs attrs_;
  std::vector<int64_t> output_padding_, output_shape_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(ConvTranspose, 1, 22, ConvTransposeKernel);

}  // namespace polyinfer::cpu
