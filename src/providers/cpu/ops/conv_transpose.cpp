// ConvTranspose: the gradient of Conv with respect to its input, computed by scattering each
// input element times the kernel into the output.
#include <algorithm>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/ops/conv_util.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {

ConvTransposeAttrs ConvTransposeAttrs::parse(const KernelInfo& info) {
  return {WindowAttrs::parse(info), info.attr_ints("output_padding"),
          info.attr_ints("output_shape")};
}

ConvTransposeGeometry conv_transpose_geometry(const ConvTransposeAttrs& a, const Shape& x,
                                              const Shape& w, const std::string& who) {
  PI_CHECK(x.size() >= 3 && w.size() == x.size(), ShapeMismatch, who, ": input ", shape_str(x),
           " and weight ", shape_str(w), " must be [N, C, D...] and [C, M/group, k...]");
  ConvTransposeGeometry g;
  g.group = a.window.group;
  g.N = x[0];
  g.C = x[1];
  g.M = w[1] * g.group;
  PI_CHECK(w[0] == g.C && g.C % g.group == 0, ShapeMismatch, who, ": weight ", shape_str(w),
           " does not match input channels ", g.C, " with group=", g.group);
  const size_t r = x.size() - 2;
  g.in.assign(x.begin() + 2, x.end());
  g.kernel.assign(w.begin() + 2, w.end());
  if (!a.window.kernel_shape.empty())
    PI_CHECK(a.window.kernel_shape == g.kernel, ShapeMismatch, who, ": kernel_shape ",
             shape_str(a.window.kernel_shape), " does not match weight ", shape_str(w));
  const auto fill = [&](const std::vector<int64_t>& v, size_t n, int64_t def, const char* name) {
    if (v.empty()) return std::vector<int64_t>(n, def);
    PI_CHECK(v.size() == n, InvalidModel, who, ": ", name, " has ", v.size(), " values, expected ",
             n);
    return v;
  };
  g.strides = fill(a.window.strides, r, 1, "strides");
  g.dilations = fill(a.window.dilations, r, 1, "dilations");
  const auto pads = fill(a.window.pads, 2 * r, 0, "pads");
  const auto outpad = fill(a.output_padding, r, 0, "output_padding");
  // output_shape may list only the spatial sizes or the whole output shape.
  std::vector<int64_t> oshape = a.output_shape;
  if (oshape.size() == r + 2) oshape.erase(oshape.begin(), oshape.begin() + 2);
  if (!oshape.empty())
    PI_CHECK(oshape.size() == r, InvalidModel, who, ": output_shape has ", oshape.size(),
             " values, expected ", r);
  const std::string& auto_pad = a.window.auto_pad;
  g.out.assign(r, 0);
  g.pad_begin.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    PI_CHECK(g.strides[i] >= 1 && g.dilations[i] >= 1 && g.kernel[i] >= 1, InvalidModel, who,
             ": strides, dilations and kernel sizes must be positive");
    const int64_t eff = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t full = g.strides[i] * (g.in[i] - 1) + outpad[i] + eff;
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (!oshape.empty() || same) {
      g.out[i] = !oshape.empty() ? oshape[i] : g.in[i] * g.strides[i];
      // An output larger than the full result is zero-extended at the end.
      const int64_t total = std::max<int64_t>(0, full - g.out[i]);
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad == "VALID") {
      g.out[i] = full;
    } else {
      PI_CHECK(pads[i] >= 0 && pads[i + r] >= 0, InvalidModel, who, ": pads must be >= 0");
      g.out[i] = full - pads[i] - pads[i + r];
      g.pad_begin[i] = pads[i];
    }
    PI_CHECK(g.out[i] >= 0, ShapeMismatch, who, ": padding leaves a negative output size");
  }
  return g;
}

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

PI_CPU_KERNEL(ConvTranspose, 1, 22, ConvTransposeKernel);

}  // namespace polyinfer::cpu
