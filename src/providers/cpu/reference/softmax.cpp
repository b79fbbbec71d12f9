// Softmax, LogSoftmax and Hardmax.
//
// Up to version 11 these ops flatten the input to 2-D at `axis` (default 1) and normalize each
// row of prod(shape[axis:]) elements; from version 13 they normalize along the single axis
// `axis` (default -1). Both are a walk over (outer, n, inner) blocks: the old form is the new
// one with n = prod(shape[axis:]) and inner = 1.
#include <cmath>
#include <limits>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"
#include "runtime/kernel_checks.h"

namespace polyinfer {
namespace {

enum class SoftmaxOp { Softmax, LogSoftmax, Hardmax };

template <SoftmaxOp Op> class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const KernelInfo& info)
      : label_(info.node().label()),
        flatten_(info.opset() < 13),
        axis_(info.attr_int("axis", info.opset() < 13 ? 1 : -1)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int rank = x.rank();
    const Shape& s = x.shape();
    const int64_t axis = normalize_axis(axis_, rank, label_.c_str());
    const SoftmaxLayout l = softmax_layout(s, axis, flatten_);
    const int64_t outer = l.outer, n = l.n, inner = l.inner;
    Tensor& y = ctx.output(0, x.dtype(), s);
    dispatch(FloatTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i)
          normalize(in + o * n * inner + i, out + o * n * inner + i, n, inner);
    });
  }

 private:
  // Normalizes the n elements p[0], p[stride], ... into q.
  template <class T> static void normalize(const T* p, T* q, int64_t n, int64_t stride) {
    using C = compute_t<T>;
    if (n == 0) return;
    double mx = -std::numeric_limits<double>::infinity();
    int64_t arg = 0;
    for (int64_t k = 0; k < n; ++k) {
      const double v = static_cast<C>(p[k * stride]);
      if (v > mx || (std::isnan(v) && !std::isnan(mx))) {
        mx = v;
        arg = k;
      }
    }
    if constexpr (Op == SoftmaxOp::Hardmax) {
      for (int64_t k = 0; k < n; ++k) q[k * stride] = static_cast<C>(k == arg ? 1 : 0);
    } else {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<C>(p[k * stride]) - mx);
      if constexpr (Op == SoftmaxOp::Softmax) {
        for (int64_t k = 0; k < n; ++k)
          q[k * stride] = static_cast<C>(std::exp(static_cast<C>(p[k * stride]) - mx) / sum);
      } else {
        const double lse = mx + std::log(sum);
        for (int64_t k = 0; k < n; ++k)
          q[k * stride] = static_cast<C>(static_cast<C>(p[k * stride]) - lse);
      }
    }
  }

  std::string label_;
  bool flatten_;
  int64_t axis_;
};

using SoftmaxOpKernel = SoftmaxKernel<SoftmaxOp::Softmax>;
using LogSoftmaxKernel = SoftmaxKernel<SoftmaxOp::LogSoftmax>;
using HardmaxKernel = SoftmaxKernel<SoftmaxOp::Hardmax>;

}  // namespace

// Versions 1 and 11 differ only in the accepted axis range (negative axes from 11 on); 13 changed
// the meaning of axis, which the kernel reads from the opset. Unchanged since 13.
PI_CPU_KERNEL(Softmax, 1, 28, SoftmaxOpKernel);
PI_CPU_KERNEL(LogSoftmax, 1, 28, LogSoftmaxKernel);
PI_CPU_KERNEL(Hardmax, 1, 28, HardmaxKernel);

}  // namespace polyinfer
