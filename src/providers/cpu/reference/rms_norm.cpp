// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * scale.
//
// Follows the operator's function body: the statistics run in stash_type precision, the
// normalized value is cast back to X's dtype, and only then multiplied by scale (whose dtype is
// Y's). Scale broadcasts unidirectionally onto X.
#include <cmath>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class RmsNormKernel final : public Kernel {
 public:
  explicit RmsNormKernel(const KernelInfo& info)
      : axis_(info.attr_int("axis", -1)),
        eps_(info.attr_float("epsilon", 1e-5f)),
        stash_(static_cast<DType>(info.attr_int("stash_type", 1))),
        who_(info.node().label()) {
    if (stash_ != DType::Float32 && stash_ != DType::Float64)
      info.unsupported("stash_type=" + std::to_string(static_cast<int>(stash_)));
  }

  void run(KernelContext& ctx) override {
    const char* who = who_.c_str();
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    PI_CHECK(x.rank() >= 1, ShapeMismatch, who_, ": X must have rank >= 1, got ", x.describe());
    const int64_t axis = normalize_axis(axis_, x.rank(), who);
    PI_CHECK(broadcast_shapes(scale.shape(), x.shape(), who) == x.shape(), ShapeMismatch, who_,
             ": scale ", scale.describe(), " does not broadcast onto X ", x.describe());
    const int64_t inner = shape_numel(Shape(x.shape().begin() + axis, x.shape().end()));
    const int64_t n = x.numel();

    // Stage one, in stash precision: the normalized values, rounded to X's dtype.
    std::vector<double> normalized(static_cast<size_t>(n));
    dispatch(FloatTypes{}, x.dtype(), who, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto stage_one = [&](auto stag) {
        using A = typename decltype(stag)::type;
        const T* xp = x.data<T>();
        for (int64_t o = 0; inner > 0 && o < n / inner; ++o) {
          const T* xr = xp + o * inner;
          A sq = 0;
          for (int64_t i = 0; i < inner; ++i) {
            const A v = A(compute_t<T>(xr[i]));
            sq += v * v;
          }
          const A rms = std::sqrt(sq / A(inner) + A(eps_));
          for (int64_t i = 0; i < inner; ++i) {
            const T rounded = T(compute_t<T>(A(compute_t<T>(xr[i])) / rms));
            normalized[o * inner + i] = double(compute_t<T>(rounded));
          }
        }
      };
      if (stash_ == DType::Float64) {
        stage_one(Tag<double>{});
      } else {
        stage_one(Tag<float>{});
      }
    });

    // Stage two: multiply by the broadcast scale in Y's (scale's) dtype.
    Tensor& y = ctx.output(0, scale.dtype(), x.shape());
    dispatch(FloatTypes{}, scale.dtype(), who, [&](auto tag) {
      using V = typename decltype(tag)::type;
      using C = compute_t<V>;
      const V* sp = scale.data<V>();
      V* yp = y.data<V>();
      const std::vector<int64_t> strides[1] = {broadcast_strides(scale.shape(), x.shape())};
      for_each_broadcast(x.shape(), strides,
                         [&](int64_t i, int64_t s) { yp[i] = V(C(C(normalized[i]) * C(sp[s]))); });
    });
  }

 private:
  int64_t axis_;
  float eps_;
  DType stash_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(RMSNormalization, 23, 28, RmsNormKernel);

}  // namespace polyinfer
