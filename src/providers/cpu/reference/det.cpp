// Det: determinants of square matrices over the trailing two axes.
#include <cmath>
#include <utility>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Gaussian elimination with partial pivoting, in double so that float inputs keep their
// precision through the elimination.
double determinant(std::vector<double>& a, int64_t n) {
  double det = 1.0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t piv = col;
    for (int64_t r = col + 1; r < n; ++r)
      if (std::abs(a[r * n + col]) > std::abs(a[piv * n + col])) piv = r;
    if (a[piv * n + col] == 0.0) return 0.0;
    if (piv != col) {
      for (int64_t c = 0; c < n; ++c) std::swap(a[piv * n + c], a[col * n + c]);
      det = -det;
    }
    const double p = a[col * n + col];
    det *= p;
    for (int64_t r = col + 1; r < n; ++r) {
      const double f = a[r * n + col] / p;
      for (int64_t c = col; c < n; ++c) a[r * n + c] -= f * a[col * n + c];
    }
  }
  return det;
}

class DetKernel final : public Kernel {
 public:
  explicit DetKernel(const KernelInfo& info) : who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() >= 2 && x.dim(-1) == x.dim(-2), ShapeMismatch, who_,
             ": input must be [*, M, M], got ", x.describe());
    const int64_t n = x.dim(-1);
    const Shape ys(x.shape().begin(), x.shape().end() - 2);
    Tensor& y = ctx.output(0, x.dtype(), ys);
    dispatch(FloatTypes{}, x.dtype(), "Det", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      std::vector<double> m(static_cast<size_t>(n * n));
      for (int64_t b = 0; b < y.numel(); ++b) {
        for (int64_t i = 0; i < n * n; ++i) m[i] = double(compute_t<T>(xp[b * n * n + i]));
        yp[b] = T(compute_t<T>(determinant(m, n)));
      }
    });
  }

 private:
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(Det, 11, 28, DetKernel);

}  // namespace polyinfer
